"""Words for the keys of a results dict: table headers, legends and axis labels say what a number
is, not what it is called in ``results.json``.

>>> metric_words("kmeans.ari"), metric_words("mia.shokri.auc"), metric_words("displacement")
('KMeans: ARI vs non-private', 'Shokri: attack AUC', 'mean displacement ‖z − x‖')
>>> key_words("tpr_at_1pct_fpr"), key_words("some_new_key")
('TPR at 1 % FPR', 'some new key')
"""

from __future__ import annotations

from dpaudit.attack.registry import attack_words

__all__ = ["CLUSTERER_WORDS", "KEY_WORDS", "UTILITY_WORDS", "key_words", "metric_words"]

CLUSTERER_WORDS = {"kmeans": "KMeans", "affinity-propagation": "AffinityPropagation", "dbscan": "DBSCAN",
                   "release": "the release's partition"}
UTILITY_WORDS = {
    "ari": "ARI vs non-private", "ami": "AMI vs non-private", "ari_truth": "ARI vs ground truth",
    "ami_truth": "AMI vs ground truth", "silhouette": "silhouette", "calinski_harabasz": "Calinski–Harabasz",
    "davies_bouldin": "Davies–Bouldin", "nicv": "NICV", "f_measure": "F-measure vs ground truth",
    "n_clusters": "clusters found",
}
KEY_WORDS = {
    # membership attacks
    "advantage": "advantage (TPR − FPR)", "advantage_same_data": "best advantage on the scored data (optimistic)",
    "auc": "attack AUC", "tpr_at_1pct_fpr": "TPR at 1 % FPR", "tpr_at_0_1pct_fpr": "TPR at 0.1 % FPR",
    "tpr_at_0_01pct_fpr": "TPR at 0.01 % FPR",
    "epsilon_lower_bound": "certified ε lower bound", "advantage_ceiling": "advantage ceiling (e^ε−1)/(e^ε+1)",
    # reconstruction
    "success_rate": "recovered within r", "median_error": "median error", "baseline_success_rate":
        "prior-only baseline", "linkage_success_rate": "nearest-neighbour linkage", "radius": "success radius r",
    # ε estimation
    "ceiling": "sample-size ceiling (largest certifiable ε)", "samples": "certification releases per dataset",
    "selection_samples": "selection releases per dataset and pair", "selection_samples_total":
        "selection releases in all", "confidence": "confidence", "verdict": "verdict", "point_estimate":
        "point estimate ln(p/q)", "raw_bound": "bound before scaling", "elapsed_seconds": "elapsed (s)",
    "seed": "seed", "mechanism": "mechanism", "records": "records used", "records_rule": "records",
    # sweep metrics
    "displacement": "mean displacement ‖z − x‖", "epsilon_ceiling": "sample-size ceiling",
    # a claim in a notion (its trade-off curve)
    "mu_lower_bound": "certified μ lower bound", "curve_below_claim": "share of cells below the claimed curve",
}


def key_words(key: str) -> str:
    """Words for a results key (unknown keys: underscores become spaces)."""
    return KEY_WORDS.get(key) or UTILITY_WORDS.get(key) or key.replace("_", " ")


def metric_words(name: str) -> str:
    """Words for a sweep metric name: ``<clusterer>.<metric>``, ``mia.<attack>.<metric>``, or a plain key."""
    parts = name.split(".")
    if parts[0] == "mia" and len(parts) == 3:
        return f"{attack_words(parts[1])}: {'attack AUC' if parts[2] == 'auc' else key_words(parts[2])}"
    if len(parts) == 2:
        return f"{CLUSTERER_WORDS.get(parts[0], parts[0])}: {UTILITY_WORDS.get(parts[1], key_words(parts[1]))}"
    return key_words(name)
