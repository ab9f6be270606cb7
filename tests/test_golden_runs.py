"""Golden replays: every command, run at a fixed seed on a count budget, gives the results it gave when the
golden files were made — the safety net of a refactor that moves code but must not move a number.

What is replayed (in process, through typer's ``CliRunner``, from the repository root):

* ``attack`` (a points release, and a vector release), ``estimate-eps`` (a built-in under a ρ-zCDP claim, and a
  plug-in function in a worker process), ``audit`` (under a privacy-profile claim) and ``sweep``
  (:data:`RUNS`): each run's ``results.json``, compared with ``tests/golden/runs/<name>.json`` after the
  volatile fields are pinned (:data:`VOLATILE`), and its exit status;
* ``report``: the attack run's ``results.json`` (volatile fields pinned) re-rendered as ``report.md`` and
  ``results.csv``, compared byte for byte with ``tests/golden/report/``;
* ``mechanisms`` and ``datasets``: their listings, and the ``--help`` of the root and of every command, byte
  for byte (``tests/golden/listings/``, ``tests/golden/help/``), at a fixed width of 100 columns.

Every ε estimate has a count budget (``--releases`` or ``--samples``), never a time budget: a timed plan sizes
itself by the machine's speed, so only a count budget reproduces its numbers (``docs/method/epsilon.md``,
Budget); :func:`test_golden_runs_have_count_budgets` checks that no recorded plan was timed.

Volatile fields (:data:`VOLATILE`) are replaced by a fixed value of the same type wherever they occur (the key
stays, so a field that disappears is still caught); the run's output folder is written ``<out>`` in every
string; ``sys.argv`` is set to the command as invoked, so the recorded ``command`` is compared too.  The
figures are built but not rasterised (:func:`_fixed_png`): nothing compared here is read from a PNG, and drawing
them is half of these runs' time.

The numbers depend on the numerical libraries' versions (a new scikit-learn may move a KMeans), the help
texts on typer's, click's and rich's: the golden files record them (``tests/golden/environment.json``),
and a comparison made under other versions is skipped with the difference, not failed — regenerate on the
commit whose numbers are the reference.

Regenerate (only on the commit that is the reference — before a refactor, or after a change that is meant to
move the numbers — and review the diff of ``tests/golden/``)::

    DPAUDIT_REGENERATE_GOLDEN=1 python -m pytest -q tests/test_golden_runs.py

With ``DPAUDIT_REGENERATE_GOLDEN=1`` the tests write the golden files instead of comparing.
``python -m pytest -m slow tests/test_golden_runs.py`` runs every command twice and checks the two runs agree
once pinned (that :data:`VOLATILE` is complete).
"""

from __future__ import annotations

import json
import os
import re
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from dpaudit.cli import app

REPO = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).resolve().parent / "golden"
REGENERATE = os.environ.get("DPAUDIT_REGENERATE_GOLDEN") == "1"
WIDTH = "100"

# name -> argv (without --out); small, seeded, count-budgeted.  What each covers:
RUNS: dict[str, list[str]] = {
    # a points release under a metric claim: the classifier attacks (Shokri, Yeom, label-only), reconstruction,
    # LiRA and RMIA; the verdict rests on the ε estimate (the membership bounds are not comparable)
    "attack-ndlaplace": ["attack", "-m", "ndlaplace", "--eps", "1", "--records", "80", "--repeats", "1",
                         "--reference-runs", "4", "--releases", "20000", "--seed", "3"],
    # a vector release under an add-remove claim: LiRA, RMIA and tracing apply, and their one-run bounds get a
    # verdict
    "attack-laplace": ["attack", "-m", "laplace", "--eps", "1", "--records", "80", "--repeats", "2",
                       "--reference-runs", "4", "--releases", "20000", "--seed", "7"],
    # a claim in another notion (ρ-zCDP), a built-in run in process
    "estimate-eps-laplace-rho": ["estimate-eps", "-m", "laplace", "--eps", "1", "--rho", "0.5", "--releases",
                                 "4000", "--seed", "5"],
    # a plug-in function in a worker process; its noise is too small: a violation
    "estimate-eps-plugin": ["estimate-eps", "-m", "examples/their_code.py:noisy_count", "--eps", "1", "--output",
                            "vector", "--releases", "6000", "--seed", "5"],
    # the audit's parts (smoke, ε estimate, attacks, utility) under a privacy-profile claim
    "audit-laplace-profile": ["audit", "-m", "laplace", "--eps", "1", "--profile", "examples/privacy-profile.csv",
                              "--records", "80", "--repeats", "1", "--releases", "4000", "--attack", "yeom,tracing",
                              "--seed", "1"],
    # two ε × one repeat: utility, a membership attack and a certified bound per cell
    "sweep-ndlaplace": ["sweep", "-m", "ndlaplace", "--eps", "0.5,2", "--records", "80", "--repeats", "1", 
                        "--clusterers", "kmeans", "--attack", "yeom", "--epsilon-bound", "--samples", "300",
                        "--seed", "2"],
}
COMMANDS = ("attack", "audit", "estimate-eps", "sweep", "report", "mechanisms", "datasets")
LISTINGS = ("mechanisms", "datasets")

