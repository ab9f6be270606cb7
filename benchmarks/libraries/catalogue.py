"""The panel's rows: which release of which library, the claim it is audited against, and why.

Harness-side (``benchmarks/bench_libraries.py``).  Every row is one
``dpaudit estimate-eps`` run at dpaudit's defaults in the library's own
virtual environment; ``options`` are the command-line options a user states
for it (the release kind, the claim's neighbour relation, the public box the
code works in, the classes of a classifier).  ``expected`` says what the
library's own analysis — or the textbook mechanism it implements — predicts:
``holds`` (no violation should be found), ``violated`` (and then a
reproduction under ``benchmarks/reproductions/`` shows it without dpaudit) or
``broken`` (the release cannot be produced at all as installed).
A row is called a violation on the page only when dpaudit certifies one *and*
its reproduction shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CLAIM = 1.0
DIFFPRIVLIB_FILE = "benchmarks/libraries/diffprivlib_plugins.py"
OPENDP_FILE = "benchmarks/libraries/opendp_plugins.py"


@dataclass(frozen=True)
class Environment:
    """A virtual environment built from the registry for one library."""

    key: str
    title: str           # e.g. "IBM diffprivlib 0.6.6"
    requirements: tuple[str, ...]
    distribution: str    # the installed distribution whose version is checked (importlib.metadata)
    version: str


ENVIRONMENTS: dict[str, Environment] = {env.key: env for env in (
    Environment("diffprivlib", "IBM diffprivlib 0.6.6", ("diffprivlib==0.6.6", "scikit-learn<1.8"),
                "diffprivlib", "0.6.6"),
    Environment("diffprivlib-fix", "diffprivlib-fix 0.6.7 (a fork that says it fixes diffprivlib), with the "
                "scikit-learn 1.8 it was made for", ("diffprivlib-fix==0.6.7", "scikit-learn<1.9"), "diffprivlib-fix",
                "0.6.7"),
    Environment("diffprivlib-fix-latest", "diffprivlib-fix 0.6.7 as pip resolves it today (the newest scikit-learn)",
                ("diffprivlib-fix==0.6.7",), "diffprivlib-fix", "0.6.7"),
    Environment("opendp", "OpenDP 0.16.0", ("opendp==0.16.0", "numpy", "scipy"), "opendp", "0.16.0"),
)}

BOX = ("--bounds", "-1,1")  # every plug-in clips its records to [-1, 1] per feature: the box it states


@dataclass(frozen=True)
class Row:
    """One audited release.

    ``name``: the row's id; ``env``: its :data:`ENVIRONMENTS` key; ``spec``: what ``-m`` names;
    ``release``: what is released, in words; ``options``: the rest of the command line;
    ``neighbours``: the claim's relation; ``expected``: ``holds`` / ``violated``; ``why``: the
    argument (the library's analysis, a textbook mechanism, or the bug and its line);
    ``reproduction``: the script that shows a violation without dpaudit (``None`` when none is
    expected); ``line``: the library line that causes it.
    """

    name: str
    env: str
    spec: str
    release: str
    options: tuple[str, ...]
    neighbours: str
    expected: str
    why: str
    reproduction: str | None = None
    line: str | None = None
    supervised: str | None = None  # what a supervised row feeds and releases

    @property
    def library(self) -> str:
        return ENVIRONMENTS[self.env].title


def _dpl(fn: str) -> str:
    return f"{DIFFPRIVLIB_FILE}:{fn}"


def _odp(fn: str) -> str:
    return f"{OPENDP_FILE}:{fn}"


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
NB_CLASSES_LINE = ("sklearn/naive_bayes.py, GaussianNB.fit: `self._partial_fit(X, y, np.unique(y), _refit=True, …)` "
                   "(line 267, scikit-learn 1.7.2), inherited; and diffprivlib/models/naive_bayes.py, "
                   "GaussianNB._partial_fit: `for _i, y_i in enumerate(unique_y):` (line 166) — noise for the classes "
                   "present only")

ROWS: tuple[Row, ...] = (
    # ---- IBM diffprivlib 0.6.6: tools ------------------------------------------------------------------
    Row("diffprivlib.tools.mean", "diffprivlib", _dpl("tools_mean"), "noisy mean of one column in [-1, 1]",
        ("--output", "vector", "--neighbours", "replace", *BOX), "replace", "holds",
        "Laplace with sensitivity (u − l)/n on the mean, truncated to [l, u]: the textbook mean for a public "
        "size n (replace neighbours); truncation is post-processing."),
    Row("diffprivlib.tools.var", "diffprivlib", _dpl("tools_var"), "noisy variance of one column in [-1, 1]",
        ("--output", "vector", "--neighbours", "replace", *BOX), "replace", "holds",
        "Bounded-domain Laplace (Holohan et al. 2018, the library's own analysis) with the variance's replace "
        "sensitivity (u − l)²(n − 1)/n²."),
    Row("diffprivlib.tools.std", "diffprivlib", _dpl("tools_std"), "noisy standard deviation of one column",
        ("--output", "vector", "--neighbours", "replace", *BOX), "replace", "holds",
        "The square root of tools.var's release: post-processing."),
    Row("diffprivlib.tools.histogram", "diffprivlib", _dpl("tools_histogram"), "4-bin histogram of one column",
        ("--output", "vector", "--neighbours", "add-remove", *BOX), "add-remove", "holds",
        "Truncated geometric noise of sensitivity 1 on every bin: one record added or removed changes one bin by "
        "one (the add/remove sensitivity; under replace it would be 2)."),
    Row("diffprivlib.tools.median", "diffprivlib", _dpl("tools_median"), "median of one column in [-1, 1]",
        ("--output", "vector", "--neighbours", "add-remove", *BOX), "add-remove", "holds",
        "Exponential mechanism over the intervals between the sorted records (Smith 2011), utility "
        "−|i − n/2| of sensitivity ≤ 1 under either relation, weights exp(εu/2)."),
    # ---- IBM diffprivlib 0.6.6: models -----------------------------------------------------------------
    Row("diffprivlib.models.KMeans", "diffprivlib", _dpl("models_kmeans"), "k = 2 cluster centres",
        ("--output", "centroids", *BOX), "add-remove", "violated", KMEANS_WHY,
        reproduction="benchmarks/reproductions/diffprivlib_kmeans_empty_cluster.py", line=KMEANS_LINE),
    Row("diffprivlib.models.LogisticRegression", "diffprivlib", "diffprivlib.models:LogisticRegression",
        "coef_ and intercept_ of a binary classifier",
        ("--output", "parameters", "--neighbours", "replace", "--param", "data_norm=1.4142135623730951",
         "--classes", "0,1", *BOX), "replace", "holds",
        "Objective perturbation (Chaudhuri, Monteleoni & Sarwate 2011), whose analysis fixes n (replace).  "
        "See the notes for an accounting term we read as too small when ‖x‖ > 1; no pair is expected to "
        "show it at these sample sizes.",
        supervised="the estimator class itself (fit(X, y) detected), labels 0/1, parameters released"),
    Row("diffprivlib.models.GaussianNB", "diffprivlib", _dpl("models_gaussian_nb"),
        "theta_, var_ and class_prior_ of a binary classifier",
        ("--output", "vector", "--neighbours", "replace", "--classes", "0,1", *BOX), "replace", "holds",
        "Noisy class counts (geometric, ε/3, then made to sum to the public n), noisy sums and sums of squares "
        "per class and feature (Laplace / bounded Laplace, ε/3 each split over the features), the rest "
        "post-processing (Vaidya et al. 2013).  Every class is present in every dataset (class anchors).",
        supervised="a function fn(X, y, epsilon, rng), labels 0/1, one anchor record per class"),
    Row("diffprivlib.models.GaussianNB (a class may be absent)", "diffprivlib", _dpl("models_gaussian_nb"),
        "the same, on datasets that may lack a class",
        ("--output", "vector", "--neighbours", "replace", "--classes", "0,1", "--no-label-anchors", *BOX),
        "replace", "violated", NB_CLASSES_WHY,
        reproduction="benchmarks/reproductions/diffprivlib_gaussian_nb_classes.py", line=NB_CLASSES_LINE,
        supervised="a function fn(X, y, epsilon, rng), labels 0/1, no anchors"),
    Row("diffprivlib.models.LinearRegression", "diffprivlib", _dpl("models_linear_regression"),
        "coef_ and intercept_ of a regression on one feature (the first column)",
        ("--output", "vector", "--neighbours", "replace", "--label-range", "0,3", *BOX), "replace", "violated",
        LINREG_WHY, reproduction="benchmarks/reproductions/diffprivlib_linear_regression.py", line=LINREG_LINE,
        supervised="a function fn(X, y, epsilon, rng): the first feature column, the label column as a "
                   "target in [0, 3]"),
    # ---- diffprivlib-fix 0.6.7 -------------------------------------------------------------------------
    Row("diffprivlib-fix: models.KMeans", "diffprivlib-fix", _dpl("models_kmeans"), "k = 2 cluster centres",
        ("--output", "centroids", *BOX), "add-remove", "violated",
        "The fork changes one line of diffprivlib (LogisticRegression's `multi_class`, for scikit-learn 1.8); "
        "k_means.py is byte for byte 0.6.6's, so the empty-cluster leak is still there.  " + KMEANS_WHY,
        reproduction="benchmarks/reproductions/diffprivlib_kmeans_empty_cluster.py", line=KMEANS_LINE),
    Row("diffprivlib-fix as pip resolves it: models.KMeans", "diffprivlib-fix-latest", _dpl("models_kmeans"),
        "k = 2 cluster centres", ("--output", "centroids", *BOX), "add-remove", "broken",
        "The fork declares `scikit-learn>=1.4.0`; pip resolves the newest scikit-learn, whose `sklearn.tree._tree` "
        "no longer has `DOUBLE`, and `import diffprivlib` fails (diffprivlib/models/forest.py imports it at "
        "package import): every call raises ImportError, a finding, and nothing is released."),
    Row("diffprivlib-fix: models.LogisticRegression", "diffprivlib-fix", "diffprivlib.models:LogisticRegression",
        "coef_ and intercept_ of a binary classifier",
        ("--output", "parameters", "--neighbours", "replace", "--param", "data_norm=1.4142135623730951",
         "--classes", "0,1", *BOX), "replace", "holds",
        "The one file the fork changed (the `multi_class` argument dropped); the privacy code is 0.6.6's.",
        supervised="the estimator class itself, labels 0/1, parameters released"),
    Row("diffprivlib-fix: models.LinearRegression", "diffprivlib-fix", _dpl("models_linear_regression"),
        "coef_ and intercept_ of a regression on one feature (the first column)",
        ("--output", "vector", "--neighbours", "replace", "--label-range", "0,3", *BOX), "replace", "violated",
        "Unchanged by the fork.  " + LINREG_WHY,
        reproduction="benchmarks/reproductions/diffprivlib_linear_regression.py", line=LINREG_LINE,
        supervised="a function fn(X, y, epsilon, rng): the first feature column, the label column as a "
                   "target in [0, 3]"),
    # ---- OpenDP 0.16 -------------------------------------------------------------------------------------
    Row("opendp: clamp >> sum >> laplace", "opendp", _odp("laplace_sum"), "noisy sum of one column in [-1, 1]",
        ("--output", "vector", "--neighbours", "add-remove", *BOX), "add-remove", "holds",
        "The Laplace mechanism on a clamped sum; OpenDP's privacy map (checked: map(1) ≤ ε) accounts for "
        "floating-point summation."),
    Row("opendp: count >> laplace", "opendp", _odp("laplace_count"), "noisy record count",
        ("--output", "vector", "--neighbours", "add-remove", *BOX), "add-remove", "holds",
        "Discrete Laplace (geometric) noise on an integer count of sensitivity 1."),
    Row("opendp: count_by_categories >> laplace", "opendp", _odp("histogram"),
        "counts of 4 bins and a null category",
        ("--output", "vector", "--neighbours", "add-remove", *BOX), "add-remove", "holds",
        "Discrete Laplace noise on every category count: one record changes one count by one (L1 sensitivity 1)."),
    Row("opendp: clamp >> resize >> mean >> laplace", "opendp", _odp("bounded_mean"),
        "noisy mean of one column, resized to 10 records",
        ("--output", "vector", "--neighbours", "add-remove", *BOX), "add-remove", "holds",
        "The mean of a dataset resized to a public size (padded with 0 or cut at random) has a bounded "
        "sensitivity under add/remove; OpenDP's privacy map states it and the Laplace scale is calibrated to "
        "it (map(1) ≤ ε)."),
)


@dataclass
class Run:
    """One ``dpaudit estimate-eps`` run of one row, and what it said."""

    row: str
    command: str
    exit_code: int
    wall_seconds: float
    verdict: str | None = None
    epsilon_lower_bound: float | None = None
    ceiling: float | None = None
    samples: int | None = None
    pair: dict[str, Any] | None = None
    event: str | None = None
    counts: dict[str, Any] | None = None
    findings: list[dict[str, Any]] = field(default_factory=list)
    leak_warnings: list[str] = field(default_factory=list)
    randomness: str | None = None
    supervision: dict[str, Any] | None = None
    dpaudit_seconds: float | None = None
    budget: int | None = None         # releases the time budget planned (selection and certification)
    load_before: float | None = None  # the machine's 1-minute load average when the run started
    error: str | None = None


@dataclass
class Reproduction:
    """One reproduction script's run: its counts and bound, and whether it shows the violation."""

    script: str
    env: str
    command: str
    exit_code: int
    wall_seconds: float
    result: dict[str, Any] | None = None
    error: str | None = None

    @property
    def shows_violation(self) -> bool:
        return bool(self.result) and float(self.result.get("epsilon_lower_bound", 0.0)) > CLAIM
