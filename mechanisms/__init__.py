"""Mechanisms under test: nD-Laplace, DP clustering from the seed papers,
non-private baselines and third-party adapters.

Examples
--------
>>> import dpaudit.mechanisms
>>> mech = dpaudit.mechanisms.get("ndlaplace", epsilon=1.0)
>>> mech.claim.epsilon, mech.claim.neighbours
(1.0, 'metric')
"""

from .base import (
    Centroids,
    InvalidInputError,
    Labels,
    Mechanism,
    Points,
    PrivacyClaim,
    PrivacyLeakWarning,
    Release,
    ReleaseBatch,
    Spans,
    Vector,
    release_many,
)
from .registry import (
    MechanismInfo,
    as_mechanism,
    available,
    describe,
    get,
    is_builtin,
    plugin,
    register_builtin,
    seal_builtins,
)

# ---- built-in catalogue (name -> implementation, claim kind, release kind) ----
register_builtin("ndlaplace", "dpaudit.mechanisms.ndlaplace:NDLaplace", release_kind="points", neighbours="metric",
         summary="nD-Laplace (planar Laplace in n dims): Gamma(d, 1/ε) radius, uniform direction",
         source="nD-Laplace thesis (van der Ende); Andrés et al. 2013")
register_builtin("ndlaplace-thesis", "dpaudit.mechanisms.ndlaplace:NDLaplaceThesis", release_kind="points",
         neighbours="metric",
         summary="FLAWED: thesis Algorithm 2 as printed (angle in [0, π/2], data box, resample at ε)",
         source="nD-Laplace thesis (van der Ende) Algorithm 1-2")
register_builtin("dpkccm", "dpaudit.mechanisms.dpkccm:DPKCCM", release_kind="centroids", neighbours="add-remove",
         summary="DP-KCCM k-means family (allocation/average budget, k or n·k clusters merged to k)",
         source="Ni et al. DP-KCCM; Su et al. 2016 DPLloyd-Impr")
register_builtin("dpdbscan", "dpaudit.mechanisms.dpdbscan:DPDBSCAN", release_kind="spans", neighbours="add-remove",
         summary="DP-DBSCAN spans: noisy grid histogram (naive or O(n) sparse), core cells, merged spans",
         source="Approximate DBSCAN under DP, Alg. 1-2")
register_builtin("dpdbscan-labels", "dpaudit.mechanisms.dpdbscan:DPDBSCANLabels", release_kind="labels",
         neighbours="add-remove",
         summary="FLAWED: DP-DBSCAN releasing the private points' labels (the paper's evaluation output)",
         source="the DP-DBSCAN paper §8 (evaluation, not a DP output)")
register_builtin("dbscan-labels", "dpaudit.mechanisms.dbscan_labels:DBSCANLabels", release_kind="labels",
         neighbours="replace",
         summary="DBSCAN on Laplace-noised pairwise distances, L1 sensitivity (n-1)*diam: private, useless",
         source="the DP-DBSCAN paper §1.3/§8.1 (the label-release approach it argues against)")
register_builtin("dpfcm", "dpaudit.mechanisms.dpfcm:DPFCM", release_kind="labels", neighbours="add-remove",
         summary="FLAWED: DP-FCM as published (noisy centres at full ε per iteration, Δf = d, labels released)",
         source="Yang, Zhang, Ismail DP-FCM §4.1, §5")
register_builtin("dpfcm-corrected", "dpaudit.mechanisms.dpfcm:DPFCMCorrected", release_kind="centroids",
         neighbours="add-remove",
         summary="DP-FCM corrected: ε split over iterations, noisy weighted sums and weights, centres only",
         source="Yang, Zhang, Ismail DP-FCM, accounting corrected")
register_builtin("kmeans", "dpaudit.mechanisms.baselines:KMeansBaseline", release_kind="centroids", neighbours="add-remove",
         summary="non-private scikit-learn KMeans (claim ε = ∞)", source="scikit-learn")
register_builtin("dbscan", "dpaudit.mechanisms.baselines:DBSCANBaseline", release_kind="labels", neighbours="add-remove",
         summary="non-private scikit-learn DBSCAN labels (claim ε = ∞)", source="scikit-learn")
register_builtin("affinity-propagation", "dpaudit.mechanisms.baselines:AffinityPropagationBaseline", release_kind="labels",
         neighbours="add-remove", summary="non-private scikit-learn AffinityPropagation labels (claim ε = ∞)",
         source="scikit-learn")
register_builtin("fcm", "dpaudit.mechanisms.baselines:FCMBaseline", release_kind="labels", neighbours="add-remove",
         summary="non-private fuzzy c-means labels (claim ε = ∞)", source="Bezdek FCM; the DP-FCM paper eqs. 5, 7")
register_builtin("identity", "dpaudit.mechanisms.baselines:Identity", release_kind="points", neighbours="add-remove",
         summary="releases the records unchanged (claim ε = ∞)", source="baseline")
register_builtin("diffprivlib-kmeans", "dpaudit.mechanisms.diffprivlib_adapter:DiffprivlibKMeans", release_kind="centroids",
         neighbours="add-remove", summary="IBM diffprivlib KMeans (optional extra: dpaudit[diffprivlib])",
         source="IBM diffprivlib 0.6 (Su et al. 2016 DPLloyd)")
register_builtin("laplace", "dpaudit.mechanisms.controls:LaplaceControl", release_kind="vector", neighbours="add-remove",
         summary="control: Laplace mechanism on a count or clipped sum (stated sensitivity)",
         source="Dwork et al. 2006; Dwork & Roth 2014 Thm 3.6")
register_builtin("gaussian", "dpaudit.mechanisms.controls:GaussianControl", release_kind="vector", neighbours="add-remove",
         summary="control: Gaussian mechanism (ε, δ), analytic (Balle & Wang) or classic calibration",
         source="Balle & Wang 2018; Dwork & Roth 2014 Thm A.1")

seal_builtins()

__all__ = [
    "Centroids",
    "InvalidInputError",
    "Labels",
    "Mechanism",
    "MechanismInfo",
    "Points",
    "PrivacyClaim",
    "PrivacyLeakWarning",
    "Release",
    "ReleaseBatch",
    "Spans",
    "Vector",
    "as_mechanism",
    "available",
    "describe",
    "get",
    "is_builtin",
    "plugin",
    "release_many",
]
