"""diffprivlib LinearRegression: the sum of squares of a feature is noised for the wrong bound.

    python benchmarks/reproductions/diffprivlib_linear_regression.py [--fits 1000] [--json PATH]

numpy, scipy and diffprivlib only (run it with the library's own interpreter).
``diffprivlib/models/linear_regression.py``, ``_construct_regression_obj``, calibrates the Laplace
noise of each feature's sum of squares with ``np.max(np.abs([bounds_X[0][i], bounds_X[0][i]])) ** 2`` —
the *lower* bound twice; the upper bound is never looked at.  ``fit`` first centres the data on a
noisy mean and shifts the bounds by it, so on a dataset whose records sit at the lower bound the
shifted lower bound is close to 0: the sum of squares gets almost no noise, the fitted objective is
nearly flat in the coefficient, and ``coef_`` is often astronomically large.  Replace one record by
one at the upper bound and the sum of squares is large: ``coef_`` stays moderate.

Pair (replace neighbours, bounds_X = (-1, 1), bounds_y = (0, 3), ε = 1): D = 10 records with x = -1,
y = 0; D' = D with its last record replaced by x = 1, y = 3.  Event: |coef_| > 100.  Fit i on D uses
``random_state=i``, on D' ``random_state=10**6 + i``.  The bound is the textbook two-sided one:
ε ≥ ln(p_lo/q_hi), p_lo and q_hi Clopper–Pearson limits at α/2 = 2.5 % each (95 % together).

Two controls show the line is the cause.  ``--control`` mirrors the pair: records at x = +1, one
replaced by x = -1; the shifted lower bound is then about -2, the noise is calibrated for 4 —
correctly, by accident — and the event is rare on both sides.  ``--patched`` runs the same pair with
that one line corrected to ``[bounds_X[0][i], bounds_X[1][i]]`` (the installed function's source,
edited and executed in its own module): the event becomes rare on D too.
"""

import argparse
import inspect
import json
import time
import warnings

import diffprivlib
import numpy as np
from diffprivlib.models import LinearRegression
from diffprivlib.models import linear_regression as module
from scipy.stats import beta

EPSILON, BOUNDS_X, BOUNDS_Y, N, THRESHOLD = 1.0, (-1.0, 1.0), (0.0, 3.0), 10, 100.0


def coef(X, y, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LinearRegression(epsilon=EPSILON, bounds_X=BOUNDS_X, bounds_y=BOUNDS_Y, random_state=seed).fit(X, y)
    return float(np.ravel(model.coef_)[0])


def hits(X, y, offset, fits):
    return sum(abs(coef(X, y, offset + i)) > THRESHOLD for i in range(fits))


def bound(k_fav, k_other, n):
    p_lo = beta.ppf(0.025, k_fav, n - k_fav + 1) if k_fav > 0 else 0.0
    q_hi = beta.ppf(0.975, k_other + 1, n - k_other) if k_other < n else 1.0
    return (float(np.log(p_lo / q_hi)) if p_lo > 0 else 0.0), float(p_lo), float(q_hi)


def the_line():
    lines, first = inspect.getsourcelines(module._construct_regression_obj)
    for i, text in enumerate(lines):
        if "bounds_X[0][i], bounds_X[0][i]" in text:
            return first + i, text.strip()
    return None, "(the line was not found: this version may have fixed it)"


def patch_the_line():
    """Replace the installed ``_construct_regression_obj`` by its own source with the one line corrected."""
    source = inspect.getsource(module._construct_regression_obj)
    fixed = source.replace("bounds_X[0][i], bounds_X[0][i]", "bounds_X[0][i], bounds_X[1][i]")
    if fixed == source:
        raise SystemExit("the line was not found: nothing to patch")
    exec(compile(fixed, module.__file__, "exec"), module.__dict__)  # noqa: S102 - the library's own code, one fix


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fits", type=int, default=1000, help="fits per dataset")
    ap.add_argument("--control", action="store_true", help="the mirrored pair (records at +1): no violation")
    ap.add_argument("--patched", action="store_true", help="the same pair with the line corrected")
    ap.add_argument("--json", default=None, help="write the counts and the bound here")
    args = ap.parse_args()
    line_no, line = the_line()
    if args.patched:
        patch_the_line()
    at, other = (1.0, -1.0) if args.control else (-1.0, 1.0)
    X = np.full((N, 1), at)
    y = np.zeros(N)
    X2, y2 = X.copy(), y.copy()
    X2[-1, 0], y2[-1] = other, 3.0
    t0 = time.perf_counter()
    k_D, k_D2 = hits(X, y, 0, args.fits), hits(X2, y2, 10**6, args.fits)
    eps, p_lo, q_hi = bound(k_D, k_D2, args.fits)
    where = f"diffprivlib/models/linear_regression.py:{line_no}" if line_no else "not found"
    print(f"diffprivlib {diffprivlib.__version__}: {where}: {line}" + ("  [corrected for this run]" if args.patched
                                                                          else ""))
    print(f"|coef_| > {THRESHOLD:g}: D ({N} records at x = {at:g}) {k_D}/{args.fits} fits, D' (one replaced by "
          f"x = {other:g}, y = 3) {k_D2}/{args.fits} fits ({time.perf_counter() - t0:.0f} s)")
    print(f"p_lo = {p_lo:.4f}, q_hi = {q_hi:.6f}: epsilon >= ln(p_lo/q_hi) = {eps:.2f} at 95 % (claim: {EPSILON:g})")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"library": f"diffprivlib {diffprivlib.__version__}", "relation": "replace",
                       "D": f"{N} records x = {at:g}, y = 0", "D_prime": f"D with one record replaced by x = {other:g}, y = 3",
                       "event": f"|coef_| > {THRESHOLD:g}", "favours": "D", "fits": args.fits,
                       "in_event_D": int(k_D), "in_event_D_prime": int(k_D2), "epsilon_lower_bound": eps,
                       "p_lo": p_lo, "q_hi": q_hi, "claim": EPSILON, "line": where, "line_text": line,
                       "control": bool(args.control), "patched": bool(args.patched),
                       "seconds": time.perf_counter() - t0}, fh, indent=1)


if __name__ == "__main__":
    main()
