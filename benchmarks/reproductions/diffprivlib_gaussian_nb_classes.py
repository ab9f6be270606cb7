"""diffprivlib GaussianNB: which classes the data holds is released exactly — numpy, scipy and the library only.

    python benchmarks/reproductions/diffprivlib_gaussian_nb_classes.py [--fits 2000] [--json PATH] [--classes-stated]

Run it with the library's own interpreter.  diffprivlib's ``GaussianNB`` inherits scikit-learn's
``fit``, which calls ``self._partial_fit(X, y, np.unique(y), _refit=True, …)``: the classes are read
from the labels, and diffprivlib's ``_partial_fit`` allocates one row of ``theta_`` and ``var_``
(and one class prior) per class found.  ``fit`` has no parameter to state the class set, so the
shape of the fitted model says which classes occur in the data, without noise.

Pair (replace neighbours, bounds (-1, 1), ε = 1): D = 6 records at (0, 0) with label 0; D' = D with
its last record's label changed to 1.  Event: "some class is shown without noise" — ``theta_`` has
fewer than 2 rows, or a row exactly 0.  Fit i on D uses ``random_state=i``, on D'
``random_state=10**6 + i``.  The bound is the textbook two-sided one: ε ≥ ln(p_lo/q_hi),
Clopper–Pearson limits at α/2 = 2.5 % each (95 % together).

``--classes-stated`` states the classes, as a DP model must be given them, through the one method
that takes them, ``partial_fit(X, y, classes=[0, 1])``: the model then has two rows, but
diffprivlib's ``_partial_fit`` noises only the classes present (``for _i, y_i in
enumerate(unique_y)`` with ``unique_y = np.unique(y)``): the absent class's row stays exactly 0
(``var_`` exactly ``var_smoothing``, ``class_count_`` 0).  The event is the same and the leak too.

``--patched`` is the control: the classes stated (``partial_fit(classes=[0, 1])``) *and* used — the
library's own ``_partial_fit`` and ``_noisy_class_counts`` run with three lines changed (the proposed patch
in docs/findings/): the loop over every stated class (``enumerate(classes)``), the noisy counts over
``self.classes_`` instead of ``np.unique(y)``, with the count's lower limit 0 instead of 1.  Every class's
row is then noised, and the event's bound falls to 0.
"""

import argparse
import inspect
import json
import textwrap
import time
import warnings

import diffprivlib
import numpy as np
import sklearn
from diffprivlib.models import GaussianNB
from diffprivlib.models import naive_bayes as dpl_naive_bayes
from scipy.stats import beta
from sklearn import naive_bayes as sk_naive_bayes

EPSILON, N = 1.0, 6


PATCH = {"_partial_fit": [("for _i, y_i in enumerate(unique_y):", "for _i, y_i in enumerate(classes):")],
         "_noisy_class_counts": [("unique_y = np.unique(y)", "unique_y = self.classes_"), ("lower=1,", "lower=0,")]}


def patched_gaussian_nb():
    """GaussianNB whose ``_partial_fit`` and ``_noisy_class_counts`` are the library's own source with the
    patch's three lines changed."""
    namespace = dict(vars(dpl_naive_bayes))
    methods = {}
    for name, changes in PATCH.items():
        source = textwrap.dedent(inspect.getsource(getattr(GaussianNB, name)))
        for old, new in changes:
            if old not in source:
                raise SystemExit(f"`{old}` is not in this version's GaussianNB.{name}")
            source = source.replace(old, new)
        exec(source, namespace)  # noqa: S102 - the library's own code, patched
        methods[name] = namespace[name]
    return type("PatchedGaussianNB", (GaussianNB,), methods)


