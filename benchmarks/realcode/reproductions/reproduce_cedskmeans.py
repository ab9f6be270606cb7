"""CEDSKMeans (lbnl-cybersecurity): the noise covariance comes from the data, so the centres are nearly exact.

    python benchmarks/realcode/reproductions/reproduce_cedskmeans.py [--fits 2000] [--json PATH]

Run it in the interpreter the benchmark built for it (``cedskmeans`` importable).  ``DPKMeans.fit`` fits
scikit-learn's k-means and adds Gaussian noise whose covariance ``_calculate_color_noise_covariance(X)``
builds from the data's own leave-one-out centre shifts: a local sensitivity, with no bound on the records
(``_cedskmeans.py``, ``_add_dp_noise``).  On 10 ordinary records (5 near (-0.5, -0.5), 5 near (0.5, 0.5), in
[-1, 1]²) the noise is ~0.015, so adding one record at the corner (1, 1) moves the upper centre by ~0.08 in
every fit.  k = 2, claim (1, 10⁻⁵) (the README's δ), add/remove; ``n_init=10``; fit i seeds numpy's global
state and ``random_state`` with i (D) or 10⁶ + i (D′).  Event: the largest x of a centre is above 0.55.
"""

import warnings

import numpy as np
from cedskmeans import DPKMeans
from cedskmeans._cedskmeans import CEDSKMeans
from one_pair import arguments, count, report, source_line

CLAIM, DELTA, THRESHOLD = 1.0, 1e-5, 0.55


def fit(X, seed):
    np.random.seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = DPKMeans(n_clusters=2, dp_epsilon=CLAIM, dp_delta=DELTA, n_init=10, random_state=seed)
        return model.fit(X).cluster_centers_


def main():
    args = arguments(__doc__, 2000)
    spread = np.random.default_rng(7).uniform(-0.1, 0.1, (10, 2))
    D = np.vstack([np.full((5, 2), -0.5), np.full((5, 2), 0.5)]) + spread
    D2 = np.vstack([D, [[1.0, 1.0]]])
    in_D, in_D2, seconds = count(fit, D, D2, lambda c: np.max(c[:, 0]) > THRESHOLD, args.fits)
    line, text = source_line(CEDSKMeans._add_dp_noise, "self._calculate_color_noise_covariance(X)")
    report(args.json, library="cedskmeans 0.1.0 (lbnl-cybersecurity/CEDSKMeans)", relation="add-remove",
           D="10 records: 5 near (-0.5, -0.5), 5 near (0.5, 0.5) (seeded jitter ±0.1)", D_prime="D plus (1, 1)",
           event=f"the largest x of a centre > {THRESHOLD}", favours="D'", fits=args.fits, in_D=in_D,
           in_D_prime=in_D2, delta=DELTA, claim=CLAIM, line=line, line_text=text, seconds=seconds)


if __name__ == "__main__":
    main()
