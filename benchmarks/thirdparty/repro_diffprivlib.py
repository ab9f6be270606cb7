"""diffprivlib 0.6.6 KMeans: an empty cluster gets no noise — reproduced with numpy and diffprivlib only.

    benchmarks/.venvs/thirdparty/bin/python benchmarks/thirdparty/repro_diffprivlib.py [--fits 10000]

``KMeans._update_centers`` skips a cluster that owns no record (``if cluster not in labels:
continue``): no noise is drawn for it and it keeps its start centre, which ``_init_centers`` places
inside the box (at least ``cluster_proximity`` from each face, the centres pairwise
``2·cluster_proximity`` apart).  With k = 2, d = 1, bounds (0, 1) the start centres are ≥ 0.125
and ≥ 0.25 apart, so one of them is ≥ 0.375.  D = 10 records at 0: the centre nearer 0 owns them
all, the other never owns a record and stays ≥ 0.375, so "every centre < 0.375" never happens.
D′ = D plus one record at 1: that record joins the other cluster, which is noised, and the event
happens in about 19 % of fits.  Fit i on D uses ``random_state=i``, on D′ ``random_state=10**6 + i``.
The bound is the textbook two-sided one: ε ≥ ln(p_lo/q_hi), p_lo and q_hi Clopper–Pearson limits
at α/2 each (95 % together).  The script also prints where the skip is in the installed file.
"""

import argparse
import inspect
import time
import warnings

import diffprivlib
import numpy as np
from diffprivlib.models import KMeans
from scipy.stats import beta


def hits(X, offset, fits):
    count = 0
    for i in range(fits):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            centres = KMeans(n_clusters=2, epsilon=1.0, bounds=(0, 1), random_state=offset + i).fit(X).cluster_centers_
        count += bool(np.all(centres < 0.375))
    return count


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fits", type=int, default=10_000, help="fits per dataset")
    args = ap.parse_args()
    lines, first = inspect.getsourcelines(KMeans._update_centers)
    skip = next(first + i for i, line in enumerate(lines) if "if cluster not in labels" in line)
    print(f"diffprivlib {diffprivlib.__version__}: models/k_means.py, KMeans._update_centers at line {first}; "
          f"the skip 'if cluster not in labels: continue' at lines {skip}-{skip + 1}")
    D = np.zeros((10, 1))
    D2 = np.vstack([D, [[1.0]]])
    t0 = time.perf_counter()
    q, p = hits(D, 0, args.fits), hits(D2, 10**6, args.fits)
    n = args.fits
    p_lo = beta.ppf(0.025, p, n - p + 1) if p > 0 else 0.0
    q_hi = beta.ppf(0.975, q + 1, n - q) if q < n else 1.0
    print(f"every centre < 0.375: D (10 records at 0) {q:,}/{n:,} fits, D' (plus one at 1) {p:,}/{n:,} fits "
          f"({time.perf_counter() - t0:.0f} s)")
    print(f"p_lo = {p_lo:.4f}, q_hi = {q_hi:.6f}: epsilon >= ln(p_lo/q_hi) = {np.log(p_lo / q_hi):.2f} at 95 % "
          f"(claim: 1)")


if __name__ == "__main__":
    main()
