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

from benchmarks.libraries.finding_texts import (
    COUNT_GEOMETRIC_LINE,
    COUNT_GEOMETRIC_WHY,
    KMEANS_LINE,
    KMEANS_WHY,
    LABELS_WHY,
    LINREG_LINE,
    LINREG_WHY,
    LOGREG_LABELS_LINE,
    NB_CLASSES_LINE,
    NB_CLASSES_WHY,
    TREE_LABELS_LINE,
)

CLAIM = 1.0
DIFFPRIVLIB_FILE = "benchmarks/libraries/diffprivlib_plugins.py"
OPENDP_FILE = "benchmarks/libraries/opendp_plugins.py"
PYDP_FILE = "benchmarks/libraries/pydp_plugins.py"
PIPELINEDP_FILE = "benchmarks/libraries/pipelinedp_plugins.py"
SMALL_FILE = "benchmarks/libraries/smallpkg_plugins.py"


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
    Environment("python-dp", "python-dp 1.1.5 (PyDP: Google's differential privacy library)",
                ("python-dp==1.1.5", "numpy", "scipy"), "python-dp", "1.1.5"),
    Environment("pipeline-dp", "pipeline-dp 0.3.1 (OpenMined/Google, on python-dp), its local engine",
                ("pipeline-dp==0.3.1", "numpy", "scipy"), "pipeline-dp", "0.3.1"),
    Environment("diffpriv-pure", "diffpriv-pure 0.1.0 (\"zero-dependency pure-stdlib differential privacy\")",
                ("diffpriv-pure==0.1.0", "numpy", "scipy"), "diffpriv-pure", "0.1.0"),
    Environment("diff-priv-laplace", "diff-priv-laplace-python 1.0.5 (\"Python library for Laplace differential "
                "privacy\")", ("diff-priv-laplace-python==1.0.5", "numpy", "scipy"), "diff-priv-laplace-python",
                "1.0.5"),
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
    upstream: str | None = None    # the finding's status in the library's public tracker (see upstream.py)
    report: str | None = None      # the upstream-ready report of a finding not known upstream (docs/findings/)

    @property
    def library(self) -> str:
        return ENVIRONMENTS[self.env].title

    @property
    def time_budget(self) -> float:
        """The ε estimate's time budget (``--time-budget`` in the options, else dpaudit's default 60 s)."""
        opts = list(self.options)
        return float(opts[opts.index("--time-budget") + 1]) if "--time-budget" in opts else 60.0

    @property
    def wall_budget(self) -> float:
        """The row's budget for the whole command: dpaudit's own cut (1.5 × the time budget) and 30 s of
        start-up.  A run that takes longer says so in its row and is never counted as "no violation"; the
        harness stops it at twice this."""
        return 1.5 * self.time_budget + 30.0


def _dpl(fn: str) -> str:
    return f"{DIFFPRIVLIB_FILE}:{fn}"


def _odp(fn: str) -> str:
    return f"{OPENDP_FILE}:{fn}"


def _pydp(fn: str) -> str:
    return f"{PYDP_FILE}:{fn}"


def _pldp(fn: str) -> str:
    return f"{PIPELINEDP_FILE}:{fn}"


def _small(fn: str) -> str:
    return f"{SMALL_FILE}:{fn}"


