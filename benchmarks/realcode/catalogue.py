"""The corpus: real DP clustering and statistics code nobody here wrote, where it comes from, and each row's truth.

Harness-side (``benchmarks/bench_realcode.py`` builds the environments and runs the rows).  An
:class:`Environment` is a virtual environment with pinned registry packages, and, for code that lives in a
public repository, a copy of the files a user takes from a checkout (:class:`Source`: the repository, its
pinned commit, the files) put on the interpreter's path.  A :class:`Mutant` is an environment layered on
another: the same packages, a copy of the code with one small :class:`Patch` — a planted bug, so that every
correct implementation has a broken twin whose line is known.  Mutants whose mistake sits in the wrapper (a
call at 10·ε) are wrapper functions instead, in the same environment.  An :class:`REnvironment` is an R library
folder instead of a venv: an R package installed from a checkout, its rows programs (``cmd:Rscript …``) that
speak dpaudit's protocol for programs (``docs/executables.md``).

Every :class:`Row` is one ``dpaudit estimate-eps`` command a user runs on one wrapper function, with the
claim the code states; ``expected`` is ``holds`` or ``violated``, and ``reproduction`` the standalone script
(numpy — or R — and the library only) that establishes it: for a violation, a bound above the claim and the line
it comes from; for correct code, what its pair certifies (at or below the claim).
"""

from __future__ import annotations

from dataclasses import dataclass

CLAIM = 1.0
HERE = "benchmarks/realcode"
REPRO = f"{HERE}/reproductions"
GOOGLE_FILE = f"{HERE}/google_clustering_plugins.py"
CEDS_FILE = f"{HERE}/cedskmeans_plugins.py"
IBIDAAS_FILE = f"{HERE}/ibidaas_plugins.py"
EMMC_FILE = f"{HERE}/emmc_plugins.py"
DBSCAN_FILE = f"{HERE}/dpdbscan_plugins.py"
MUTANTS_FILE = f"{HERE}/statistics_mutants_plugins.py"
DIFFPRIV_R_FILE = f"{HERE}/diffpriv_plugins.R"  # a program in R: the rows name its functions as cmd: commands
DIFFPRIVLIB_FILE = "benchmarks/libraries/diffprivlib_plugins.py"  # the library panel's plug-ins, reused as they are
PYDP_FILE = "benchmarks/libraries/pydp_plugins.py"
WRAPPER_FILES = (GOOGLE_FILE, CEDS_FILE, IBIDAAS_FILE, EMMC_FILE, DBSCAN_FILE, MUTANTS_FILE, DIFFPRIVLIB_FILE,
                 PYDP_FILE)
PROGRAM_FILES = (DIFFPRIV_R_FILE,)  # wrappers that are programs (docs/executables.md), not Python modules


@dataclass(frozen=True)
class Source:
    """Files a user copies from a public repository's checkout (``--sources DIR/<owner>+<name>/``)."""

    repo: str                  # owner/name
    commit: str                # the commit the corpus was written against (the checkout must be at it)
    files: tuple[str, ...]     # paths in the repository, each copied to the environment's src/<its last part>

    @property
    def folder(self) -> str:
        return self.repo.replace("/", "+")


@dataclass(frozen=True)
class Environment:
    """A virtual environment built from the registry (pinned), with a source copy on its path when it has one."""

    key: str
    title: str
    requirements: tuple[str, ...]
    source: Source | None = None
    python: str = "python3.11"  # the interpreter the venv is made from (looked up on PATH)

    @property
    def packages(self) -> tuple[str, ...]:
        """The distributions whose installed versions the results record."""
        return tuple(r.split("=")[0].split("<")[0].split(">")[0] for r in self.requirements)


