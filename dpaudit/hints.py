"""What to try next: one hint for each failure of a run that has one.

:func:`hints` reads a results dict of any command (findings, parts, the estimate, the sweep's
cells) and returns short sentences naming the option that addresses each failure: a plug-in
function whose releases have the wrong shape for ``--output points`` (it probably releases
centroids), calls that time out, run out of memory or keep state, a part that needs an extra
package, an estimate cut short by its budget, an interrupted sweep.  Commands print them on
stderr as ``hint: …``; reports list them under the findings.  A hint never quotes the audited
code's text.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: --help loads no heavy module
    from dpaudit.result_shapes import FindingRecord
    from dpaudit.run_shapes import RunResults


__all__ = ["hints"]

_SHAPE = re.compile(r"returned shape \(([\d, ]+)\); a points release must have the input's shape \(([\d, ]+)\)")


def _shape_hint(error: str) -> str | None:
    found = _SHAPE.search(error)
    if not found:
        return None
    got, want = found.group(1).strip(), found.group(2).strip()
    rows = got.split(",")[0].strip()
    return (f"the code returned a ({got}) array where a points release of the ({want}) input was expected: if it "
            f"releases {rows} cluster centres, pass --output centroids (cluster labels: --output labels; any other "
            "fixed-shape statistic: --output vector)")


def _finding_hints(findings: list[FindingRecord]) -> list[str]:
    out: list[str] = []
    kinds = {str(f.get("kind")): str(f.get("error") or "") for f in findings}
    for kind, error in kinds.items():
        if kind == "wrong-shape":
            out.append(_shape_hint(error) or "the releases have the wrong shape or type for --output: state what "
                       "the code returns (points, centroids, labels or vector)")
        elif kind == "timeout":
            out.append("calls did not answer within --timeout seconds: if the code is only slow, raise --timeout; "
                       "if it hangs, it hangs for the auditor too")
        elif kind == "crash" and "memory" in error.lower():
            out.append("the worker ran out of memory: raise --memory-limit, or give fewer --records")
        elif kind == "crash":
            out.append("the audited code's process died (a signal, os._exit or sys.exit): run it on the same "
                       "data outside dpaudit to see why; the findings hold its last words")
        elif kind == "nondeterministic":
            out.append("the same data and seed gave different releases: draw every random number from the rng "
                       "argument and keep no state between calls")
        elif kind == "raises" and "bounds" in error.lower():
            out.append("the code asks for a public box: state it with --bounds LO,HI (or --param "
                       "bounds=dataset for the dataset's public box)")
        elif kind == "nan":
            out.append("some releases held NaN or ±inf: a points, centroids or labels release must be finite "
                       "(a vector release may use them for 'no answer': --output vector)")
    return out


def hints(results: RunResults) -> list[str]:
    """The hints for ``results`` (any command's results dict), each once, in a stable order."""
    out = _finding_hints([f for f in results.get("findings") or [] if isinstance(f, dict)])
    for e in (results.get("epsilon_estimate"), results):  # attack and audit; estimate-eps (its own keys)
        if not isinstance(e, dict):
            continue
        looks = (e.get("counts") or {}).get("looks") or {}
        if looks.get("stopped") == "deadline":
            out.append("the ε estimate was cut by its time budget: a larger --time-budget, or --releases N for a "
                       "fixed plan, certifies on more releases")
    parts = results.get("parts") or {}
    for part, status in parts.items():
        text = str(status)
        missing = re.search(r"No module named '([\w.]+)'", text)
        if missing:
            module = missing.group(1).split(".")[0]
            extra = {"diffprivlib": "diffprivlib", "dask": "dask", "distributed": "dask"}.get(module)
            out.append(f"the {part} part needs {module}: pip install "
                       + (f"'dpaudit[{extra}]'" if extra else module))
    sweep = results.get("sweep") or {}
    if results.get("status") == "interrupted" and sweep:
        out.append("continue the sweep where it stopped with --resume --out DIR (DIR: its run folder)")
    return list(dict.fromkeys(out))
