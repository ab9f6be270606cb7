"""What every reproduction shares: fits on one pair, a Clopper–Pearson bound on ε from two counts, the JSON.

Standard library and numpy only (the reproductions run in interpreters that may lack scipy): the exact binomial
limits by bisection on the binomial tail.  ε ≥ ln((p_lo − δ) / q_hi), p_lo the lower limit of the favoured
dataset's rate in the event and q_hi the upper limit of the other's, each at α/2 = 2.5 % (95 % together).
"""

import argparse
import json
import math
import time
import warnings

import numpy as np


def _tail_at_least(k, n, p):
    """P[Binomial(n, p) ≥ k]."""
    if k <= 0:
        return 1.0
    if p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    log_p, log_q = math.log(p), math.log1p(-p)
    terms = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * log_p + (n - i) * log_q
             for i in range(k, n + 1)]
    top = max(terms)
    return min(1.0, math.exp(top) * sum(math.exp(t - top) for t in terms))


def _solve(target, increasing, lo=0.0, hi=1.0):
    for _ in range(80):
        mid = (lo + hi) / 2
        if (increasing(mid) < target):
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def lower_limit(k, n, alpha):
    """The p below which seeing ≥ k of n has probability < α."""
    return 0.0 if k == 0 else _solve(alpha, lambda p: _tail_at_least(k, n, p))


def upper_limit(k, n, alpha):
    """The p above which seeing ≤ k of n has probability < α."""
    return 1.0 if k == n else _solve(1 - alpha, lambda p: _tail_at_least(k + 1, n, p))


def epsilon_bound(k_favoured, k_other, n, delta=0.0, alpha=0.05):
    """(ε lower bound, p_lo, q_hi) at confidence 1 − α."""
    p_lo, q_hi = lower_limit(k_favoured, n, alpha / 2), upper_limit(k_other, n, alpha / 2)
    eps = math.log((p_lo - delta) / q_hi) if p_lo > delta else 0.0
    return max(eps, 0.0), p_lo, q_hi


def report(path, *, library, relation, D, D_prime, event, favours, fits, in_D, in_D_prime, delta, claim, line,
           line_text, seconds, **extra):
    """Print the result and write it as the benchmark reads it (``in_event_D``, ``epsilon_lower_bound``, …)."""
    k_fav, k_other = (in_D_prime, in_D) if favours == "D'" else (in_D, in_D_prime)
    eps, p_lo, q_hi = epsilon_bound(k_fav, k_other, fits, delta)
    print(f"{library}: D = {D}; D' = {D_prime} ({relation})")
    print(f"event: {event}: D {in_D:,}/{fits:,} fits, D' {in_D_prime:,}/{fits:,} fits ({seconds:.0f} s)")
    print(f"p_lo = {p_lo:.4f}, q_hi = {q_hi:.6f}: epsilon >= ln((p_lo - delta)/q_hi) = {eps:.2f} at 95 % "
          f"(claim: {claim:g}, delta {delta:g})")
    print(f"the line: {line}: {line_text}")
    if path:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump({"library": library, "relation": relation, "D": D, "D_prime": D_prime, "event": event,
                       "favours": favours, "fits": fits, "in_event_D": in_D, "in_event_D_prime": in_D_prime,
                       "epsilon_lower_bound": eps, "p_lo": p_lo, "q_hi": q_hi, "delta": delta, "claim": claim,
                       "line": line, "line_text": line_text, "seconds": seconds, **extra}, fh, indent=1)
    return eps


def arguments(doc, fits, **choices):
    """The command line every reproduction takes: ``--fits``, ``--json`` and its own ``--case`` choices."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    if choices.get("cases"):
        ap.add_argument("--case", choices=sorted(choices["cases"]), required=True)
    ap.add_argument("--fits", type=int, default=fits, help="fits per dataset")
    ap.add_argument("--json", default=None, help="write the counts and the bound here")
    return ap.parse_args()


def count(fit, D, D_prime, event, fits):
    """How often ``event`` holds over ``fits`` fits on each dataset (fit i on D with seed i, on D′ with
    10⁶ + i): (in D, in D′, seconds)."""
    t0 = time.perf_counter()
    with warnings.catch_warnings(), np.errstate(all="ignore"):  # NaN and inf centres are releases too
        warnings.simplefilter("ignore")
        in_D = sum(bool(event(fit(D, i))) for i in range(fits))
        in_D_prime = sum(bool(event(fit(D_prime, 10**6 + i))) for i in range(fits))
    return int(in_D), int(in_D_prime), time.perf_counter() - t0


def source_line(function, needle):
    """(``file:line``, the line) of the first line of ``function``'s source that contains ``needle``."""
    import inspect
    import os

    lines, first = inspect.getsourcelines(function)
    path = inspect.getsourcefile(function) or "?"
    shown = "/".join(path.split(os.sep)[-2:])
    for i, text in enumerate(lines):
        if needle in text:
            return f"{shown}:{first + i}", text.strip()
    return "not found", f"(no line with {needle!r} in {function.__qualname__}: another version?)"


def wrappers(name):
    """The benchmark's wrapper module ``name`` (``benchmarks/realcode/<name>.py``: numpy and the library only),
    so that a reproduction runs the code exactly as the audited plug-in calls it."""
    import importlib
    import os
    import sys

    folder = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return importlib.import_module(name)
