"""diffprivlib KMeans: an empty cluster gets no noise — reproduced with numpy, scipy and the library only.

    python benchmarks/reproductions/diffprivlib_kmeans_empty_cluster.py [--fits 4000] [--json PATH] [--patched]

Run it with the library's own interpreter (diffprivlib 0.6.6, or the fork diffprivlib-fix 0.6.7,
which installs under the same name).  ``KMeans._update_centers`` skips a cluster that owns no
record (``if cluster not in labels: continue``): no noise is drawn for it and it keeps its start
centre, which ``_init_centers`` places inside the box (at least ``cluster_proximity`` from each
face, the centres pairwise ``2·cluster_proximity`` apart).  With k = 2, d = 1, bounds (0, 1) the
start centres are ≥ 0.125 and ≥ 0.25 apart, so one of them is ≥ 0.375.  D = 10 records at 0: the
centre nearer 0 owns them all, the other never owns a record and stays ≥ 0.375, so "every centre
< 0.375" never happens.  D' = D plus one record at 1 (add/remove neighbours): that record joins the
other cluster, which is noised, and the event happens in about 19 % of fits.  Fit i on D uses
``random_state=i``, on D' ``random_state=10**6 + i``.  The bound is the textbook two-sided one:
ε ≥ ln(p_lo/q_hi), p_lo and q_hi Clopper–Pearson limits at α/2 = 2.5 % each (95 % together).

``--patched`` runs the same pair with the two lines removed (the installed method's source, edited
and executed in its own module): an empty cluster is then noised like any other, and the event
happens on D too.
"""

import argparse
import inspect
import json
import textwrap
import time
import warnings

import diffprivlib
import numpy as np
from diffprivlib.models import KMeans
from diffprivlib.models import k_means as module
from scipy.stats import beta

EPSILON, THRESHOLD = 1.0, 0.375


def hits(X, offset, fits):
    count = 0
    for i in range(fits):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            centres = KMeans(n_clusters=2, epsilon=EPSILON, bounds=(0, 1), random_state=offset + i).fit(X).cluster_centers_
        count += bool(np.all(centres < THRESHOLD))
    return count


def bound(k_fav, k_other, n):
    p_lo = beta.ppf(0.025, k_fav, n - k_fav + 1) if k_fav > 0 else 0.0
    q_hi = beta.ppf(0.975, k_other + 1, n - k_other) if k_other < n else 1.0
    return (float(np.log(p_lo / q_hi)) if p_lo > 0 else 0.0), float(p_lo), float(q_hi)


def the_lines():
    lines, first = inspect.getsourcelines(KMeans._update_centers)
    for i, text in enumerate(lines):
        if "if cluster not in labels" in text:
            return first + i, text.strip() + " " + lines[i + 1].strip()
    return None, "(not found: this version may have fixed it)"


def patch_the_lines():
    """``KMeans._update_centers`` from its own source without the skip of an empty cluster."""
    source = textwrap.dedent(inspect.getsource(KMeans._update_centers))
    lines = source.splitlines()
    i = next((j for j, text in enumerate(lines) if "if cluster not in labels" in text), None)
    if i is None:
        raise SystemExit("the skip was not found: nothing to patch")
    del lines[i:i + 2]
    namespace = dict(module.__dict__)
    exec(compile("\n".join(lines) + "\n", module.__file__, "exec"), namespace)  # noqa: S102 - the library's code
    KMeans._update_centers = namespace["_update_centers"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fits", type=int, default=4000, help="fits per dataset")
    ap.add_argument("--patched", action="store_true", help="the same pair without the skip")
    ap.add_argument("--json", default=None, help="write the counts and the bound here")
    args = ap.parse_args()
    line_no, line = the_lines()
    if args.patched:
        patch_the_lines()
    D = np.zeros((10, 1))
    D2 = np.vstack([D, [[1.0]]])
    t0 = time.perf_counter()
    k_D, k_D2 = hits(D, 0, args.fits), hits(D2, 10**6, args.fits)
    eps, p_lo, q_hi = bound(k_D2, k_D, args.fits)
    where = f"diffprivlib/models/k_means.py:{line_no}-{line_no + 1}" if line_no else "not found"
    print(f"diffprivlib {diffprivlib.__version__}: {where}: {line}" + ("  [removed for this run]" if args.patched
                                                                          else ""))
    print(f"every centre < {THRESHOLD}: D (10 records at 0) {k_D:,}/{args.fits:,} fits, D' (plus one at 1) "
          f"{k_D2:,}/{args.fits:,} fits ({time.perf_counter() - t0:.0f} s)")
    print(f"p_lo = {p_lo:.4f}, q_hi = {q_hi:.6f}: epsilon >= ln(p_lo/q_hi) = {eps:.2f} at 95 % (claim: {EPSILON:g})")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"library": f"diffprivlib {diffprivlib.__version__}", "relation": "add-remove",
                       "D": "10 records at 0 (k = 2, d = 1, bounds (0, 1))", "D_prime": "D plus one record at 1",
                       "event": f"every centre < {THRESHOLD}", "favours": "D'", "fits": args.fits,
                       "in_event_D": int(k_D), "in_event_D_prime": int(k_D2), "epsilon_lower_bound": eps,
                       "p_lo": p_lo, "q_hi": q_hi, "claim": EPSILON, "line": where, "line_text": line,
                       "patched": bool(args.patched), "seconds": time.perf_counter() - t0}, fh, indent=1)


if __name__ == "__main__":
    main()
