"""Google's DP clustering (learning/clustering): one pair, one event, counts, a Clopper–Pearson bound.

    python benchmarks/realcode/reproductions/reproduce_google.py --case CASE [--fits 5000] [--json PATH]

Run it in the interpreter the benchmark built for the library (``clustering`` importable, dp-accounting
installed).  k = 2, records in [-1, 1]² (radius √2), claim (ε, δ) = (1, 10⁻⁶) under add/remove; every fit is the
benchmark's wrapper's (``google_clustering_plugins.cluster``: the calibration memoised per ε, numpy's global
state — the library's only randomness — seeded from a generator seeded i on D, 10⁶ + i on D′).  Cases:

* ``claim`` — the library as published, at ε = 1, on the pair and event of ``ten-epsilon``: the bound stays
  below the claim (the noise is calibrated for it);
* ``ten-epsilon`` — the same call at 10·ε while the claim stays ε (a wrapper's mistake): D = two records at
  the centre of the box, D′ = D plus one at the corner (1, 1); event: some centre has x + y > 1.2;
* ``noise-scale`` — in the mutant whose Gaussian noise on a node's sum is scaled by the largest norm among the
  node's own records: D = two records at the centre (all noise vanishes, every centre is exactly 0),
  D′ = D plus one at (1, 1); event: every centre is exactly (0, 0);
* ``branch`` — in the mutant that returns a node holding one record as its own average, unnoised: D = one
  record at (0.5, 0.5), D′ = D plus the same record again; event: some centre is that record to 10⁻⁹.
"""

import numpy as np
from clustering import central_privacy_utils
from one_pair import arguments, count, report, source_line, wrappers

CLAIM, DELTA = 1.0, 1e-6
WRAPPER = "benchmarks/realcode/google_clustering_plugins.py"
PLUGINS = wrappers("google_clustering_plugins")  # its calibration memoised per ε, as the wrapper has it


def fit(X, epsilon, seed):
    return PLUGINS.cluster(X, epsilon, np.random.default_rng(seed))


CORNER_EVENT = ("some centre has x + y > 1.2", lambda c: bool(np.max(c.sum(axis=1)) > 1.2), "D'")
CENTRE = np.zeros((2, 2))
CASES = {  # case: (ε run at, D, D', (event text, event, favoured), the library text that decides)
    "claim": (CLAIM, CENTRE, np.vstack([CENTRE, [[1.0, 1.0]]]), CORNER_EVENT, None),
    "ten-epsilon": (10 * CLAIM, CENTRE, np.vstack([CENTRE, [[1.0, 1.0]]]), CORNER_EVENT, None),
    "noise-scale": (CLAIM, CENTRE, np.vstack([CENTRE, [[1.0, 1.0]]]),
                    ("every centre is exactly (0, 0)", lambda c: bool(np.all(c == 0.0)), "D"), "np.linalg.norm"),
    "branch": (CLAIM, np.array([[0.5, 0.5]]), np.array([[0.5, 0.5], [0.5, 0.5]]),
               ("some centre is (0.5, 0.5) to 1e-9", lambda c: bool(np.any(np.all(np.abs(c - 0.5) < 1e-9, axis=1))),
                "D"), "len(nonprivate_points) == 1"),
}


def main():
    args = arguments(__doc__, 5000, cases=CASES)
    run_eps, D, D2, (text, event, favours), needle = CASES[args.case]
    in_D, in_D2, seconds = count(lambda X, seed: fit(X, run_eps, seed), D, D2, event, args.fits)
    if args.case == "ten-epsilon":  # the wrapper's mistake
        line, line_text = (f"{WRAPPER}: lsh_clustering_at_ten_epsilon", "return cluster(X, 10.0 * epsilon, rng)")
    else:  # the noise the library draws (claim), or the mutant's patched line
        line, line_text = source_line(central_privacy_utils.get_private_average, needle or "np.random.normal")
    report(args.json, library=f"google/differential-privacy learning/clustering at ε = {run_eps:g}",
           relation="add-remove", D=f"{len(D)} record(s) at {D[0].tolist()}", D_prime=f"D plus {D2[-1].tolist()}",
           event=text, favours=favours, fits=args.fits, in_D=in_D, in_D_prime=in_D2, delta=DELTA,
           claim=CLAIM, line=line, line_text=line_text, seconds=seconds, case=args.case)


if __name__ == "__main__":
    main()
