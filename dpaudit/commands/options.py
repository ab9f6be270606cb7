"""The options the commands share, each defined once, and the panels of every command's ``--help``.

An option every command that has it writes alike is a typer ``Annotated`` alias
(``seed: Seed = 0``; the default stays in the command's signature, as typer's
``Annotated`` style has it).  An option whose help text or short flag differs
between commands is a factory taking the one differing value
(``eps: Annotated[float, eps_option("…")]``): its long name is still written
only here.  :func:`panels` puts each of a command's options into its ``--help``
panel.  Like the rest of the command line this module loads no numpy, so
``--help`` stays fast.
"""

from __future__ import annotations

import copy
import functools
import inspect
from pathlib import Path
from typing import Annotated, Any, Callable, Optional, TypeVar, get_args, get_origin

import typer
from typer.models import OptionInfo, ParameterInfo

from dpaudit.claims import NOTIONS

__all__ = [
    "DEFAULT_TIMEOUT", "DEFAULT_TIME_BUDGET", "PANEL_AUDITED", "PANEL_BUDGET", "PANEL_EXECUTION", "PANEL_OUTPUT",
    "Bounds", "Classes", "DataFile", "DatasetName", "FailOnViolation", "Force", "JsonPath", "LabelAnchors",
    "LabelColumn", "LabelRange", "Mechanism", "MemoryLimit", "Neighbours", "OwnRandomness", "Progress", "Python",
    "Quiet", "Releases", "Scheduler", "Seed", "TimeBudget", "Timeout",
    "NOTION_OPTIONS", "attack_option", "data_option", "dataset_option", "delta_option", "eps_option", "force_option",
    "label_column_option", "look_up_here", "mechanism_option", "n_jobs_option", "neighbours_option", "out_option",
    "output_option", "panels", "param_option", "quiet_option", "records_option", "repeats_option",
    "rescale_option",
    "samples_option", "seed_option", "with_notion_options",
]

Command = TypeVar("Command", bound=Callable[..., Any])

# Option groups of every command's --help (typer's rich_help_panel).
PANEL_AUDITED = "What is audited"
PANEL_BUDGET = "Budget"
PANEL_EXECUTION = "Execution"
PANEL_OUTPUT = "Output"

DEFAULT_TIMEOUT = 60.0  # = dpaudit.execution.DEFAULT_TIMEOUT (not imported: --help loads no numpy)
DEFAULT_TIME_BUDGET = 60.0  # = dpaudit.attacks.epsilon.sampling.budget.DEFAULT_TIME_BUDGET (likewise)

# The help texts most commands share; a command with its own passes it to the factory.
MECHANISM_HELP = ("Registered name, module:attr, file.py:attr, or \"cmd:COMMAND\": a program in any language that "
                  "speaks dpaudit's protocol (docs/executables.md).")
DATASET_HELP = "Built-in dataset (default blobs-2d)."
DATA_HELP = ("A numeric CSV instead of --dataset (a first row of numbers is a record: no header, columns "
             "'column 1', …).")
LABEL_COLUMN_HELP = "CSV column holding class labels."
NEIGHBOURS_HELP = "Plug-in claim: add-remove|replace|metric."
OUTPUT_HELP = ("Plug-in functions: points|centroids|labels|vector; supervised estimator classes: "
               "parameters|predictions.")
SEED_HELP = "Seed of every random choice."
FORCE_HELP = "Replace the report already in --out."
QUIET_HELP = "No progress and no file list on stderr."


# --------------------------------------------------------------------------- #
# What is audited
# --------------------------------------------------------------------------- #
def mechanism_option(help: str = MECHANISM_HELP) -> OptionInfo:
    """``--mechanism/-m``: the spec of the audited code (a plug-in is looked up in the working directory
    too: :func:`look_up_here`)."""
    return typer.Option("--mechanism", "-m", help=help, callback=look_up_here)


def look_up_here(spec: str) -> str:
    """Add the working directory to ``sys.path`` when it holds the package of a ``package.module:attr``
    spec, as pytest adds its rootdir: a project's own plug-in needs no ``PYTHONPATH``
    (:func:`dpaudit.mechanisms.plugins.on_import_path`).  The spec is returned as given."""
    if isinstance(spec, str) and ":" in spec:
        from dpaudit.mechanisms.plugins import on_import_path  # here, not at import: --help loads no numpy

        on_import_path(spec)
    return spec


def eps_option(help: str) -> OptionInfo:
    """``--eps``: the ε (or, for a sweep, the ε list) the code is run at and claims."""
    return typer.Option("--eps", help=help)


def delta_option(help: str) -> OptionInfo:
    """``--delta``: the claim's δ."""
    return typer.Option("--delta", help=help)


# Claims in other notions than (ε, δ), beside --eps/--delta (docs/notions.md): one option per entry of
# dpaudit.claims.NOTIONS, where a command's parameter ``notions`` stands (with_notion_options).
NOTION_OPTIONS = tuple(notion.name for notion in NOTIONS)  # the parameter names every command gives them


