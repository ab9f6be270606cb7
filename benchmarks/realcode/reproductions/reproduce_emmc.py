"""EMMC (UzL-PrivSec/dp-kmeans-max-cover): the Gaussian noise of a centre has the variance as its standard deviation.

    python benchmarks/realcode/reproductions/reproduce_emmc.py [--fits 2000] [--json PATH]

Run it in the interpreter the benchmark built for it (``emmc`` importable).  ``EMMC.noisy_average`` computes
the noise's standard deviation σ for a cluster's mean from a noisy count, then draws
``np.random.normal(scale=sigma**2, ...)``: σ² instead of σ.  For a large cluster σ < 1, so the noise is far
smaller than the mechanism's analysis needs (for 2,000 records σ ≈ 0.0125 and σ² ≈ 0.00016).  A cluster
smaller than about (5/ε_G)·ln(2/δ_G) ≈ 127 records releases nothing at all (the noisy count minus that
margin is ≤ 0).  In one dimension (no random projection, no process pool): D = 2,000 records at 0.5,
D′ = D plus one record at −1, which joins the cluster in a share of fits and moves its mean by 1.5/2001 ≈
7.5·10⁻⁴ (≈ 5σ²).  Event: a released centre below 0.5 − 4·10⁻⁴.  k = 2, diameter 2 (the box [-1, 1]),
claim (1, 10⁻⁶) under add/remove; fit i seeds numpy's global state with i (D) or 10⁶ + i (D′).
"""

import contextlib
import io

import numpy as np
from emmc import EMMC
from one_pair import arguments, count, report, source_line

CLAIM, DELTA, SHIFT = 1.0, 1e-6, 4e-4


def fit(X, seed):
    np.random.seed(seed)
    with contextlib.redirect_stdout(io.StringIO()):  # it prints its progress
        centres = EMMC().cluster(data=X, diameter=2.0, k=2, epsilon=CLAIM, delta=DELTA)
    return np.asarray(centres, dtype=float).reshape(-1, 1)


def main():
    args = arguments(__doc__, 2000)
    D = np.full((2000, 1), 0.5)
    D2 = np.vstack([D, [[-1.0]]])
    in_D, in_D2, seconds = count(fit, D, D2, lambda c: len(c) > 0 and np.min(c) < 0.5 - SHIFT, args.fits)
    line, text = source_line(EMMC.noisy_average, "np.random.normal(scale=")
    report(args.json, library="UzL-PrivSec/dp-kmeans-max-cover emmc.py", relation="add-remove",
           D="2,000 records at 0.5 (d = 1)", D_prime="D plus one record at -1", event=f"a centre < 0.5 - {SHIFT:g}",
           favours="D'", fits=args.fits, in_D=in_D, in_D_prime=in_D2, delta=DELTA, claim=CLAIM, line=line,
           line_text=text, seconds=seconds)


if __name__ == "__main__":
    main()
