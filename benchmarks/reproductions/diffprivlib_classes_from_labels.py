"""diffprivlib classifiers that read their classes from the labels: which classes the data holds is released
exactly — numpy, scipy and the library only.

    python benchmarks/reproductions/diffprivlib_classes_from_labels.py --model LogisticRegression [--fits 300]
        [--json PATH] [--patched]
    python benchmarks/reproductions/diffprivlib_classes_from_labels.py --model DecisionTreeClassifier [--patched]
    python benchmarks/reproductions/diffprivlib_classes_from_labels.py --model RandomForestClassifier [--patched]

Run it with the library's own interpreter.  ``LogisticRegression.fit`` sets ``self.classes_ = np.unique(y)``
and has no parameter to state the classes; ``DecisionTreeClassifier`` and ``RandomForestClassifier`` take
``classes=`` but, when it is not given, warn (``PrivacyLeakWarning``) and set ``self.classes = np.unique(y)``.
Either way the fitted model has one set of parameters per class *present*, and its shape — noise-free —
says which classes the data holds.

Pair (replace neighbours, bounds (-1, 1), ε = 1), 6 records at (0, 0):

* LogisticRegression, stated classes {0, 1, 2}: D has labels 0, 0, 0, 1, 1, 1; D' = D with its last label
  changed to 2.  Event: "a binary model" (``coef_`` has one row: only two classes were found), favours D.
* DecisionTreeClassifier / RandomForestClassifier, stated classes {0, 1}: D has all labels 0; D' = D with its
  last label changed to 1.  Event: "``predict_proba`` has one column" (one class found), favours D.

Fit i on D uses ``random_state=i``, on D' ``random_state=10**6 + i``.  The bound is the textbook two-sided
one: ε ≥ ln(p_lo/q_hi), Clopper–Pearson limits at α/2 = 2.5 % each (95 % together).

``--patched`` is the control: the classes are stated and used.  For the trees that is the documented
parameter (``classes=[0, 1]``); for LogisticRegression, which has none, the script runs the library's own
``fit`` with the one line changed to ``self.classes_ = np.asarray(classes)`` (the proposed patch in
docs/findings/).  The event then never happens on either dataset and the bound is 0.
"""

import argparse
import inspect
import json
import textwrap
import time
import warnings

import diffprivlib
import numpy as np
from diffprivlib.models import logistic_regression as dpl_lr
from scipy.stats import beta

EPSILON, N = 1.0, 6
BOX = (-1.0, 1.0)
GRID = np.array([[a, b] for a in (-0.5, 0.0, 0.5) for b in (-0.5, 0.0, 0.5)])
MODELS = ("LogisticRegression", "DecisionTreeClassifier", "RandomForestClassifier")
LR_LINE = "self.classes_ = np.unique(y)"


def patched_logistic_regression(classes):
    """LogisticRegression whose ``fit`` is the library's own source with the one line changed."""
    source = textwrap.dedent(inspect.getsource(dpl_lr.LogisticRegression.fit))
    if LR_LINE not in source:
        raise SystemExit(f"the line `{LR_LINE}` is not in this version's LogisticRegression.fit")
    namespace = dict(vars(dpl_lr), _STATED=np.asarray(classes))
    exec(source.replace(LR_LINE, "self.classes_ = _STATED"), namespace)  # noqa: S102 - the library's own code

    class Patched(dpl_lr.LogisticRegression):
        fit = namespace["fit"]

    return Patched


