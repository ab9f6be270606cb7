"""Third-party "differentially private" k-means functions, written the way outside code is written.

Every function here is a plain plug-in ``fn(X, epsilon, rng) -> centroids`` (an array of k
rows, one per centre) that knows nothing of dpaudit: it uses numpy (and diffprivlib for the
two ``diffprivlib_*`` functions) and draws every random number from the
``numpy.random.Generator`` it is given.  Each one claims ε-DP under add/remove neighbours at
the ``epsilon`` it is called with.  ``benchmarks/bench_thirdparty.py`` audits them through
``dpaudit estimate-eps --mechanism benchmarks/thirdparty/functions.py:<name> --output
centroids --python <their interpreter>``, in an interpreter that has only numpy, diffprivlib
0.6.6 and scikit-learn < 1.8 installed.  This file is self-contained on purpose: a third
party's file imports nothing of the project that audits it.

Correct (true ε ≤ the claim):

* ``their_kmeans_honest`` — a copy of ``examples/their_code.py``'s honest k-means;
* ``dplloyd_correct`` — DPLloyd with noise for every cluster in every iteration.

Buggy (true ε above the claim; see each docstring):

* ``diffprivlib_kmeans_bounded`` — IBM diffprivlib's KMeans with a public box: an empty
  cluster gets no noise and keeps its start centre (true ε = ∞);
* ``diffprivlib_kmeans_unbounded`` — the same without ``bounds``: the box comes from the data
  (true ε = ∞);
* ``their_kmeans`` — a copy of ``examples/their_code.py``'s k-means (true ε = ∞);
* ``dplloyd_empty_skip`` — DPLloyd that skips empty clusters (true ε = ∞);
* ``dplloyd_unclipped`` — DPLloyd that never clips its input (true ε = ∞);
* ``kmeans_noisy_centres_over_n`` — Lloyd, then Laplace noise on the centres for a "sensitivity
  of the mean" of 2d/n (true ε ≥ n·ε/4 on n records: unbounded).

The (ε, δ) Gaussian k-means with Google's ``dp_accounting`` are in ``gaussian_functions.py``.

Grid variants (k = 2, 3, 4; any dimension d): ``diffprivlib_kmeans_bounded_k{k}``,
``dplloyd_correct_k{k}``, ``dplloyd_empty_skip_k{k}``, ``dplloyd_unclipped_k{k}``; and
``dplloyd_correct_raises_empty`` (correct DPLloyd that refuses an empty dataset).
"""


import numpy as np

# --------------------------------------------------------------------------------------------
# IBM diffprivlib 0.6.6 (needs scikit-learn < 1.8)
# --------------------------------------------------------------------------------------------


def diffprivlib_kmeans_bounded(X, epsilon, rng):
    """diffprivlib's ``KMeans(n_clusters=2, bounds=(-1, 1))`` on the data clipped to [-1, 1].

    What is wrong (diffprivlib 0.6.6, ``diffprivlib/models/k_means.py``, ``KMeans._update_centers``):
    a cluster that owns no record is skipped (``if cluster not in labels: continue``): no noise is
    drawn for it and it keeps its start centre exactly.  The start centres are data-independent
    but confined to the inside of the box (``_init_centers``: at least ``cluster_proximity`` from
    each face, pairwise ``2·cluster_proximity`` apart), so whether a centre was ever noised shows
    in the release.  With k = 2, d = 1, bounds (0, 1): 10 records at 0 never put both centres
    below 0.375 (the start centres are ≥ 0.125 and 0.25 apart, and the empty one is never
    moved), the same 10 records plus one at 1 do in about 19 % of fits: true ε = ∞.  Here (d = 2,
    bounds (-1, 1)) the start centres lie in [-0.5, 0.5]², at least 1 apart, so one of them has a
    coordinate ≥ 0: 3 records at (-1, -1) put every centre in the negative quadrant in 3 of 2,000
    fits, the same plus one record at (1, 1) in 120 of 2,000.

    Lesser issues of the same code, for the record: the number of iterations is computed from the
    number of records (``_calc_iters(n_dims, n_samples)``, private under add/remove), and a
    dataset with fewer records than clusters raises ``ValueError``.
    """
    return _diffprivlib_bounded(X, epsilon, rng, 2)


