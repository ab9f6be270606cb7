"""Output of ``dpaudit attack``: the console table, report.md, and crash-safe JSON.

A small stand-alone renderer until the report package renders attack results;
it reads only the plain results dict of :func:`dpaudit.attack_run.run_attack`.
Reports never contain records: the dict holds only a dataset summary.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

__all__ = ["default_out_dir", "format_table", "render_markdown", "write_json"]


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if math.isinf(value):
            return "∞"
        return f"{value:.{digits}f}"
    return str(value)


def _pm(entry: dict[str, Any], key: str) -> str:
    if key not in entry:
        return "-"
    std = entry.get(f"{key}_std")
    return _fmt(entry[key]) if not std else f"{_fmt(entry[key])} ± {_fmt(std)}"


def table_rows(results: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    header = ["attack", "advantage", "AUC", "TPR@1%FPR", "ε lower bound", "ceiling"]
    rows = []
    for a in results.get("attacks", []):
        if a.get("status") == "not-applicable":
            rows.append([a["name"], "n/a: " + a.get("reason", ""), "", "", "", ""])
        elif a.get("status") != "ok":
            rows.append([a["name"], "error: " + "; ".join(a.get("errors", ["?"]))[:70], "", "", "", ""])
        elif a["name"] == "reconstruction":
            rows.append([a["name"], f"success {_pm(a, 'success_rate')} (prior {_fmt(a.get('baseline_success_rate'))})",
                         "-", "-", "-", f"median error {_fmt(a.get('median_error'))}"])
        else:
            rows.append([a["name"], _pm(a, "advantage"), _pm(a, "auc"), _pm(a, "tpr_at_1pct_fpr"),
                         _fmt(a.get("epsilon_lower_bound")), _fmt(a.get("advantage_ceiling"))])
    return header, rows


def format_table(results: dict[str, Any]) -> str:
    """Plain-text table for the terminal."""
    header, rows = table_rows(results)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, rows)])


def render_markdown(results: dict[str, Any]) -> str:
    """report.md: set-up, results table, notes, warnings, provenance."""
    mech = results.get("mechanism", {})
    claim = mech.get("claim", {})
    ds = results.get("dataset", {})
    header, rows = table_rows(results)
    lines = [
        f"# Attack report: {mech.get('spec', '?')} at ε = {_fmt(results.get('parameters', {}).get('epsilon'))}",
        "",
        f"- Mechanism: `{mech.get('repr', '?')}`; claim ε = {_fmt(claim.get('epsilon'))}, "
        f"δ = {claim.get('delta')}, neighbours = {claim.get('neighbours')}",
        f"- Data: {ds.get('description', ds.get('name'))} — {ds.get('n_records')} records × "
        f"{ds.get('n_features')} features (records are never written to a report)",
        f"- Split per repeat: {results.get('setup', {}).get('split')}; repeats: "
        f"{results.get('parameters', {}).get('repeats')}; seed: {results.get('seed')}",
        f"- {results.get('setup', {}).get('queries', '')}; threshold {results.get('setup', {}).get('threshold', '')}.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *["| " + " | ".join(r) + " |" for r in rows],
        "",
        "Advantage = TPR − FPR at a threshold chosen on shadow data (mean ± std over repeats); "
        "the ε lower bound is certified by Clopper–Pearson at "
        f"{_fmt(1 - results.get('parameters', {}).get('alpha', 0.05), 2)} confidence from the pooled counts "
        "(records sharing a release are treated as independent trials, so it is indicative); the ceiling is "
        "(e^ε − 1)/(e^ε + 1) for the claimed ε"
        + (" — for a metric (d_x) claim it is the ceiling for two records at unit distance." if
           claim.get("neighbours") == "metric" else "."),
        "",
    ]
    same = [a for a in results.get("attacks", []) if "advantage_same_data" in a]
    if same:
        lines += ["Optimistic advantage (threshold chosen on the scored data itself, biased upwards): "
                  + ", ".join(f"{a['name']} {_fmt(a['advantage_same_data'])}" for a in same), ""]
    warns = results.get("warnings") or []
    lines += ["## Privacy-leak warnings", ""] + ([f"- {w['message']}" for w in warns] or ["none"]) + [""]
    timings = results.get("timings", {})
    lines += ["## Provenance", "",
              f"- dpaudit {results.get('dpaudit_version')}; command: `{results.get('command', '')}`",
              f"- packages: {', '.join(f'{k} {v}' for k, v in results.get('package_versions', {}).items())}",
              f"- time: {_fmt(timings.get('total_seconds'), 1)} s; complete: {results.get('complete')}", ""]
    return "\n".join(lines)


def default_out_dir(mechanism: str, epsilon: float, root: Path = Path("reports")) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in mechanism)[-40:]
    return root / f"{stamp}-{safe}-eps{epsilon:g}"


def _clean(obj: Any) -> Any:
    """JSON has no inf/NaN: write them as strings."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return "inf" if obj > 0 else ("-inf" if obj < 0 else "nan")
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def write_json(results: dict[str, Any], path: Path) -> None:
    """Write atomically (temp file + rename) so an interrupted run leaves valid JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".results-", suffix=".json")
    with os.fdopen(fd, "w") as fh:
        json.dump(_clean(results), fh, indent=2, default=str)
    os.replace(tmp, path)