def fitted(model, X, y, seed, patched):
    """The model's fit on (X, y): True when it shows fewer classes than stated (the event)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if model == "LogisticRegression":
            cls = patched_logistic_regression([0, 1, 2]) if patched else dpl_lr.LogisticRegression
            m = cls(epsilon=EPSILON, data_norm=float(np.sqrt(2.0)), random_state=seed).fit(X, y)
            return np.asarray(m.coef_).shape[0] == 1
        from diffprivlib import models

        kwargs = {"classes": [0, 1]} if patched else {}
        if model == "DecisionTreeClassifier":
            m = models.DecisionTreeClassifier(max_depth=2, epsilon=EPSILON, bounds=BOX, random_state=seed, **kwargs)
        else:
            m = models.RandomForestClassifier(n_estimators=5, max_depth=2, epsilon=EPSILON, bounds=BOX,
                                              random_state=seed, **kwargs)
        return np.asarray(m.fit(X, y).predict_proba(GRID)).shape[1] == 1


def bound(k_fav, k_other, n):
    p_lo = beta.ppf(0.025, k_fav, n - k_fav + 1) if k_fav > 0 else 0.0
    q_hi = beta.ppf(0.975, k_other + 1, n - k_other) if k_other < n else 1.0
    return (float(np.log(p_lo / q_hi)) if p_lo > 0 else 0.0), float(p_lo), float(q_hi)


def the_line(model):
    """Where the classes are read from the labels, in the installed library."""
    from diffprivlib.models import forest

    fn = dpl_lr.LogisticRegression.fit if model == "LogisticRegression" else (
        forest.DecisionTreeClassifier.fit if model == "DecisionTreeClassifier" else forest.RandomForestClassifier.fit)
    path = "diffprivlib/models/" + ("logistic_regression.py" if model == "LogisticRegression" else "forest.py")
    lines, first = inspect.getsourcelines(fn)
    i = next((j for j, text in enumerate(lines) if "np.unique(y)" in text), None)
    return (f"{path}:{first + i} ({model}.fit)", lines[i].strip()) if i is not None else (path, "?")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=MODELS, default="LogisticRegression")
    ap.add_argument("--fits", type=int, default=300, help="fits per dataset")
    ap.add_argument("--patched", action="store_true", help="the control: state the classes and use them")
    ap.add_argument("--json", default=None, help="write the counts and the bound here")
    args = ap.parse_args()
    X = np.zeros((N, 2))
    if args.model == "LogisticRegression":
        y = np.array([0, 0, 0, 1, 1, 1])
        y2, d_text, d2_text, event = y.copy(), "labels 0, 0, 0, 1, 1, 1", "D with its last label changed to 2", \
            "a binary model (coef_ has 1 row: two classes found of 0, 1, 2)"
        y2[-1] = 2
    else:
        y = np.zeros(N, dtype=int)
        y2, d_text, d2_text, event = y.copy(), "all labels 0", "D with its last label changed to 1", \
            "predict_proba has 1 column (one class found of 0, 1)"
        y2[-1] = 1
    t0 = time.perf_counter()
    k_D = sum(fitted(args.model, X, y, i, args.patched) for i in range(args.fits))
    k_D2 = sum(fitted(args.model, X, y2, 10**6 + i, args.patched) for i in range(args.fits))
    eps, p_lo, q_hi = bound(k_D, k_D2, args.fits)
    where, text = the_line(args.model)
    print(f"diffprivlib {diffprivlib.__version__}, {args.model}" + (" (patched: classes stated and used)"
                                                                      if args.patched else ""))
    print(f"  {where}: {text}")
    print(f"{event}: D ({N} records at (0, 0), {d_text}) {k_D:,}/{args.fits:,} fits, D' ({d2_text}) "
          f"{k_D2:,}/{args.fits:,} fits ({time.perf_counter() - t0:.0f} s)")
    print(f"p_lo = {p_lo:.4f}, q_hi = {q_hi:.6f}: epsilon >= ln(p_lo/q_hi) = {eps:.2f} at 95 % (claim: {EPSILON:g})")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"library": f"diffprivlib {diffprivlib.__version__}", "model": args.model, "relation": "replace",
                       "D": f"{N} records at (0, 0), {d_text}", "D_prime": d2_text, "favours": "D", "event": event,
                       "fits": args.fits, "in_event_D": int(k_D), "in_event_D_prime": int(k_D2),
                       "epsilon_lower_bound": eps, "p_lo": p_lo, "q_hi": q_hi, "claim": EPSILON, "line": where,
                       "line_text": text, "patched": bool(args.patched), "seconds": time.perf_counter() - t0},
                      fh, indent=1)


if __name__ == "__main__":
    main()
