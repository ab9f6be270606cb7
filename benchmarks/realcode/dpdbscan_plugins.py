"""QiuTedYuan/DpDBSCAN (DP-DBSCAN with spans, the reference code of its paper) as a plain plug-in.

The repository's ``main.py`` is a script; this wrapper runs its DP-DBSCAN block as a function, line for line:
the grid over ``low, high = pts.get_ranges()`` (as ``main.py`` does), the Laplace noise generator seeded from
``seed``, the O(n) sparse histogram when ``n <= num_grids / 2`` (else the O(|X|) one), the noisy neighbourhood
sums, the core cells above ``min_pts + noise_bound``, merged into spans.  Parameters are ``main.py``'s for
moons and blobs: α = 0.2, MinPts = 7, grid scale 1, β = 0.5.

The release is the spans, read at public points: for each point of a 21 × 21 lattice over the public box
[-1, 1]², 1 when it falls in a core cell, else 0 (post-processing of the spans).  ``seed`` comes from
dpaudit's generator.  Records are clipped to the box.
"""

import numpy as np

ALPHA, MIN_PTS, GRID_SCALE, BETA = 0.2, 7, 1.0, 0.5
BOX = (-1.0, 1.0)
LATTICE = np.array([[a, b] for a in np.linspace(*BOX, 21) for b in np.linspace(*BOX, 21)])


def main_py_spans(X, epsilon, seed):
    """main.py's DP-DBSCAN block (``RUN_DP_DBSCAN``), for the Laplace noise: the span labels and the grid."""
    from datatype_grid import GridSpace
    from datatype_point import Points
    from histogram import GridLabels, Histogram, NoisyHistogram, SumHistogram
    from noise import get_noise_gen

    pts = Points(X)
    n, dim = pts.get_size(), pts.get_dim()
    low, high = pts.get_ranges()
    noise_gen = get_noise_gen("Laplace", seed, 1, epsilon, 0.0)
    grid_space = GridSpace(dim, low, high, ALPHA, GRID_SCALE)
    num_grids = grid_space.num_grids
    grid_counts = Histogram.build_from_pts(pts, grid_space)
    if n <= num_grids / 2.:
        noise_bound = noise_gen.max_sum_noise(BETA, num_grids, grid_space.kappa)
        if num_grids > 2. * n:
            T = 1 / epsilon * np.log(num_grids / n)
        else:
            T = noise_bound / grid_space.kappa
        noise_bound += T * grid_space.kappa
        noisy_counts = NoisyHistogram.linear_time_build(grid_counts, noise_gen, num_grids, T)
    else:
        noisy_counts = NoisyHistogram.naive_build(grid_counts, noise_gen, num_grids)
        noise_bound = noise_gen.max_sum_noise(BETA, num_grids, grid_space.kappa)
    noisy_sum = SumHistogram.build_from_counts(noisy_counts, grid_space)
    grid_labels = GridLabels.label_high_freq(noisy_sum, MIN_PTS + noise_bound)
    grid_labels.merge_neighbors(grid_space)
    return dict(grid_labels.items()), grid_space


def dp_dbscan(X, epsilon, rng):
    """The spans of main.py's DP-DBSCAN, as a 0/1 vector over a public 21 × 21 lattice of the box."""
    X = np.clip(np.asarray(X, dtype=float), *BOX)
    labels, grid_space = main_py_spans(X, epsilon, int(rng.integers(2**31 - 1)))
    covered = np.zeros(len(LATTICE))
    for i, point in enumerate(LATTICE[:, :X.shape[1]]):
        cell = grid_space.get_grid_of_point(point)
        covered[i] = float(grid_space.is_valid(cell) and grid_space.encode_as_key(cell) in labels)
    return covered
