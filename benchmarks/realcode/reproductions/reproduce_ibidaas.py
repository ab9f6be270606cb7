"""ibidaas dpkmeans.py (COMPSs DP k-means): one Laplace number is added to every coordinate of every cluster's sum.

    python benchmarks/realcode/reproductions/reproduce_ibidaas.py [--fits 2000] [--json PATH]

Run it in the interpreter the benchmark built for it (``dpkmeans`` importable; PyCOMPSs shimmed as the
wrapper does: ``@task`` is the identity, ``compss_wait_on`` returns its argument).  ``_recompute_centers``
draws ``self._numerator_noise = self._laplace(...)`` — one scalar — and adds it to the whole sum of every
cluster, so a centre's x − y is (Σx − Σy)/(noisy count) with no noise at all: a centre of records on the
diagonal x = y lies exactly on it.  D = one record at (0.5, 0.5); D′ = D plus (0.5, 0.4) (they share a
cluster); event: some centre has |x − y| < 10⁻⁹ (a centre that owns no record keeps its random start, off the
diagonal).  k = 2, claim ε = 1, add/remove, fit i with ``random_state`` i (D) or 10⁶ + i (D′).
"""

import warnings

import numpy as np
from one_pair import arguments, count, report, source_line, wrappers

CLAIM = 1.0
PLUGINS = wrappers("ibidaas_plugins")  # the PyCOMPSs shim and dislib's Dataset, as the wrapper has them


def main():
    args = arguments(__doc__, 2000)
    PLUGINS.shim_pycompss()
    from dpkmeans import DPKMeans

    def fit(X, seed):
        model = DPKMeans(n_clusters=2, epsilon=CLAIM, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(PLUGINS.Dataset(X))
        return np.asarray(model.centers, dtype=float)

    D, D2 = np.array([[0.5, 0.5]]), np.array([[0.5, 0.5], [0.5, 0.4]])
    in_D, in_D2, seconds = count(fit, D, D2, lambda c: np.any(np.abs(c[:, 0] - c[:, 1]) < 1e-9), args.fits)
    line, text = source_line(DPKMeans._recompute_centers, "self._numerator_noise = self._laplace(")
    report(args.json, library="ibidaas/knowledge_repository dpkmeans.py", relation="add-remove",
           D="one record at (0.5, 0.5)", D_prime="D plus (0.5, 0.4)", event="some centre has |x - y| < 1e-9",
           favours="D", fits=args.fits, in_D=in_D, in_D_prime=in_D2, delta=0.0, claim=CLAIM, line=line,
           line_text=text, seconds=seconds)


if __name__ == "__main__":
    main()
