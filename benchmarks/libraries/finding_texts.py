"""Why each finding of the library panel is one, and the library line that causes it (the ``why`` and
``line`` of the catalogue's violated rows, :mod:`benchmarks.libraries.catalogue`)."""

__all__ = ["COUNT_GEOMETRIC_LINE", "COUNT_GEOMETRIC_WHY", "KMEANS_LINE", "KMEANS_WHY", "LABELS_WHY", "LINREG_LINE", "LINREG_WHY", "LOGREG_LABELS_LINE", "NB_CLASSES_LINE", "NB_CLASSES_WHY", "TREE_LABELS_LINE"]

KMEANS_WHY = ("An empty cluster gets no noise and keeps its start centre, which lies inside the box: whether a "
              "cluster ever owned a record shows in the release (true ε = ∞).")
KMEANS_LINE = ("diffprivlib/models/k_means.py, KMeans._update_centers: `if cluster not in labels: continue` "
               "(lines 243–244 in 0.6.6 and in the fork)")
LINREG_WHY = ("The noise on the sum of squares of a feature is calibrated with the *lower* bound twice: "
              "`np.abs([bounds_X[0][i], bounds_X[0][i]])`.  After centring on the noisy mean, a dataset whose "
              "records sit at the lower bound has a lower bound near 0, so that sum is released almost without "
              "noise, and the fitted coefficient explodes; one record at the upper bound tames it.")
LINREG_LINE = ("diffprivlib/models/linear_regression.py, _construct_regression_obj: `sensitivity = "
               "np.max(np.abs([bounds_X[0][i], bounds_X[0][i]])) ** 2` (line 144)")
NB_CLASSES_WHY = ("The classes are read from the data (`np.unique(y)` in scikit-learn's GaussianNB.fit, which "
                  "diffprivlib's GaussianNB inherits), and only the classes present are noised: the model has one "
                  "row of theta_/var_ per class present, so a dataset without some class gives a shorter release "
                  "(true ε = ∞).  Stating the classes through partial_fit(classes=…) does not help: the absent "
                  "class's row is then exactly 0, never noised.")
LABELS_WHY = ("The classes are read from the labels (`np.unique(y)`), so the fitted model's shape — one row of "
              "coefficients per class present, or a binary model when two are — says which classes the data "
              "holds, without noise (true ε = ∞).  ")
LOGREG_LABELS_LINE = ("diffprivlib/models/logistic_regression.py, LogisticRegression.fit: `self.classes_ = np.unique(y)` "
                      "(line 227 in 0.6.6); the class takes no list of classes")
TREE_LABELS_LINE = ("diffprivlib/models/forest.py, DecisionTreeClassifier.fit: `self.classes = np.unique(y)` (line 403 "
                    "in 0.6.6) when `classes` is not given (a PrivacyLeakWarning says so); RandomForestClassifier.fit "
                    "line 214 likewise")
COUNT_GEOMETRIC_WHY = ("`geometric_noise` draws `ceil(log(1 − u)/log(1 − p) − 1)` with p = 1 − e^(−ε): a *one-sided* "
                       "geometric variable, never negative.  The released count is never below the true one, so a "
                       "release equal to n is possible on n records and impossible on n + 1 (true ε = ∞); the "
                       "two-sided geometric (the difference of two such draws) is ε-DP.")
COUNT_GEOMETRIC_LINE = ("diffpriv_pure/__init__.py, geometric_noise: `return math.ceil(math.log(1.0 - u) / "
                        "math.log(1.0 - p) - 1)` (line 74 in 0.1.0), used by private_count (line 102)")
NB_CLASSES_LINE = ("sklearn/naive_bayes.py, GaussianNB.fit: `self._partial_fit(X, y, np.unique(y), _refit=True, …)` "
                   "(line 267, scikit-learn 1.7.2), inherited; and diffprivlib/models/naive_bayes.py, "
                   "GaussianNB._partial_fit: `for _i, y_i in enumerate(unique_y):` (line 166) — noise for the classes "
                   "present only")
