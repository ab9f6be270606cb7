"""diffpriv-pure private_count: the noise is never negative, so the count is never under-reported — numpy,
scipy and the library only.

    python benchmarks/reproductions/diffpriv_pure_count.py [--fits 2000] [--json PATH] [--patched]

Run it with the library's own interpreter.  ``private_count(condition_count, epsilon)`` returns
``condition_count + geometric_noise(epsilon)``, and ``geometric_noise`` draws
``math.ceil(math.log(1.0 - u) / math.log(1.0 - p) - 1)`` with p = 1 − e^(−ε): a one-sided geometric
variable on {0, 1, 2, …}.  A released count of n is then possible on a dataset of n records
(probability p = 1 − e^(−ε)) and impossible on n + 1.

Pair (add/remove neighbours, ε = 1): D = 10 records, D' = 11 records (the count is all the mechanism reads).
Event: "the release is ≤ 10", favours D.  Python's ``random`` is seeded with i for fit i on D and with
10**6 + i on D'.  The bound is the textbook two-sided one: ε ≥ ln(p_lo/q_hi), Clopper–Pearson limits at
α/2 = 2.5 % each (95 % together).

``--patched`` is the control: ``geometric_noise`` replaced by the two-sided geometric (the difference of
two independent draws of the library's own one-sided variable — the proposed patch in docs/findings/),
which is the textbook ε-DP noise for a count.  The same event's bound then stays below the claim.
"""

import argparse
import importlib.metadata
import inspect
import json
import math
import random
import time

import diffpriv_pure
import numpy as np
from scipy.stats import beta

EPSILON, N = 1.0, 10
LINE = "return math.ceil(math.log(1.0 - u) / math.log(1.0 - p) - 1)"


def two_sided_geometric(epsilon):
    """The patch: the difference of two one-sided geometric draws (discrete Laplace, ε-DP for a count)."""
    one_sided = diffpriv_pure.geometric_noise
    return one_sided(epsilon) - one_sided(epsilon)


def in_event(n, seed, patched):
    random.seed(seed)
    if patched:
        released = n + two_sided_geometric(EPSILON)
    else:
        released = diffpriv_pure.private_count(n, EPSILON)
    return released <= N


def bound(k_fav, k_other, n):
    p_lo = beta.ppf(0.025, k_fav, n - k_fav + 1) if k_fav > 0 else 0.0
    q_hi = beta.ppf(0.975, k_other + 1, n - k_other) if k_other < n else 1.0
    return (float(np.log(p_lo / q_hi)) if p_lo > 0 else 0.0), float(p_lo), float(q_hi)


def the_line():
    lines, first = inspect.getsourcelines(diffpriv_pure.geometric_noise)
    i = next((j for j, text in enumerate(lines) if "math.ceil" in text), None)
    return (f"diffpriv_pure/__init__.py:{first + i} (geometric_noise)", lines[i].strip()) if i is not None else \
        ("diffpriv_pure/__init__.py (geometric_noise)", "?")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fits", type=int, default=2000, help="releases per dataset")
    ap.add_argument("--patched", action="store_true", help="the control: two-sided geometric noise")
    ap.add_argument("--json", default=None, help="write the counts and the bound here")
    args = ap.parse_args()
    t0 = time.perf_counter()
    k_D = sum(in_event(N, i, args.patched) for i in range(args.fits))
    k_D2 = sum(in_event(N + 1, 10**6 + i, args.patched) for i in range(args.fits))
    eps, p_lo, q_hi = bound(k_D, k_D2, args.fits)
    where, text = the_line()
    version = importlib.metadata.version("diffpriv-pure")
    print(f"diffpriv-pure {version}: private_count" + (" (patched: two-sided geometric noise)" if args.patched
                                                       else ""))
    print(f"  {where}: {text}")
    print(f"release <= {N}: D ({N} records) {k_D:,}/{args.fits:,}, D' ({N + 1} records) {k_D2:,}/{args.fits:,} "
          f"(1 - e^-eps = {1 - math.exp(-EPSILON):.3f}; {time.perf_counter() - t0:.1f} s)")
    print(f"p_lo = {p_lo:.4f}, q_hi = {q_hi:.6f}: epsilon >= ln(p_lo/q_hi) = {eps:.2f} at 95 % (claim: {EPSILON:g})")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"library": f"diffpriv-pure {version}", "relation": "add-remove", "D": f"{N} records",
                       "D_prime": f"{N + 1} records (one added)", "favours": "D", "event": f"release <= {N}",
                       "fits": args.fits, "in_event_D": int(k_D), "in_event_D_prime": int(k_D2),
                       "epsilon_lower_bound": eps, "p_lo": p_lo, "q_hi": q_hi, "claim": EPSILON, "line": where,
                       "line_text": text, "patched": bool(args.patched), "seconds": time.perf_counter() - t0},
                      fh, indent=1)


if __name__ == "__main__":
    main()