# Keys whose values change from run to run or from machine to machine, with why; pinned wherever they occur.
VOLATILE: dict[str, str] = {
    "started": "wall-clock date and time the run started (provenance)",
    "finished": "wall-clock date and time the run (or its last saved part) finished (provenance)",
    "durations_seconds": "wall-clock seconds of each part (provenance; the keys are kept)",
    "attack_seconds": "wall-clock seconds of each attack (attack timings; the keys are kept)",
    "total_seconds": "wall-clock seconds of the attack run (timings)",
    "estimate_seconds": "wall-clock seconds of the attack's ε estimate (timings)",
    "elapsed_seconds": "wall-clock seconds of an ε estimate",
    "selection_seconds": "wall-clock seconds of an ε estimate's pair search (its timings)",
    "screening_seconds": "wall-clock seconds of an ε estimate's screening (its timings)",
    "certification_seconds": "wall-clock seconds of an ε estimate's certification (its timings)",
    "seconds_per_release": "the audit's smoke part times one release",
    "dpaudit_version": "the installed distribution's version (a checkout without install says 0.1.0): a "
                       "release changes it, not the numbers",
    "package_versions": "library versions: compared once, in tests/golden/environment.json (skip on a mismatch)",
    "packages": "library and Python versions (provenance): as package_versions",
    "machine": "the host's platform string, processor and core count (provenance)",
}
PINNED_TEXT = "<volatile>"
PINNED_DATE = "2000-01-01T00:00:00Z"
# What the numbers and the texts depend on beyond the code: recorded with the golden files.
NUMERIC_PACKAGES = ("numpy", "scipy", "scikit-learn", "adversarial-robustness-toolbox", "dp-accounting", "riskcal",
                    "matplotlib")
TEXT_PACKAGES = ("typer", "click", "rich")


# ---- pinning and comparing ------------------------------------------------------------------
def pin(value: Any, out_dirs: tuple[str, ...] = ()) -> Any:
    """``value`` with every :data:`VOLATILE` key's value replaced by a fixed one of the same type (inside dicts
    the keys are kept) and each of ``out_dirs`` written ``<out>`` in every string."""
    if isinstance(value, dict):
        return {k: _pinned(v) if k in VOLATILE else pin(v, out_dirs) for k, v in value.items()}
    if isinstance(value, list):
        return [pin(v, out_dirs) for v in value]
    if isinstance(value, str):
        for folder in out_dirs:
            value = value.replace(folder, "<out>")
        return value
    return value


