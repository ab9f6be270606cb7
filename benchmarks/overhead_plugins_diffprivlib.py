"""A plug-in that loads IBM diffprivlib (and so scikit-learn) when imported: the start-up cost of a
heavy plug-in, for ``bench_plugin_overhead.py``."""

from diffprivlib.models import KMeans


def dp_kmeans(X, epsilon, rng):
    """diffprivlib's KMeans (k = 3, public bounds [-3, 3]); its centres."""
    model = KMeans(n_clusters=3, epsilon=epsilon, bounds=(-3.0, 3.0), random_state=int(rng.integers(2**31 - 1)))
    model.fit(X)
    return model.cluster_centers_