def with_notion_options(command: Command) -> Command:
    """``command`` with its parameter ``notions`` replaced, in its place, by one option per notion
    (:data:`dpaudit.claims.NOTIONS`: ``--rho``, ``--mu``, …); ``command`` is called with the values given
    as ``notions`` (name → value; a file as its name)."""
    signature = inspect.signature(command, eval_str=True)
    params = list(signature.parameters.values())
    where = [p.name for p in params].index("notions")
    options = [inspect.Parameter(n.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None,
                                 annotation=Annotated[Optional[n.kind], typer.Option(n.flag, help=n.help)])
               for n in NOTIONS]

    @functools.wraps(command)
    def run(**given: Any) -> Any:
        values = {name: given.pop(name) for name in NOTION_OPTIONS}
        notions = {name: str(v) if isinstance(v, Path) else v for name, v in values.items() if v is not None}
        return command(**given, notions=notions)

    function: Any = run  # a function: its __signature__ is set here, which typer reads
    function.__signature__ = signature.replace(parameters=[*params[:where], *options, *params[where + 1:]])
    return function


def neighbours_option(help: str = NEIGHBOURS_HELP) -> OptionInfo:
    """``--neighbours``: the claim's neighbour relation."""
    return typer.Option("--neighbours", help=help)


def output_option(help: str = OUTPUT_HELP) -> OptionInfo:
    """``--output``: how a plug-in's return value is read."""
    return typer.Option("--output", help=help)


def dataset_option(help: str = DATASET_HELP, *, short: bool = True) -> OptionInfo:
    """``--dataset`` (``-d`` unless ``short`` is false): a built-in dataset."""
    return typer.Option("--dataset", *(("-d",) if short else ()), help=help)


def data_option(help: str = DATA_HELP) -> OptionInfo:
    """``--data``: a CSV file instead of a built-in dataset."""
    return typer.Option("--data", help=help)


def label_column_option(help: str = LABEL_COLUMN_HELP) -> OptionInfo:
    """``--label-column``: the CSV column holding the labels."""
    return typer.Option("--label-column", help=help)


def records_option(help: str, *, short: bool = True) -> OptionInfo:
    """``--records`` (``-n`` unless ``short`` is false): how many records."""
    return typer.Option("--records", *(("-n",) if short else ()), help=help)


def rescale_option(help: str) -> OptionInfo:
    """``--rescale``: none, or minmax onto [-1, 1]."""
    return typer.Option("--rescale", help=help)


def param_option(help: str) -> OptionInfo:
    """``--param/-p KEY=VALUE`` (repeatable): a parameter of the mechanism."""
    return typer.Option("--param", "-p", help=help)


def attack_option(help: str) -> OptionInfo:
    """``--attack``: which attacks run."""
    return typer.Option("--attack", help=help)


Mechanism = Annotated[str, mechanism_option()]
Neighbours = Annotated[Optional[str], neighbours_option()]
DatasetName = Annotated[Optional[str], dataset_option()]
DataFile = Annotated[Optional[Path], data_option()]
LabelColumn = Annotated[Optional[str], label_column_option()]
Bounds = Annotated[Optional[str], typer.Option(
    "--bounds", help="The public box the audited code works in (the domain it clips to): LO,HI for every column, "
    "or LO1,HI1;LO2,HI2 per column. The worst-case datasets and canaries go there. Default: the mechanism's "
    "bounds, the dataset's public box, else the data's range.")]
Classes = Annotated[Optional[str], typer.Option(
    "--classes", help="Supervised plug-ins: the class labels, e.g. 0,1 (default: the distinct labels of the data). "
    "The label is the last column of every record, mapped to the nearest class.")]
LabelRange = Annotated[Optional[str], typer.Option(
    "--label-range", help="Supervised regressors: the public range LO,HI of the target (the label column is clipped "
    "to it).")]
LabelAnchors = Annotated[bool, typer.Option(
    "--label-anchors/--no-label-anchors", help="Supervised classifiers: add one public record per class (the feature "
    "box's centre) to every dataset, so no dataset lacks a class (classifiers refuse those).")]


# --------------------------------------------------------------------------- #
# Budget
# --------------------------------------------------------------------------- #
def samples_option(help: str) -> OptionInfo:
    """``--samples``: certification releases of the ε estimate."""
    return typer.Option("--samples", help=help)


def repeats_option(help: str, *, short: bool = False) -> OptionInfo:
    """``--repeats`` (``-r`` with ``short``): independent repeats."""
    return typer.Option("--repeats", *(("-r",) if short else ()), help=help)


TimeBudget = Annotated[float, typer.Option(
    "--time-budget", help="Seconds the ε estimate spends: the audited code is timed (each candidate pair on its "
    "own datasets), the releases that fit are planned and said at the start, and the run stops once a violation "
    "is certified and more looks would add little (α spent over its looks). --samples or --releases replace it.")]
MinRecords = Annotated[Optional[int], typer.Option(
    "--min-records", help="The code's domain: it accepts datasets of at least this many records, and the ε "
    "estimate's pairs with a smaller dataset are not tried (default: read off what the code refuses — a size below "
    "which it refuses every dataset).")]