def _pinned(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _pinned(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_pinned(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return type(value)(1)
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", value):
        return PINNED_DATE
    return PINNED_TEXT


def differences(expected: Any, actual: Any, path: str = "", limit: int = 20) -> list[str]:
    """Where ``actual`` differs from ``expected`` (dict order ignored, list order and exact floats not), as
    ``path: expected != actual`` lines, at most ``limit``."""
    out: list[str] = []

    def walk(a: Any, b: Any, where: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for key in dict.fromkeys([*a, *b]):
                if key not in b or key not in a:
                    out.append(f"{where}.{key}: {'missing' if key not in b else 'new'}")
                else:
                    walk(a[key], b[key], f"{where}.{key}")
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b)):
                walk(x, y, f"{where}[{i}]")
        elif type(a) is not type(b) or a != b:
            out.append(f"{where or '.'}: {_short(a)} != {_short(b)}")

    walk(expected, actual, path)
    return out


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 100 else text[:97] + "..."


# ---- the golden files -----------------------------------------------------------------------
def _versions(names: tuple[str, ...]) -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": ".".join(map(str, sys.version_info[:2]))}
    for name in names:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def _check_environment(kind: str, names: tuple[str, ...]) -> None:
    """Write (regenerating) or compare the versions ``kind`` of golden file was made under; skip on a
    mismatch."""
    path = GOLDEN / "environment.json"
    recorded = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    now = _versions(names)
    if REGENERATE:
        recorded[kind] = now
        _write(path, json.dumps(recorded, indent=1, sort_keys=True) + "\n")
        return
    if kind not in recorded:
        pytest.fail(f"no golden environment for {kind}: run with DPAUDIT_REGENERATE_GOLDEN=1")
    changed = {k: (recorded[kind].get(k), v) for k, v in now.items() if recorded[kind].get(k) != v}
    if changed:
        pytest.skip(f"golden {kind} files were made under other versions (golden, installed): {changed}; "
                    "regenerate them on the reference commit")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _compare_text(path: Path, actual: str) -> None:
    if REGENERATE:
        _write(path, actual)
        return
    assert path.is_file(), f"{path.relative_to(REPO)} missing: run with DPAUDIT_REGENERATE_GOLDEN=1"
    expected = path.read_text(encoding="utf-8")
    if actual != expected:
        lines = [f"line {i + 1}:\n  golden: {a!r}\n  now:    {b!r}"
                 for i, (a, b) in enumerate(zip(expected.splitlines(), actual.splitlines())) if a != b][:5]
        raise AssertionError(f"{path.relative_to(REPO)} differs ({len(expected)} vs {len(actual)} characters):\n"
                             + "\n".join(lines or ["(a line added or removed at the end)"]))


# ---- running the commands -------------------------------------------------------------------
def invoke(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> Any:
    """``dpaudit ARGV`` in process from the repository root, at a fixed width, as if typed — but for the
    figures' rasterising (:func:`_fixed_png`)."""
    import matplotlib.figure

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", _fixed_png)
    monkeypatch.chdir(REPO)
    monkeypatch.setattr(sys, "argv", ["dpaudit", *argv])
    env = {"COLUMNS": WIDTH, "TERMINAL_WIDTH": WIDTH, "FORCE_COLOR": None, "NO_COLOR": "1", "TERM": "dumb"}
    return CliRunner().invoke(app, argv, env=env, prog_name="dpaudit")


# A 1×1 transparent PNG.
PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
                    "0000000d4944415478da63f8cfc0f01f0005000201a1a0c2f40000000049454e44ae426082")


def _fixed_png(self: Any, fname: Any, **kwargs: Any) -> None:
    """Every figure saved as :data:`PNG`: the figures are built from the numbers compared here (their drawing
    is tested by tests/test_report*.py), and rasterising them is half of these runs' time."""
    if hasattr(fname, "write"):
        fname.write(PNG)
    else:
        Path(fname).write_bytes(PNG)


def run(name: str, out: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str] | None = None) -> dict[str, Any]:
    """One of :data:`RUNS` into ``out``: its exit status and its pinned ``results.json``."""
    argv = [*(RUNS[name] if argv is None else argv), "--out", str(out), "--quiet"]
    res = invoke(argv, monkeypatch)
    assert res.exit_code in (0, 1), f"{name}: exit {res.exit_code}\n{res.output[-3000:]}"
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return {"argv": argv[:-3], "exit_code": res.exit_code, "results": pin(results, (str(out),))}


@pytest.fixture(scope="module")
def golden_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict[str, Any], Path]]:
    """Every run of :data:`RUNS`, once per module: its pinned record and its output folder."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        folders = {name: tmp_path_factory.mktemp("golden") / name for name in RUNS}
        return {name: (run(name, folder, monkeypatch), folder) for name, folder in folders.items()}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_run_gives_the_golden_results(name: str, golden_runs: dict[str, tuple[dict[str, Any], Path]]) -> None:
    _check_environment("runs", NUMERIC_PACKAGES)
    record, _ = golden_runs[name]
    path = GOLDEN / "runs" / f"{name}.json"
    if REGENERATE:
        _write(path, json.dumps(record, indent=1, ensure_ascii=False) + "\n")
        return
    assert path.is_file(), f"{path.relative_to(REPO)} missing: run with DPAUDIT_REGENERATE_GOLDEN=1"
    expected = json.loads(path.read_text(encoding="utf-8"))
    found = differences(expected, record)
    assert not found, (f"{name} no longer gives its golden results (DPAUDIT_REGENERATE_GOLDEN=1 only if the "
                       "change is meant):\n" + "\n".join(found))


def test_golden_runs_have_count_budgets(golden_runs: dict[str, tuple[dict[str, Any], Path]]) -> None:
    """A timed plan would make the numbers the machine's: every recorded plan is a count budget."""
    sources: list[tuple[str, str]] = []

    def walk(value: Any, name: str) -> None:
        if isinstance(value, dict):
            if "source" in value and "looks" in value and "releases" in value:  # a plan (search.plan)
                sources.append((name, value["source"]))
            for v in value.values():
                walk(v, name)
        elif isinstance(value, list):
            for v in value:
                walk(v, name)

    for name, (record, _) in golden_runs.items():
        walk(record["results"], name)
    # every run has an ε estimate with a plan, but the sweep: its cells' estimates take --samples, always
    assert {name for name, _ in sources} == set(RUNS) - {"sweep-ndlaplace"}, sources
    assert "--samples" in RUNS["sweep-ndlaplace"]
    assert all(source in ("releases", "samples") for _, source in sources), sources


