"""The corpus: real DP clustering and statistics code nobody here wrote, where it comes from, and each row's truth.

Harness-side (``benchmarks/bench_realcode.py`` builds the environments and runs the rows).  An
:class:`Environment` is a virtual environment with pinned registry packages, and, for code that lives in a
public repository, a copy of the files a user takes from a checkout (:class:`Source`: the repository, its
pinned commit, the files) put on the interpreter's path.  A :class:`Mutant` is an environment layered on
another: the same packages, a copy of the code with one small :class:`Patch` — a planted bug, so that every
correct implementation has a broken twin whose line is known.  Mutants whose mistake sits in the wrapper (a
call at 10·ε) are wrapper functions instead, in the same environment.

Every :class:`Row` is one ``dpaudit estimate-eps`` command a user runs on one wrapper function, with the
claim the code states; ``expected`` is ``holds`` or ``violated``, and ``reproduction`` the standalone script
(numpy and the library only) that establishes it: for a violation, a bound above the claim and the line it
comes from; for correct code, what its pair certifies (at or below the claim).
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
DIFFPRIVLIB_FILE = "benchmarks/libraries/diffprivlib_plugins.py"  # the library panel's plug-ins, reused as they are
PYDP_FILE = "benchmarks/libraries/pydp_plugins.py"
WRAPPER_FILES = (GOOGLE_FILE, CEDS_FILE, IBIDAAS_FILE, EMMC_FILE, DBSCAN_FILE, MUTANTS_FILE, DIFFPRIVLIB_FILE,
                 PYDP_FILE)


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

    @property
    def time_budget(self) -> float:
        opts = list(self.options)
        return float(opts[opts.index("--time-budget") + 1]) if "--time-budget" in opts else 60.0

    @property
    def wall_budget(self) -> float:
        """Twice the time budget: a run that takes longer says so and is never counted as "no violation"."""
        return 2.0 * self.time_budget


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
               f"{REPRO}/google_clustering.py --case {case}", line)