def _diffprivlib_bounded(X, epsilon, rng, k):
    """diffprivlib's ``KMeans(n_clusters=k, bounds=(-1, 1))`` on the data clipped to [-1, 1]^d (any d)."""
    import warnings

    from diffprivlib.models import KMeans

    X = np.clip(np.asarray(X, dtype=float), -1.0, 1.0)
    model = KMeans(n_clusters=k, epsilon=epsilon, bounds=(-1.0, 1.0),
                   random_state=int(rng.integers(2**31 - 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        model.fit(X)
    return np.asarray(model.cluster_centers_, dtype=float)


def diffprivlib_kmeans_unbounded(X, epsilon, rng):
    """diffprivlib's ``KMeans(n_clusters=2)`` without ``bounds``, on the data clipped to [-1, 1].

    What is wrong: with no ``bounds`` diffprivlib takes them from the data (``np.min(X, axis=0)``,
    ``np.max(X, axis=0)`` in ``KMeans.fit``) and says so with a ``PrivacyLeakWarning``.  The
    bounds are not noised, and every centre lies inside them (start centres inside, noisy sums
    drawn from ``LaplaceBoundedDomain`` on ``[count·lower, count·upper]``), so the range of the
    released centres is the range of the data.  A black box can show it: D = records all at one
    point p gives bounds widened to ``p ± 5·10⁻⁶`` (``min_separation=1e-5``) and every centre
    within 10⁻⁵ of p in every fit; D′ = D plus one record elsewhere puts a centre there almost
    never.  Likewise for any D whose records stop short of a face of [-1, 1]: a record added
    beyond them lets centres go where they never go on D.  True ε = ∞ (and the empty-cluster bug
    of ``diffprivlib_kmeans_bounded`` is here too).
    """
    import warnings

    from diffprivlib.models import KMeans

    X = np.clip(np.asarray(X, dtype=float), -1.0, 1.0)
    model = KMeans(n_clusters=2, epsilon=epsilon, random_state=int(rng.integers(2**31 - 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        model.fit(X)
    return np.asarray(model.cluster_centers_, dtype=float)


# --------------------------------------------------------------------------------------------
# Copies of examples/their_code.py (a third party's file stands alone)
# --------------------------------------------------------------------------------------------

THEIR_K = 4
THEIR_BOX = (-15.0, 15.0)  # a public box for the README's blobs-2d data


def their_kmeans(X, epsilon, rng):
    """k = 4 centroids: 5 Lloyd steps from centres drawn out of the records, then Laplace(1/ε) noise.

    What is wrong: the start centres are records, the iterations are not noised, and noise of
    scale 1/ε is far too little for a centroid whose sensitivity is the data's diameter over the
    cluster size (unbounded: the data are not clipped).  True ε = ∞.
    """
    X = np.asarray(X, dtype=float)
    centres = X[rng.choice(len(X), size=THEIR_K, replace=False)]
    for _ in range(5):
        labels = np.argmin(((X[:, None, :] - centres[None]) ** 2).sum(axis=2), axis=1)
        centres = np.array([X[labels == j].mean(axis=0) if np.any(labels == j) else centres[j]
                            for j in range(THEIR_K)])
    return centres + rng.laplace(scale=1.0 / epsilon, size=centres.shape)


def their_kmeans_honest(X, epsilon, rng):
    """k = 4 centroids in the public box [-15, 15]^d: uniform start, 3 iterations of noisy sums and counts.

    Correct (ε-DP, add/remove): the start is data-independent; each iteration spends ε/3 on the
    Laplace mechanism over every cluster's sum and count with the L1 sensitivity of one clipped
    record, d·15 + 1; the rest is post-processing.
    """
    X = np.clip(np.asarray(X, dtype=float), *THEIR_BOX)
    lo, hi = THEIR_BOX
    centres = rng.uniform(lo, hi, size=(THEIR_K, X.shape[1]))
    steps = 3
    eps_step = epsilon / steps
    sensitivity = X.shape[1] * max(abs(lo), abs(hi)) + 1.0  # one record: |x|_1 in the sums plus 1 in the count
    for _ in range(steps):
        labels = np.argmin(((X[:, None, :] - centres[None]) ** 2).sum(axis=2), axis=1)
        for j in range(THEIR_K):
            members = X[labels == j]
            total = members.sum(axis=0) + rng.laplace(scale=sensitivity / eps_step, size=X.shape[1])
            count = len(members) + rng.laplace(scale=sensitivity / eps_step)
            if count > 1:
                centres[j] = np.clip(total / count, lo, hi)
    return centres


# --------------------------------------------------------------------------------------------
# DPLloyd (Blum, Dwork, McSherry & Nissim 2005; Su, Cao, Li, Bertino & Jin 2016) and variants
# --------------------------------------------------------------------------------------------

K = 2
ITERATIONS = 5
BOX = (-1.0, 1.0)  # public: every coordinate of a record is assumed (or clipped) to lie in it


def _start_centres(d, k=K):
    """k data-independent start centres on the box's diagonal, evenly spaced: for k = 2 (-0.5, …, -0.5)
    and (0.5, …, 0.5); for k = 3 (-2/3, …), (0, …), (2/3, …)."""
    lo, hi = BOX
    return np.array([[lo + (j + 0.5) * (hi - lo) / k] * d for j in range(k)], dtype=float)


def _dplloyd(X, epsilon, rng, k=K, *, clip=True, skip_empty=False):
    """DPLloyd with k centres (see ``dplloyd_correct``); ``clip=False`` / ``skip_empty=True`` are the bugs
    of ``dplloyd_unclipped`` / ``dplloyd_empty_skip``.  Draws its noise in the same order for every k."""
    lo, hi = BOX
    X = np.asarray(X, dtype=float)
    if clip:
        X = np.clip(X, lo, hi)
    d = X.shape[1]
    centres = _start_centres(d, k)
    scale = (d + 1.0) / (epsilon / ITERATIONS)
    for _ in range(ITERATIONS):
        labels = _nearest(X, centres)
        for j in range(k):
            members = X[labels == j]
            if skip_empty and len(members) == 0:
                continue  # "nothing to release for an empty cluster"
            total = members.sum(axis=0) + rng.laplace(scale=scale, size=d)
            count = len(members) + rng.laplace(scale=scale)
            centre = total / max(count, 1.0)
            centres[j] = np.clip(centre, lo, hi) if clip else centre
    return centres


def _nearest(X, centres):
    """Index of the nearest centre of every record (ties to the lower index; none for no record)."""
    if len(X) == 0:
        return np.zeros(0, dtype=int)
    return np.argmin(((X[:, None, :] - centres[None]) ** 2).sum(axis=2), axis=1)


def dplloyd_correct(X, epsilon, rng):
    """DPLloyd: K = 2 centres, 5 iterations, noisy sums and counts for every cluster in every iteration.

    Public: the box [-1, 1]^d (records are clipped into it), K, the iterations T = 5, d.  The start
    centres are fixed points of the box's diagonal (data-independent).  Iteration t assigns every
    record to its nearest current centre, then for EVERY cluster j (empty or not) draws
    ``S_j = sum of its records + Lap(b)^d`` and ``C_j = its count + Lap(b)`` with
    ``b = (d + 1) / (ε/T)``, and moves centre j to ``clip(S_j / max(C_j, 1), -1, 1)``.

    Privacy (ε-DP, add/remove): adding or removing one record x changes one cluster's sum by x and
    its count by 1 and nothing else of the iteration's statistics; after clipping ‖x‖₁ ≤ d, so
    the L1 sensitivity of the vector of all K sums and counts is d + 1, and Laplace noise of scale
    (d + 1)/(ε/T) on every entry makes iteration t (ε/T)-DP given the current centres.  The
    centres are post-processing of earlier noisy statistics (and of public start points), so the
    T iterations compose adaptively to T·ε/T = ε; the released centres are post-processing.  No
    record count is used except through noisy counts; an empty dataset is handled like any other.
    """
    return _dplloyd(X, epsilon, rng, K)



def dplloyd_empty_skip(X, epsilon, rng):
    """DPLloyd as ``dplloyd_correct`` but an empty cluster is skipped: no noise, its centre unchanged.

    What is wrong: the same as diffprivlib's ``_update_centers``.  Whether a cluster was ever
    noised is data-dependent and shows in the release: a centre that never owned a record is
    released exactly at its start point (-0.5, …) or (0.5, …), a point mass.  On D = records all
    nearer (-0.5, …) than (0.5, …) (e.g. all at (-1, …, -1)) the second centre is often exactly
    (0.5, …, 0.5); on D′ = D plus a record at (1, …, 1), which joins that cluster in the first
    iteration, it never is (its centre is noised, a continuous value).  True ε = ∞.
    """
    return _dplloyd(X, epsilon, rng, K, skip_empty=True)



def dplloyd_unclipped(X, epsilon, rng):
    """DPLloyd as ``dplloyd_correct`` with the noise calibrated for [-1, 1]^d, but nothing is clipped.

    What is wrong: the noise scale (d + 1)/(ε/T) is right only for records in [-1, 1]^d (the
    author had scaled data in mind), yet the function takes any records and clips neither them nor
    the released means, so one record x moves its cluster's sum by ‖x‖₁, without bound.  A record
    at (1000, …, 1000) puts its cluster's released centre near 1000/C, where no dataset without it
    puts one.  True ε = ∞ (a record x costs about (ε/T)·(‖x‖₁ + 1)/(d + 1) per iteration; inside
    blobs-2d's box [-15, 15]² that is ≈ 2.1 per iteration, and the final centres show mostly the
    last iteration, so a record inside that box is hard to certify above 1; one farther out is not).
    """
    return _dplloyd(X, epsilon, rng, K, clip=False)



def kmeans_noisy_centres_over_n(X, epsilon, rng):
    """Lloyd's k-means (K = 2, 5 iterations, no noise), then Laplace noise on each final centre.

    The author's reasoning: "a centre is a mean of records in [-1, 1]^d; one record changes a mean
    of n records by at most 2/n per coordinate, so its L1 sensitivity is 2d/n" — noise of scale
    2d/(n·ε) per coordinate.  What is wrong: a centre is the mean of its cluster, not of all n
    records; a single record can be a whole cluster (or pull records from one cluster to the
    other).  On D = n records at (-1, …, -1), the second centre never owns a record and stays at
    its start (0.5, …, 0.5); D′ = D plus a record at (1, …, 1) makes that record its own cluster,
    moving that centre by d/2 in L1 against noise of scale about 2d/(n·ε): privacy loss about
    n·ε/4 there, so true ε ≥ n·ε/4 on datasets of n records (7.5 at n = 30, ε = 1) — unbounded.
    """
    lo, hi = BOX
    X = np.clip(np.asarray(X, dtype=float), lo, hi)
    n, d = X.shape
    centres = _start_centres(d)
    for _ in range(ITERATIONS):
        labels = _nearest(X, centres)
        for j in range(K):
            if np.any(labels == j):
                centres[j] = X[labels == j].mean(axis=0)
    sensitivity = d * (hi - lo) / max(n, 1)
    return centres + rng.laplace(scale=sensitivity / epsilon, size=centres.shape)



def dplloyd_correct_raises_empty(X, epsilon, rng):
    """``dplloyd_correct`` that refuses an empty dataset (``ValueError``), as much real code does.

    Correct (ε-DP, add/remove) on its domain, the non-empty datasets: on every non-empty dataset it
    is ``dplloyd_correct``.  The refusal depends only on whether there is any record at all, which
    an auditor should read as the code's domain (n ≥ 1), not as a leak.
    """
    if len(X) == 0:
        raise ValueError("DPLloyd needs at least one record")
    return dplloyd_correct(X, epsilon, rng)


# --------------------------------------------------------------------------------------------
# Grid variants: the same code at k = 2, 3, 4 (module-level names, so ``file.py:name`` finds them)
# --------------------------------------------------------------------------------------------

GRID_KS = (2, 3, 4)


def _variant(base, k, impl):
    """A plain ``fn(X, epsilon, rng)`` named ``<base>_k<k>``: ``impl`` at k clusters."""
    def fn(X, epsilon, rng):
        return impl(X, epsilon, rng, k)

    fn.__name__ = fn.__qualname__ = f"{base}_k{k}"
    fn.__doc__ = f"``{base}`` with k = {k} clusters (any dimension d); see ``{base}``."
    return fn


_GRID_IMPLS = {
    "diffprivlib_kmeans_bounded": _diffprivlib_bounded,
    "dplloyd_correct": lambda X, epsilon, rng, k: _dplloyd(X, epsilon, rng, k),
    "dplloyd_empty_skip": lambda X, epsilon, rng, k: _dplloyd(X, epsilon, rng, k, skip_empty=True),
    "dplloyd_unclipped": lambda X, epsilon, rng, k: _dplloyd(X, epsilon, rng, k, clip=False),
}
for _base, _impl in _GRID_IMPLS.items():
    for _k in GRID_KS:
        globals()[f"{_base}_k{_k}"] = _variant(_base, _k, _impl)
del _base, _impl, _k