def test_report_rerenders_the_golden_report(golden_runs: dict[str, tuple[dict[str, Any], Path]],
                                            tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``dpaudit report`` on the attack run, its volatile fields pinned first (the report prints them)."""
    _check_environment("runs", NUMERIC_PACKAGES)
    _, folder = golden_runs["attack-ndlaplace"]
    stored = tmp_path / "stored" / "results.json"
    stored.parent.mkdir()
    stored.write_text(json.dumps(pin(json.loads((folder / "results.json").read_text(encoding="utf-8")),
                                     (str(folder),)), indent=2, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "rendered"
    res = invoke(["report", str(stored), "--format", "all", "--out", str(out)], monkeypatch)
    assert res.exit_code == 0, res.output
    for file in ("report.md", "results.csv"):
        text = (out / file).read_text(encoding="utf-8").replace(str(tmp_path), "<tmp>")
        _compare_text(GOLDEN / "report" / file, text)


@pytest.mark.parametrize("command", [None, *COMMANDS], ids=lambda c: c or "root")
def test_help_is_the_golden_help(command: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    _check_environment("texts", TEXT_PACKAGES)
    res = invoke([*([command] if command else []), "--help"], monkeypatch)
    assert res.exit_code == 0, res.output
    _compare_text(GOLDEN / "help" / f"{command or 'root'}.txt", res.output)


@pytest.mark.parametrize("command", LISTINGS)
def test_listing_is_the_golden_listing(command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _check_environment("texts", TEXT_PACKAGES)
    res = invoke([command], monkeypatch)
    assert res.exit_code == 0, res.output
    _compare_text(GOLDEN / "listings" / f"{command}.txt", res.output)


# ---- that the comparison can fail, and that a run is reproducible ---------------------------
def test_another_seed_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same command at another seed differs from the golden file in its numbers."""
    name = "estimate-eps-laplace-rho"
    path = GOLDEN / "runs" / f"{name}.json"
    if REGENERATE or not path.is_file():
        pytest.skip("no golden file to compare with")
    argv = [a if a != "5" else "6" for a in RUNS[name]]
    assert argv != RUNS[name]
    found = differences(json.loads(path.read_text(encoding="utf-8"))["results"],
                        run(name, tmp_path / "other", monkeypatch, argv)["results"])
    assert any("epsilon_lower_bound" in line for line in found), found


def test_pinning_keeps_keys_and_the_comparison_sees_a_changed_number() -> None:
    results = {"provenance": {"started": "2026-01-02T03:04:05Z", "durations_seconds": {"smoke": 0.25},
                              "command": "dpaudit attack --out /x/run"},
               "epsilon_lower_bound": 0.75, "timings": {"expected_bound_at_selection": 0.5, "total_seconds": 3.2}}
    pinned = pin(results, ("/x/run",))
    assert pinned["provenance"] == {"started": PINNED_DATE, "durations_seconds": {"smoke": 1.0},
                                    "command": "dpaudit attack --out <out>"}
    assert pinned["timings"] == {"expected_bound_at_selection": 0.5, "total_seconds": 1.0}
    other = json.loads(json.dumps(pinned))
    assert differences(pinned, other) == []
    other["epsilon_lower_bound"] = 0.7500000000000001
    other["provenance"].pop("command")
    assert differences(pinned, other) == [".provenance.command: missing",
                                          ".epsilon_lower_bound: 0.75 != 0.7500000000000001"]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_run_twice_gives_the_same_pinned_results(name: str, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    first = run(name, tmp_path / "first", monkeypatch)
    second = run(name, tmp_path / "second", monkeypatch)
    assert differences(first, second) == []