@dataclass(frozen=True)
class REnvironment:
    """An R library folder instead of a venv: an R package installed by ``R CMD INSTALL`` from a copy of its
    checkout's package files, beside R and the R packages Debian ships (``r-cran-*``: nothing is downloaded).

    The rows run its programs as ``cmd:Rscript <file> <function>``; the harness adds ``--library <the folder>``
    (dpaudit's workers start a program with a scrubbed environment, so ``R_LIBS`` would not reach it)."""

    key: str
    title: str
    package: str                          # the R package's name, as its DESCRIPTION names it
    source: Source                        # its repository; files: what R CMD INSTALL needs of the checkout
    depends: tuple[tuple[str, str], ...]  # (R package, the Debian package that brings it), all recorded

    @property
    def apt_get(self) -> str:
        """The set-up line that brings R and every R package this one needs."""
        return "apt-get install r-base-core " + " ".join(debian for _, debian in self.depends)


@dataclass(frozen=True)
class Patch:
    """A planted bug: ``old`` (found exactly once) replaced by ``new`` in ``file`` of the code's copy."""

    file: str   # relative to the copy: src/ for a source, site-packages for a registry package
    old: str
    new: str


@dataclass(frozen=True)
class Mutant:
    """An environment layered on ``base``: its packages, and a patched copy of ``copies`` shadowing the code."""

    key: str
    base: str
    copies: str       # the folder copied and patched: a package in site-packages, or "src" (the source copy)
    patch: Patch
    what: str         # the mistake, in a maintainer's words


@dataclass(frozen=True)
class Row:
    """One audited function: the command's options, what the code claims, and its truth."""

    name: str
    env: str                      # an Environment or a Mutant key
    spec: str                     # what -m names (a wrapper file's function)
    kind: str                     # correct | broken | mutant
    release: str
    options: tuple[str, ...]
    neighbours: str
    expected: str                 # holds | violated
    why: str
    reproduction: str             # script and its arguments, run in the row's interpreter
    line: str | None = None       # where it leaks, in the code's words (mutants: the patched line is found at build)
    upstream: str | None = None   # a broken implementation's finding: its tracker's status
    report: str | None = None     # docs/findings/ report of a finding not known upstream


NUMPY, SCIPY, SKLEARN = "numpy==2.4.6", "scipy==1.17.1", "scikit-learn==1.9.1"
ENVIRONMENTS: dict[str, Environment] = {env.key: env for env in (
    Environment("google-dp", "google/differential-privacy learning/clustering, with dp-accounting 0.6.0",
                ("dp-accounting==0.6.0", "absl-py==2.5.1", NUMPY, SCIPY, SKLEARN),
                Source("google/differential-privacy", "b5b0286e313b64a692abfc8c528d54ef47d960a0",
                       ("learning/clustering",))),
    Environment("cedskmeans", "lbnl-cybersecurity/CEDSKMeans (cedskmeans 0.1.0), with its pyproject's numpy < 2",
                ("numpy==1.26.4", "scipy==1.16.3", SKLEARN, "sympy==1.14.0", "pandas==2.3.3", "ray==2.60.0"),
                Source("lbnl-cybersecurity/CEDSKMeans", "9a476e0b449373cdbbcb9c76bd7b722eab644625",
                       ("src/cedskmeans",))),
    Environment("ibidaas", "ibidaas/knowledge_repository dpkmeans.py (COMPSs DP k-means), PyCOMPSs shimmed",
                (NUMPY, SCIPY, SKLEARN),
                Source("ibidaas/knowledge_repository", "e073ec28506faf61b33f695eb6befd8026446fde",
                       ("tools_technologies/sources/batch_processing/unspmf/dpkmeans.py",))),
    Environment("emmc", "UzL-PrivSec/dp-kmeans-max-cover emmc.py (EMMC)", (NUMPY, SKLEARN),
                Source("UzL-PrivSec/dp-kmeans-max-cover", "9798611a4e922d66cbc4f104be7ddf22432c9936", ("emmc.py",))),
    Environment("dpdbscan", "QiuTedYuan/DpDBSCAN (DP-DBSCAN with spans); unionfind 0.1.2, the last for Python 3.11",
                ("numpy==1.26.4", SKLEARN, "nptyping==2.5.0", "unionfind==0.1.2"),
                Source("QiuTedYuan/DpDBSCAN", "ba4d5f43f1c59ea0def05a15b5cffe6f801858e7",
                       ("datatype_grid.py", "datatype_point.py", "histogram.py", "noise.py"))),
    Environment("diffprivlib", "IBM diffprivlib 0.6.6 (with the scikit-learn < 1.8 it needs)",
                ("diffprivlib==0.6.6", "scikit-learn==1.7.2", NUMPY, SCIPY)),
    Environment("python-dp", "python-dp 1.1.5 (PyDP: Google's differential privacy library)",
                ("python-dp==1.1.5", NUMPY)),
)}

