"""diffprivlib tools.mean: its bound at the claim, and the mutants planted in the wrapper and the library.

    python benchmarks/realcode/reproductions/reproduce_diffprivlib_mean.py --case CASE [--fits 4000] [--json PATH]

Run it in the interpreter of the row (diffprivlib 0.6.6, or a mutant's copy of it).  ``mean(x, epsilon,
bounds=(-1, 1))`` adds truncated Laplace noise of sensitivity (u − l)/n to the mean of the clipped values: ε-DP
under replace neighbours (n public).  Fit i uses ``random_state`` i on D, 10⁶ + i on D′.  Cases:

* ``claim`` — as published: D = 10 values at 1, D′ = one of them replaced by −1 (the mean moves by the whole
  sensitivity, 0.2); event: the release is above 0.9; the bound stays below the claim;
* ``ten-epsilon`` — the same pair and event at 10·ε (the wrapper ``tools_mean_at_ten_epsilon``);
* ``noise-scale`` / ``branch`` — in the mutant with the sensitivity from the data's range / the exact mean of a
  constant column: D = 10 values at 0.5 (no noise at all), D′ = one replaced by −1; event: the release is
  exactly 0.5.
"""

import numpy as np
from diffprivlib.tools import mean, utils
from one_pair import arguments, count, report, source_line, wrappers

CLAIM = 1.0
AT_UPPER = (np.ones(10), np.array([-1.0] + [1.0] * 9), "the release > 0.9", lambda m: m[0] > 0.9)
CONSTANT = (np.full(10, 0.5), np.array([-1.0] + [0.5] * 9), "the release is exactly 0.5", lambda m: m[0] == 0.5)
CASES = {"claim": (1.0, AT_UPPER, "sensitivity=(upper - lower) / array.size"),
         "ten-epsilon": (10.0, AT_UPPER, None),
         "noise-scale": (1.0, CONSTANT, "sensitivity=np.ptp(array)"),
         "branch": (1.0, CONSTANT, "if np.ptp(array) == 0")}


def main():
    args = arguments(__doc__, 4000, cases=CASES)
    scale, (D, D2, text, event), needle = CASES[args.case]
    if args.case == "ten-epsilon":
        plugin = wrappers("statistics_mutants_plugins").tools_mean_at_ten_epsilon
        fit = lambda x, seed: plugin(x[:, None], CLAIM, np.random.default_rng(seed))  # noqa: E731
        line, line_text = ("benchmarks/realcode/statistics_mutants_plugins.py: tools_mean_at_ten_epsilon",
                           "mean(_column(X), epsilon=10.0 * epsilon, bounds=BOX, …)")
    else:
        fit = lambda x, seed: np.atleast_1d(mean(x, epsilon=CLAIM, bounds=(-1, 1), random_state=seed))  # noqa: E731
        line, line_text = source_line(utils._mean, needle)
    in_D, in_D2, seconds = count(fit, D, D2, event, args.fits)
    report(args.json, library=f"diffprivlib tools.mean at ε = {scale * CLAIM:g}", relation="replace",
           D=f"10 values at {D[-1]:g}", D_prime="one of them replaced by -1", event=text, favours="D", fits=args.fits,
           in_D=in_D, in_D_prime=in_D2, delta=0.0, claim=CLAIM, line=line, line_text=line_text, seconds=seconds,
           case=args.case)


if __name__ == "__main__":
    main()