Releases = Annotated[Optional[int], typer.Option(
    "--releases", help="Total releases of the ε estimate (selection and certification) instead of a time budget: "
    "the same numbers on any machine. A timed run's report gives the figure it used.")]


# --------------------------------------------------------------------------- #
# Execution
# --------------------------------------------------------------------------- #
def seed_option(help: str = SEED_HELP) -> OptionInfo:
    """``--seed`` (≥ 0): the root of every random choice."""
    return typer.Option("--seed", min=0, help=help)


def n_jobs_option(help: str) -> OptionInfo:
    """``--n-jobs/-j``: local worker processes."""
    return typer.Option("--n-jobs", "-j", help=help)


Seed = Annotated[int, seed_option()]
Scheduler = Annotated[Optional[str], typer.Option(
    "--scheduler", help="Dask scheduler address tcp://HOST:PORT (pip install 'dpaudit\\[dask]'); same numbers as on "
    "this machine.")]
Timeout = Annotated[float, typer.Option(
    "--timeout", help="Seconds each call into third-party code may take; it runs in a worker process, and a call "
    "past the limit is a finding. Built-in mechanisms run in this process without a limit.")]
Python = Annotated[Optional[str], typer.Option(
    "--python", help="Interpreter to run the audited code in (its own virtual environment; needs only numpy). "
    "Built-ins then run there too.")]
MemoryLimit = Annotated[Optional[str], typer.Option(
    "--memory-limit", help="Address space the worker process may use, e.g. 2G (Unix; a larger allocation is a "
    "finding). Default: no limit.")]
OwnRandomness = Annotated[bool, typer.Option(
    "--own-randomness", help="State that the audited code draws its own randomness (e.g. OpenDP's samplers, which "
    "read the OS), not from the generator dpaudit passes: the same-seed replay is then skipped and a note says so "
    "(a function without an rng parameter, fn(X, epsilon), states it itself).")]


# --------------------------------------------------------------------------- #
# Output
# --------------------------------------------------------------------------- #
def out_option(help: str, *, short: bool = True) -> OptionInfo:
    """``--out`` (``-o`` unless ``short`` is false): the directory a run writes."""
    return typer.Option("--out", *(("-o",) if short else ()), help=help)


def force_option(help: str = FORCE_HELP) -> OptionInfo:
    """``--force``: replace what is already in ``--out``."""
    return typer.Option("--force", help=help)


def quiet_option(help: str = QUIET_HELP) -> OptionInfo:
    """``--quiet/-q``: nothing but the results and errors."""
    return typer.Option("--quiet", "-q", help=help)


Force = Annotated[bool, force_option()]
Quiet = Annotated[bool, quiet_option()]
JsonPath = Annotated[Optional[Path], typer.Option("--json", help="Also write results.json here.")]
FailOnViolation = Annotated[bool, typer.Option(
    "--fail-on-violation", help="Exit 1 when the verdict is VIOLATION and 3 when it is neither VIOLATION nor "
    "Consistent (INCONCLUSIVE, NOT TESTED); see Exit status below.")]
Progress = Annotated[bool, typer.Option(
    "--progress/--no-progress", help="Progress on stderr: a bar on a terminal, plain lines otherwise.")]


# --------------------------------------------------------------------------- #
# Panels
# --------------------------------------------------------------------------- #
def panels(command: Command, *, audited: tuple[str, ...], budget: tuple[str, ...], execution: tuple[str, ...],
           output: tuple[str, ...]) -> Command:
    """Put each of ``command``'s options into its ``--help`` panel (typer's ``rich_help_panel``):
    what is audited, the budget, execution, output — given by parameter name.  Every option must
    be in exactly one panel (a new option cannot be forgotten).

    The aliases above are shared by the commands, so the panel goes on a copy of each option:
    ``command`` gets a signature of its own (``__signature__``, which typer reads)."""
    groups = {PANEL_AUDITED: audited, PANEL_BUDGET: budget, PANEL_EXECUTION: execution, PANEL_OUTPUT: output}
    where = {name: panel for panel, names in groups.items() for name in names}
    signature = inspect.signature(command, eval_str=True)
    params = signature.parameters
    missing = [name for name in params if name not in where]
    unknown = [name for name in where if name not in params]
    if missing or unknown or len(where) != sum(len(n) for n in groups.values()):
        raise RuntimeError(f"{command.__name__}: options without a panel {missing}, unknown {unknown}")
    function: Any = command  # a function: its __signature__ is set here
    function.__signature__ = signature.replace(
        parameters=[_in_panel(param, where[name]) for name, param in params.items()])
    return command


def _in_panel(param: inspect.Parameter, panel: str) -> inspect.Parameter:
    """``param`` with a copy of its typer option (``Annotated`` or default style) in ``panel``."""
    def placed(info: Any) -> Any:
        if not isinstance(info, ParameterInfo):
            return info
        info = copy.copy(info)
        info.rich_help_panel = panel
        return info

    if get_origin(param.annotation) is Annotated:
        base, *extras = get_args(param.annotation)
        return param.replace(annotation=Annotated[(base, *(placed(e) for e in extras))])
    return param.replace(default=placed(param.default))