R_ENVIRONMENTS: dict[str, REnvironment] = {env.key: env for env in (
    REnvironment("diffpriv-r", "brubinstein/diffpriv (the R package diffpriv, \"Easy Differential Privacy\"), "
                 "installed from its checkout with R CMD INSTALL", "diffpriv",
                 Source("brubinstein/diffpriv", "36d4a0d9b1e76cb15cdee321f5b935c96324c8ef",
                        ("DESCRIPTION", "NAMESPACE", "LICENSE", "R")),
                 (("gsl", "r-cran-gsl"), ("jsonlite", "r-cran-jsonlite"))),
)}

MUTANTS: dict[str, Mutant] = {m.key: m for m in (
    Mutant("google-dp+noise-scale", "google-dp", "src",
           Patch("clustering/central_privacy_utils.py",
                 "      scale=average_privacy_param.gaussian_standard_deviation, size=dim)",
                 "      scale=average_privacy_param.gaussian_standard_deviation\n"
                 "      * np.max(np.linalg.norm(nonprivate_points, axis=1), initial=0.0)\n"
                 "      / average_privacy_param.sensitivity, size=dim)"),
           "get_private_average scales the Gaussian noise by the largest norm among the node's own records "
           "instead of the public radius (a local sensitivity)"),
    Mutant("google-dp+branch", "google-dp", "src",
           Patch("clustering/central_privacy_utils.py",
                 "  sum_points = np.sum(nonprivate_points, axis=0)\n",
                 "  if len(nonprivate_points) == 1:  # a single point is its own average\n"
                 "    return np.array(nonprivate_points[0], dtype=float)\n"
                 "  sum_points = np.sum(nonprivate_points, axis=0)\n"),
           "get_private_average returns a node holding one record as its own average, with no noise"),
    Mutant("diffprivlib+noise-scale", "diffprivlib", "diffprivlib",
           Patch("diffprivlib/tools/utils.py", "sensitivity=(upper - lower) / array.size, lower=lower,",
                 "sensitivity=np.ptp(array) / array.size, lower=lower,"),
           "tools.mean calibrates its Laplace noise to the data's own range instead of the bounds'"),
    Mutant("diffprivlib+branch", "diffprivlib", "diffprivlib",
           Patch("diffprivlib/tools/utils.py",
                 "    actual_mean = _func(array, axis=axis, dtype=dtype, keepdims=keepdims)\n",
                 "    actual_mean = _func(array, axis=axis, dtype=dtype, keepdims=keepdims)\n"
                 "    if np.ptp(array) == 0:  # every value the same: nothing to hide\n"
                 "        return actual_mean\n"),
           "tools.mean returns the exact mean when every value is the same"),
)}

CENTROIDS = ("--output", "centroids", "--bounds", "-1,1")
VECTOR = ("--output", "vector", "--bounds", "-1,1")


