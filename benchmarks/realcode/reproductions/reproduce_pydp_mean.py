"""python-dp BoundedMean: its bound at the claim, and three mistakes a user's wrapper makes.

    python benchmarks/realcode/reproductions/reproduce_pydp_mean.py --case CASE [--fits 4000] [--json PATH]

Run it in the python-dp 1.1.5 interpreter.  ``BoundedMean(epsilon, lower_bound=-1, upper_bound=1)`` releases a
noisy count and a noisy centred sum (ε/2 each), their ratio clamped: ε-DP under add/remove.  The library draws
its own secure randomness (no seed).  Every case calls the benchmark's wrapper function itself:

* ``claim`` — ``pydp_plugins.bounded_mean``: D = 10 values at 1, D′ = D plus −1; event: the release > 0.9;
  the bound stays below the claim;
* ``ten-epsilon`` — ``bounded_mean_at_ten_epsilon``, the same pair and event;
* ``noise-scale`` — ``bounded_mean_data_bounds`` (bounds = the data's min and max): D = 5 values at 0.5 and 5
  at 0.6, D′ = D plus −1; event: the release < 0.5 (never on D: the release is clamped to [min, max]);
* ``branch`` — ``bounded_mean_small_exact`` (the exact mean below 10 records): D = 9 values at 0.5, D′ = D
  plus 0.5; event: the release is exactly 0.5.
"""

import numpy as np
from one_pair import arguments, count, report, source_line, wrappers

CLAIM = 1.0
AT_UPPER = (np.ones(10), np.append(np.ones(10), -1.0), "the release > 0.9", lambda m: m[0] > 0.9)
CASES = {"claim": ("pydp_plugins", "bounded_mean", AT_UPPER, "lower_bound=BOX[0]"),
         "ten-epsilon": ("statistics_mutants_plugins", "bounded_mean_at_ten_epsilon", AT_UPPER, "10.0 * epsilon"),
         "noise-scale": ("statistics_mutants_plugins", "bounded_mean_data_bounds",
                         (np.array([0.5] * 5 + [0.6] * 5), np.array([0.5] * 5 + [0.6] * 5 + [-1.0]), "the release < 0.5",
                          lambda m: m[0] < 0.5), "np.min(x), np.max(x)"),
         "branch": ("statistics_mutants_plugins", "bounded_mean_small_exact",
                    (np.full(9, 0.5), np.full(10, 0.5), "the release is exactly 0.5", lambda m: m[0] == 0.5),
                    "if len(x) < SMALL")}


def main():
    args = arguments(__doc__, 4000, cases=CASES)
    module, name, (D, D2, text, event), needle = CASES[args.case]
    if module == "pydp_plugins":  # the library panel's plug-in
        import os
        import sys
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "libraries"))
    plugin = getattr(wrappers(module), name)
    in_D, in_D2, seconds = count(lambda x, seed: plugin(x[:, None], CLAIM), D, D2, event, args.fits)
    line, line_text = source_line(plugin if module != "pydp_plugins" else wrappers(module)._bounded, needle)
    report(args.json, library=f"python-dp BoundedMean via {name}", relation="add-remove",
           D=f"{len(D)} values ({', '.join(f'{v:g}' for v in sorted(set(D.tolist())))})", D_prime=f"D plus {D2[-1]:g}",
           event=text, favours="D'" if args.case == "noise-scale" else "D", fits=args.fits, in_D=in_D,
           in_D_prime=in_D2, delta=0.0, claim=CLAIM, line=line, line_text=line_text, seconds=seconds, case=args.case)


if __name__ == "__main__":
    main()