FAST = ("--time-budget", "45")  # the new libraries' rows: a 45 s budget (dpaudit's default is 60 s), for the panel's time


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
    Row("diffprivlib.models.LogisticRegression (classes read from y: a class may be absent)", "diffprivlib",
        _dpl("models_logistic_regression"), "coef_ and intercept_ of a classifier on labels 0, 1, 2",
        ("--output", "vector", "--neighbours", "replace", "--classes", "0,1,2", "--no-label-anchors", *BOX, *FAST),
        "replace",
        "violated", LABELS_WHY + "LogisticRegression has no parameter to state the classes: with two classes present "
        "it fits one binary model (3 numbers), with three one model per class (9 numbers).  Reported upstream for "
        "this class (issue #106).", reproduction="benchmarks/reproductions/diffprivlib_classes_from_labels.py "
        "--model LogisticRegression", line=LOGREG_LABELS_LINE,
        supervised="a function fn(X, y, epsilon, rng), labels 0/1/2, no anchors"),
    Row("diffprivlib.models.DecisionTreeClassifier (no classes given: a class may be absent)", "diffprivlib",
        _dpl("models_decision_tree"), "predict_proba at 9 public points of a depth-2 tree",
        ("--output", "vector", "--neighbours", "replace", "--classes", "0,1", "--no-label-anchors", *BOX, *FAST),
        "replace",
        "violated", LABELS_WHY + "Here the class *can* be told the classes (`classes=`); without them it warns "
        "(PrivacyLeakWarning) and reads them from y: predict_proba then has one column per class present.",
        reproduction="benchmarks/reproductions/diffprivlib_classes_from_labels.py --model DecisionTreeClassifier",
        line=TREE_LABELS_LINE, supervised="a function fn(X, y, epsilon, rng), labels 0/1, no anchors"),
    Row("diffprivlib.models.RandomForestClassifier (no classes given: a class may be absent)", "diffprivlib",
        _dpl("models_random_forest"), "predict_proba at 9 public points of a forest of 5 depth-2 trees",
        ("--output", "vector", "--neighbours", "replace", "--classes", "0,1", "--no-label-anchors", *BOX, *FAST),
        "replace",
        "violated", LABELS_WHY + "As for DecisionTreeClassifier: `classes=` would prevent it; without it a "
        "PrivacyLeakWarning, and predict_proba has one column per class present.",
        reproduction="benchmarks/reproductions/diffprivlib_classes_from_labels.py --model RandomForestClassifier",
        line=TREE_LABELS_LINE, supervised="a function fn(X, y, epsilon, rng), labels 0/1, no anchors"),
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
    Row("diffprivlib-fix: models.LogisticRegression (classes read from y: a class may be absent)", "diffprivlib-fix",
        _dpl("models_logistic_regression"), "coef_ and intercept_ of a classifier on labels 0, 1, 2",
        ("--output", "vector", "--neighbours", "replace", "--classes", "0,1,2", "--no-label-anchors", *BOX, *FAST),
        "replace",
        "violated", "The fork's one change is in this file, but `self.classes_ = np.unique(y)` is untouched.  "
        + LABELS_WHY, reproduction="benchmarks/reproductions/diffprivlib_classes_from_labels.py --model "
        "LogisticRegression", line=LOGREG_LABELS_LINE,
        supervised="a function fn(X, y, epsilon, rng), labels 0/1/2, no anchors"),
    Row("diffprivlib-fix: models.GaussianNB (a class may be absent)", "diffprivlib-fix", _dpl("models_gaussian_nb"),
        "theta_, var_ and class_prior_ of a binary classifier, on datasets that may lack a class",
        ("--output", "vector", "--neighbours", "replace", "--classes", "0,1", "--no-label-anchors", *BOX),
        "replace", "violated", "naive_bayes.py is 0.6.6's in the fork.  " + NB_CLASSES_WHY,
        reproduction="benchmarks/reproductions/diffprivlib_gaussian_nb_classes.py", line=NB_CLASSES_LINE,
        supervised="a function fn(X, y, epsilon, rng), labels 0/1, no anchors"),
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
    # ---- python-dp 1.1.5 (Google's library) ----------------------------------------------------------------
    Row("python-dp: BoundedSum", "python-dp", _pydp("bounded_sum"), "noisy sum of one column in [-1, 1]",
        ("--output", "vector", "--neighbours", "add-remove", *BOX, *FAST), "add-remove", "holds",
        "Laplace noise of scale max(|l|, |u|)·l0·linf/ε on the clamped sum (l0 = linf = 1: one record per person), "
        "the library's add/remove analysis; its noise is the secure (snapped/discretised) Laplace."),
    Row("python-dp: BoundedMean", "python-dp", _pydp("bounded_mean"), "noisy mean of one column in [-1, 1]",
        ("--output", "vector", "--neighbours", "add-remove", *BOX, *FAST), "add-remove", "holds",
        "A noisy count and a noisy sum of the values centred on the box's middle (ε/2 each), their ratio clamped "
        "to the bounds: post-processing of two ε/2-DP releases (add/remove)."),
    Row("python-dp: BoundedVariance", "python-dp", _pydp("bounded_variance"), "noisy variance of one column",
        ("--output", "vector", "--neighbours", "add-remove", *BOX, *FAST), "add-remove", "holds",
        "Noisy count, sum and sum of squares (centred), ε/3 each, combined and clamped: post-processing."),
    Row("python-dp: Count", "python-dp", _pydp("count"), "noisy record count",
        ("--output", "vector", "--neighbours", "add-remove", *BOX, *FAST), "add-remove", "holds",
        "Laplace (secure, integer) noise on a count of sensitivity l0·linf = 1."),
    Row("python-dp: Max", "python-dp", _pydp("maximum"), "the largest value of one column in [-1, 1]",
        ("--output", "vector", "--neighbours", "add-remove", *BOX, *FAST), "add-remove", "holds",
        "The 1.0 quantile of a noisy quantile tree (Laplace noise on every level's counts, split over the levels), "
        "post-processed: one record changes one count per level."),
    Row("python-dp: Median", "python-dp", _pydp("median"), "the median of one column in [-1, 1]",
        ("--output", "vector", "--neighbours", "add-remove", *BOX, *FAST), "add-remove", "holds",
        "The 0.5 quantile of the same noisy quantile tree."),
    # ---- pipeline-dp 0.3.1, local engine ---------------------------------------------------------------
    Row("pipeline-dp: COUNT", "pipeline-dp", _pldp("count"), "noisy counts of 2 public partitions",
        ("--output", "vector", "--neighbours", "add-remove", *BOX, *FAST), "add-remove", "holds",
        "Contribution bounding to 1 partition and 1 record per privacy unit, then Laplace noise of sensitivity "
        "l0·linf = 1 per partition: one unit changes one partition's count by one."),
    Row("pipeline-dp: SUM", "pipeline-dp", _pldp("sum_"), "noisy sums of one column in 2 public partitions",
        ("--output", "vector", "--neighbours", "add-remove", *BOX, *FAST), "add-remove", "holds",
        "The same bounding, values clamped to [min_value, max_value] = [-1, 1], Laplace noise of sensitivity "
        "max(|min|, |max|) = 1 per partition."),
    Row("pipeline-dp: MEAN", "pipeline-dp", _pldp("mean"), "noisy means of one column in 2 public partitions",
        ("--output", "vector", "--neighbours", "add-remove", *BOX, *FAST), "add-remove", "holds",
        "A noisy count and a noisy sum of the values centred on the middle of [min, max], the budget split between "
        "them, their ratio clamped: post-processing (add/remove of a privacy unit)."),
    # ---- diffpriv-pure 0.1.0 ---------------------------------------------------------------------------
    Row("diffpriv-pure: private_sum", "diffpriv-pure", _small("pure_sum"), "noisy sum of one column in [-1, 1]",
        ("--output", "vector", "--neighbours", "replace", *BOX, *FAST), "replace", "holds",
        "Laplace noise with sensitivity hi − lo = 2 on the clamped sum: the replace sensitivity (and more than "
        "the add/remove one, max(|lo|, |hi|) = 1, for these bounds)."),
    Row("diffpriv-pure: private_mean", "diffpriv-pure", _small("pure_mean"), "noisy mean of one column in [-1, 1]",
        ("--output", "vector", "--neighbours", "replace", *BOX, *FAST), "replace", "holds",
        "Laplace noise with sensitivity (hi − lo)/n on the clamped mean: the textbook mean for a public size n "
        "(replace)."),
    Row("diffpriv-pure: private_count", "diffpriv-pure", _small("pure_count"), "noisy record count",
        ("--output", "vector", "--neighbours", "add-remove", *BOX, *FAST), "add-remove", "violated",
        COUNT_GEOMETRIC_WHY, reproduction="benchmarks/reproductions/diffpriv_pure_count.py",
        line=COUNT_GEOMETRIC_LINE),
    # ---- diff-priv-laplace-python 1.0.5 -----------------------------------------------------------------
    Row("diff-priv-laplace-python: anonymize_count", "diff-priv-laplace", _small("laplace_count"),
        "noisy record count", ("--output", "vector", "--neighbours", "add-remove", *BOX, *FAST), "add-remove",
        "holds", "numpy's Laplace with scale 1/ε on a count (CountGlobalSensitivity = 1)."),
    Row("diff-priv-laplace-python: anonymize_sum", "diff-priv-laplace", _small("laplace_sum"),
        "noisy sum of one column in [-1, 1]", ("--output", "vector", "--neighbours", "add-remove", *BOX, *FAST),
        "add-remove", "holds", "Laplace with sensitivity max(|lower|, |upper|) = 1: the add/remove sensitivity of a "
        "clamped sum."),
    Row("diff-priv-laplace-python: anonymize_mean", "diff-priv-laplace", _small("laplace_mean"),
        "noisy mean of one column in [-1, 1]", ("--output", "vector", "--neighbours", "replace", *BOX, *FAST),
        "replace", "holds", "Laplace with sensitivity (upper − lower)/n: the replace sensitivity of a mean of n "
        "records."),
    Row("diff-priv-laplace-python: anonymize_variance", "diff-priv-laplace", _small("laplace_variance"),
        "noisy variance of one column in [-1, 1]", ("--output", "vector", "--neighbours", "replace", *BOX, *FAST),
        "replace", "holds", "Laplace with sensitivity (upper − lower)²/n, at least the replace sensitivity "
        "(u − l)²(n − 1)/n² of the population variance."),
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
    leak_sites: list[dict[str, Any]] = field(default_factory=list)  # where dpaudit says the code leaks (first 3)
    load_before: float | None = None  # the machine's 1-minute load average when the run started
    wall_budget: float | None = None  # the row's budget for the whole command (Row.wall_budget)
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
    control: dict[str, Any] | None = None  # the same script with --patched: the library line patched
    control_command: str | None = None
    control_seconds: float | None = None
    control_error: str | None = None

    @property
    def shows_violation(self) -> bool:
        return bool(self.result) and float(self.result.get("epsilon_lower_bound", 0.0)) > CLAIM