def _google(name: str, env: str, fn: str, kind: str, expected: str, why: str, case: str,
            line: str | None = None) -> Row:
    return Row(name, env, f"{GOOGLE_FILE}:{fn}", kind, "k = 2 centres (LSH coreset, then k-means++)",
               (*CENTROIDS, "--delta", "1e-6"), "add-remove", expected, why,
               f"{REPRO}/reproduce_google.py --case {case}", line)


def _row(name: str, env: str, spec: str, kind: str, release: str, options: tuple[str, ...], expected: str, why: str,
         reproduction: str, line: str | None = None, neighbours: str = "add-remove", **finding: str) -> Row:
    return Row(name, env, spec, kind, release, options, neighbours, expected, why, reproduction, line, **finding)


def _broken(name: str, env: str, spec: str, release: str, options: tuple[str, ...], why: str, reproduction: str,
            line: str, report: str) -> Row:
    """A broken implementation: expected violated, its finding not known upstream, its report written."""
    return Row(name, env, spec, "broken", release, options, "add-remove", "violated", why, reproduction, line,
               upstream="not found upstream", report=f"docs/findings/{report}.md")


GOOGLE_WHY = ("LSH prefix tree with discrete-Laplace counts at every level, Gaussian noisy sums at the leaves, "
              "k-means++ on the private coreset (post-processing); dp-accounting's PLD accountant calibrates the "
              "noise for the whole composition at (ε, δ) under add/remove.")
DPL_MEAN = f"{DIFFPRIVLIB_FILE}:tools_mean"
DPL_MEAN_OPTIONS = ("--output", "vector", "--neighbours", "replace", "--bounds", "-1,1")
PYDP_OPTIONS = VECTOR
MEAN_REPRO = f"{REPRO}/reproduce_diffprivlib_mean.py --case"
PYDP_REPRO = f"{REPRO}/reproduce_pydp_mean.py --case"
R_MEAN = f"cmd:Rscript {DIFFPRIV_R_FILE}"
R_MEAN_OPTIONS = ("--output", "vector", "--neighbours", "replace", "--bounds", "-1,1")
R_MEAN_REPRO = f"{REPRO}/reproduce_diffpriv_mean.R --case"