def unnoised_class(X, y, seed, stated, patched=False):
    """Whether the fitted model shows a class without noise: fewer than 2 rows, or a row exactly 0."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = (patched_gaussian_nb() if patched else GaussianNB)(epsilon=EPSILON, bounds=(-1.0, 1.0),
                                                                     random_state=seed)
        model = model.partial_fit(X, y, classes=[0, 1]) if stated or patched else model.fit(X, y)
    theta = np.asarray(model.theta_)
    return theta.shape[0] < 2 or bool(np.any(np.all(theta == 0.0, axis=1)))


def hits(X, y, offset, fits, stated, patched=False):
    return sum(unnoised_class(X, y, offset + i, stated, patched) for i in range(fits))


def bound(k_fav, k_other, n):
    p_lo = beta.ppf(0.025, k_fav, n - k_fav + 1) if k_fav > 0 else 0.0
    q_hi = beta.ppf(0.975, k_other + 1, n - k_other) if k_other < n else 1.0
    return (float(np.log(p_lo / q_hi)) if p_lo > 0 else 0.0), float(p_lo), float(q_hi)


def the_lines():
    """The inherited fit's ``np.unique(y)`` and diffprivlib's loop over the classes present."""
    found = []
    lines, first = inspect.getsourcelines(sk_naive_bayes.GaussianNB.fit)
    i = next((j for j, text in enumerate(lines) if "np.unique(y)" in text), None)
    if i is not None:
        found.append((f"sklearn/naive_bayes.py:{first + i} (scikit-learn {sklearn.__version__}, GaussianNB.fit)",
                      " ".join(part.strip() for part in lines[i - 1:i + 2])))
    lines, first = inspect.getsourcelines(GaussianNB._partial_fit)
    i = next((j for j, text in enumerate(lines) if "for _i, y_i in enumerate(unique_y)" in text), None)
    if i is not None:
        found.append((f"diffprivlib/models/naive_bayes.py:{first + i} (GaussianNB._partial_fit)", lines[i].strip()))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fits", type=int, default=2000, help="fits per dataset")
    ap.add_argument("--classes-stated", action="store_true", help="state the classes (partial_fit(classes=[0, 1]))")
    ap.add_argument("--patched", action="store_true", help="the control: the classes stated and every one noised")
    ap.add_argument("--json", default=None, help="write the counts and the bound here")
    args = ap.parse_args()
    X = np.zeros((N, 2))
    y = np.zeros(N, dtype=int)
    y2 = y.copy()
    y2[-1] = 1
    t0 = time.perf_counter()
    stated = args.classes_stated
    k_D = hits(X, y, 0, args.fits, stated, args.patched)
    k_D2 = hits(X, y2, 10**6, args.fits, stated, args.patched)
    eps, p_lo, q_hi = bound(k_D, k_D2, args.fits)
    lines = the_lines()
    print(f"diffprivlib {diffprivlib.__version__}: " + ("patched, partial_fit(X, y, classes=[0, 1])" if args.patched
                                                         else "partial_fit(X, y, classes=[0, 1])" if stated
                                                         else "fit(X, y)"))
    for where, text in lines:
        print(f"  {where}: {text}")
    print(f"some class shown without noise: D ({N} records, all label 0) {k_D:,}/{args.fits:,} fits, D' (one label "
          f"changed to 1) {k_D2:,}/{args.fits:,} fits ({time.perf_counter() - t0:.0f} s)")
    print(f"p_lo = {p_lo:.4f}, q_hi = {q_hi:.6f}: epsilon >= ln(p_lo/q_hi) = {eps:.2f} at 95 % (claim: {EPSILON:g})")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"library": f"diffprivlib {diffprivlib.__version__} (scikit-learn {sklearn.__version__})",
                       "relation": "replace", "D": f"{N} records at (0, 0), all label 0",
                       "D_prime": "D with one label changed to 1", "favours": "D",
                       "event": "some class shown without noise (theta_ has < 2 rows, or a row exactly 0)",
                       "fits": args.fits, "in_event_D": int(k_D), "in_event_D_prime": int(k_D2),
                       "epsilon_lower_bound": eps, "p_lo": p_lo, "q_hi": q_hi, "claim": EPSILON,
                       "line": "; ".join(w for w, _ in lines), "line_text": " | ".join(t for _, t in lines),
                       "classes_stated": bool(stated), "patched": bool(args.patched), "seconds": time.perf_counter() - t0},
                      fh, indent=1)


if __name__ == "__main__":
    main()