ROWS: tuple[Row, ...] = (
    # ---- Google learning/clustering: correct, and its three mutants ---------------------------------------------
    _google("google learning/clustering", "google-dp", "lsh_clustering", "correct", "holds", GOOGLE_WHY, "claim"),
    _google("google learning/clustering at 10·ε", "google-dp", "lsh_clustering_at_ten_epsilon", "mutant", "violated",
            "The wrapper runs the clustering at 10·ε while the claim stays ε (noise calibrated for (10, 10⁻⁶)).",
            "ten-epsilon", f"{GOOGLE_FILE}: lsh_clustering_at_ten_epsilon calls cluster(X, 10.0 * epsilon, rng)"),
    _google("google learning/clustering: noise scale from the data", "google-dp+noise-scale", "lsh_clustering",
            "mutant", "violated", MUTANTS["google-dp+noise-scale"].what + ": records at the centre get no noise.",
            "noise-scale"),
    _google("google learning/clustering: one-record branch", "google-dp+branch", "lsh_clustering", "mutant",
            "violated", MUTANTS["google-dp+branch"].what + ": a lone record is released exactly.", "branch"),
    # ---- research and platform code: broken ----------------------------------------------------------------------
    _broken("CEDSKMeans DPKMeans", "cedskmeans", f"{CEDS_FILE}:dp_kmeans",
            "k = 2 centres (scikit-learn k-means + colored Gaussian noise)", (*CENTROIDS, "--delta", "1e-5"),
            "The noise covariance is computed from the data itself (`_calculate_color_noise_covariance(X)`: the centres' "
            "leave-one-out shifts, a local sensitivity, no bound on the records), so on ordinary data the centres come out "
            "almost exact (noise ~0.015 on 10 records) and one added record moves them by far more; identical records "
            "or a one-record cluster make the covariance singular and it raises LinAlgError.",
            f"{REPRO}/reproduce_cedskmeans.py", "cedskmeans/_cedskmeans.py:64 (`_add_dp_noise`): "
            "self.color_cov = self._calculate_color_noise_covariance(X)",
            "cedskmeans-data-dependent-noise"),
    _broken("ibidaas COMPSs dpkmeans", "ibidaas", f"{IBIDAAS_FILE}:dp_kmeans",
            "k = 2 centres (10 Lloyd iterations on noisy sums and counts)", CENTROIDS,
            "One Laplace number is drawn per iteration (`self._numerator_noise = self._laplace(...)`) and added to every "
            "coordinate of every cluster's sum, so a centre's x − y is exact: records on the diagonal give a centre "
            "exactly on it.  Also: the budget is not split over the 10 iterations, a cluster that owns no record keeps "
            "its start (`if sum_[1] != 0`), and the noisy count can reach 0: NaN and inf centres are real releases.",
            f"{REPRO}/reproduce_ibidaas.py", "dpkmeans.py:158 (`_recompute_centers`): self._numerator_noise = "
            "self._laplace((self._n_features + 1) / self._epsilon)",
            "ibidaas-dpkmeans-shared-noise"),
    _broken("EMMC (dp-kmeans-max-cover)", "emmc", f"{EMMC_FILE}:emmc",
            "up to k = 2 centres (none when no cluster is large enough)", (*CENTROIDS, "--delta", "1e-6"),
            "`noisy_average` draws the Gaussian noise of a centre with `scale=sigma**2`, the variance as standard "
            "deviation: for a large cluster σ < 1 and the noise is far too small (σ² ≈ 1.6·10⁻⁴ for 2,000 records).  "
            "A cluster below ~127 records releases nothing (its noisy count minus the margin is ≤ 0), so at 30 "
            "records the release is an empty set of centres; the records are also scaled by their own largest norm.",
            f"{REPRO}/reproduce_emmc.py", "emmc.py:262 (`noisy_average`): noise = np.random.normal(scale=sigma**2, "
            "size=(1, d))", "emmc-noise-variance-as-scale"),
    _broken("DpDBSCAN (main.py's DP-DBSCAN)", "dpdbscan", f"{DBSCAN_FILE}:dp_dbscan",
            "the spans, read at a public 21 × 21 lattice (1 in a core cell, else 0)", VECTOR,
            "The repository's main.py builds the grid over `low, high = pts.get_ranges()` — the data's own min and max — "
            "so the cell edges sit at the data's minimum and the spans move with it (the library's own comment: \"Point "
            "range should be an input to avoid privacy leakage\"); the exact n also sets the histogram's threshold.  A "
            "record far away makes the grid (and the union-find over every cell) huge.",
            f"{REPRO}/reproduce_dpdbscan.py", "main.py:71: low, high = pts.get_ranges()",
            "dpdbscan-grid-from-data-range"),
    _row("diffprivlib models.KMeans", "diffprivlib", f"{DIFFPRIVLIB_FILE}:models_kmeans", "broken",
         "k = 2 centres", CENTROIDS, "violated",
         "An empty cluster is skipped (`if cluster not in labels: continue`): no noise, it keeps its start centre, "
         "which lies inside the box (the library panel's finding).",
         "benchmarks/reproductions/diffprivlib_kmeans_empty_cluster.py",
         "diffprivlib/models/k_means.py (`_update_centers`): if cluster not in labels: continue",
         upstream="not found upstream (the library panel's finding)",
         report="docs/findings/diffprivlib-kmeans-empty-cluster.md"),
    # ---- diffprivlib tools.mean: correct, and its three mutants -----------------------------------------------
    _row("diffprivlib tools.mean", "diffprivlib", DPL_MEAN, "correct", "noisy mean of one column in [-1, 1]",
         DPL_MEAN_OPTIONS, "holds", "Truncated Laplace with sensitivity (u − l)/n on the mean (replace neighbours, n "
         "public); the truncation is post-processing.", f"{MEAN_REPRO} claim", neighbours="replace"),
    _row("diffprivlib tools.mean at 10·ε", "diffprivlib", f"{MUTANTS_FILE}:tools_mean_at_ten_epsilon", "mutant",
         "the same at 10·ε", DPL_MEAN_OPTIONS, "violated", "The wrapper passes 10·ε while the claim stays ε.",
         f"{MEAN_REPRO} ten-epsilon", f"{MUTANTS_FILE}: tools_mean_at_ten_epsilon", neighbours="replace"),
    _row("diffprivlib tools.mean: noise scale from the data", "diffprivlib+noise-scale", DPL_MEAN, "mutant",
         "the same, patched", DPL_MEAN_OPTIONS, "violated", MUTANTS["diffprivlib+noise-scale"].what + ".",
         f"{MEAN_REPRO} noise-scale", neighbours="replace"),
    _row("diffprivlib tools.mean: constant-column branch", "diffprivlib+branch", DPL_MEAN, "mutant",
         "the same, patched", DPL_MEAN_OPTIONS, "violated", MUTANTS["diffprivlib+branch"].what + ".",
         f"{MEAN_REPRO} branch", neighbours="replace"),
    # ---- python-dp BoundedMean: correct, and three wrapper mistakes ------------------------------------------
    _row("python-dp BoundedMean", "python-dp", f"{PYDP_FILE}:bounded_mean", "correct",
         "noisy mean of one column in [-1, 1]", PYDP_OPTIONS, "holds",
         "A noisy count and a noisy centred sum (ε/2 each), their ratio clamped: post-processing (add/remove); its "
         "noise is the library's secure Laplace.", f"{PYDP_REPRO} claim"),
    _row("python-dp BoundedMean at 10·ε", "python-dp", f"{MUTANTS_FILE}:bounded_mean_at_ten_epsilon", "mutant",
         "the same at 10·ε", PYDP_OPTIONS, "violated", "The wrapper passes 10·ε while the claim stays ε.",
         f"{PYDP_REPRO} ten-epsilon", f"{MUTANTS_FILE}: bounded_mean_at_ten_epsilon"),
    _row("python-dp BoundedMean: bounds from the data", "python-dp", f"{MUTANTS_FILE}:bounded_mean_data_bounds",
         "mutant", "the same with lower/upper = the data's min/max", PYDP_OPTIONS, "violated",
         "The wrapper reads the bounds off the data: the noise scales with the data's range and the release is "
         "clamped to it (a constant column is refused: lower = upper).", f"{PYDP_REPRO} noise-scale",
         f"{MUTANTS_FILE}: bounded_mean_data_bounds passes np.min(x), np.max(x)"),
    _row("python-dp BoundedMean: small-data branch", "python-dp", f"{MUTANTS_FILE}:bounded_mean_small_exact", "mutant",
         "the same, but the exact mean below 10 records", PYDP_OPTIONS, "violated",
         "The wrapper returns the exact mean of a dataset of fewer than 10 records.", f"{PYDP_REPRO} branch",
         f"{MUTANTS_FILE}: bounded_mean_small_exact: if len(x) < SMALL"),
    # ---- diffpriv (an R package, audited as a program): DPMechLaplace correct with three mutants; DPMechExponential
    _row("diffpriv DPMechLaplace mean", "diffpriv-r", f"{R_MEAN} laplace_mean", "correct",
         "noisy mean of the records clipped to [-1, 1]² (both coordinates)", R_MEAN_OPTIONS, "holds",
         "diffpriv's DPMechLaplace(target = the clipped mean, sensitivity = d·(hi − lo)/n, dims = d): `.rlap`'s "
         "difference of two exponentials of scale sensitivity/ε on each coordinate — ε-DP when one record is "
         "replaced (n public; under add/remove n itself would leak).", f"{R_MEAN_REPRO} claim", neighbours="replace"),
    _row("diffpriv DPMechLaplace mean at 10·ε", "diffpriv-r", f"{R_MEAN} laplace_mean_at_ten_epsilon", "mutant",
         "the same at 10·ε", R_MEAN_OPTIONS, "violated", "The wrapper releases with DPParamsEps(10·ε) while the "
         "claim stays ε.", f"{R_MEAN_REPRO} ten-epsilon",
         f"{DIFFPRIV_R_FILE}: laplace_mean_at_ten_epsilon passes budget = 10 * epsilon", neighbours="replace"),
    _row("diffpriv DPMechLaplace mean: noise scale from the data", "diffpriv-r", f"{R_MEAN} laplace_mean_data_range",
         "mutant", "the same, its sensitivity from the data's own range", R_MEAN_OPTIONS, "violated",
         "The wrapper gives DPMechLaplace the data's own range (Σ_j max − min of column j) over n as its "
         "sensitivity instead of the box's: records that are all equal get no noise.", f"{R_MEAN_REPRO} noise-scale",
         f"{DIFFPRIV_R_FILE}: laplace_mean_data_range: spread <- sum(apply(Xc, 2, function(x) diff(range(x))))",
         neighbours="replace"),
    _row("diffpriv DPMechLaplace mean: small-data branch", "diffpriv-r", f"{R_MEAN} laplace_mean_small_exact",
         "mutant", "the same, but the exact mean below 10 records", R_MEAN_OPTIONS, "violated",
         "The wrapper returns the exact mean of a dataset of fewer than 10 records.", f"{R_MEAN_REPRO} branch",
         f"{DIFFPRIV_R_FILE}: laplace_mean_small_exact: if (nrow(X) < SMALL)", neighbours="replace"),
    _broken("diffpriv DPMechExponential centre", "diffpriv-r", f"{R_MEAN} exponential_centre",
            "one centre of a public 3 × 3 grid of the box (1 × 2 centroids)",
            ("--output", "centroids", "--bounds", "-1,1"),
            "A DP \"pick a cluster centre\" with the library's documented exponential mechanism: DPMechExponential("
            "target = the quality function of the data, responseSet = the 9 grid points, sensitivity = 1), quality = "
            "the records within (hi − lo)/4 of the candidate in every coordinate (one record changes each count by "
            "at most 1).  But `releaseResponse` computes `pmf <- qualities * (ε / (2·sensitivity)); pmf <- pmf / "
            "sum(pmf)` — no exp: a candidate's probability is proportional to its count, so a candidate with no "
            "record is never released and one added record beside it makes it possible (ε = ∞).  A dataset "
            "with no record in any cell (the empty one) makes the pmf 0/0 and `sample` raises.",
            f"{REPRO}/reproduce_diffpriv_exponential.R",
            "diffpriv R/exponential_mechanism.R:86 (`releaseResponse`, DPMechExponential): pmf <- qualities * "
            "(getEpsilon(privacyParams) / (2*mechanism@sensitivity))", "diffpriv-exponential-without-exp"),
)


def select_rows(only: str, kinds: str = "") -> list[Row]:
    """Rows by name, environment key or kind (comma-separated; empty: every row)."""
    names = [n.strip() for n in only.split(",") if n.strip()]
    wanted_kinds = {k.strip() for k in kinds.split(",") if k.strip()}
    rows = [r for r in ROWS if (not names or r.name in names or r.env in names or r.env.split("+")[0] in names)
            and (not wanted_kinds or r.kind in wanted_kinds)]
    unknown = [n for n in names if not any(r.name == n or r.env == n or r.env.split("+")[0] == n for r in ROWS)]
    if unknown:
        raise SystemExit(f"Error: unknown row(s) or environment(s) {', '.join(unknown)}; rows: "
                         f"{'; '.join(r.name for r in ROWS)}")
    return rows
