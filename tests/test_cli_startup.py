"""``dpaudit --help`` stays fast: the command line loads no heavy module until a command runs.

Deterministic (no timing): a fresh interpreter imports ``dpaudit.cli``, prints the help of the
root app and of every registered command, and reports which modules got loaded.  Heavy ones
(scikit-learn, SciPy, pandas, matplotlib, ART, Dask, numpy, and the ``attacks`` modules that pull
them) must be imported inside the functions that need them.  Wall time is not tested (shared
machines make it noisy); this is what keeps it low.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = ("sklearn", "scipy", "pandas", "matplotlib", "art", "dask", "distributed", "numpy", "joblib",
         "jinja2", "attacks", "mechanisms")

PROBE = r"""
import contextlib, io, json, sys
import typer
from dpaudit.cli import app

names = sorted(typer.main.get_command(app).commands)
helps = {}
for args in [[]] + [[name] for name in names]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            app([*args, "--help"])
        except SystemExit as exc:
            code = exc.code
    helps[" ".join(args) or "(root)"] = [code, out.getvalue()]
print(json.dumps({"helps": helps, "modules": sorted(sys.modules)}))
"""


def test_help_of_every_command_loads_no_heavy_module() -> None:
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[1])
    assert proc.returncode == 0, proc.stderr
    probe = json.loads(proc.stdout)
    helps = probe["helps"]
    assert {"(root)", "attack", "estimate-eps", "sweep", "audit", "report", "mechanisms", "datasets"} <= set(helps)
    for command, (code, text) in helps.items():
        assert code in (0, None) and "Usage:" in text, f"{command} --help failed (exit {code}): {text[:200]}"
    loaded = sorted({m for m in probe["modules"] if m.split(".")[0] in HEAVY})
    assert not loaded, ("`dpaudit --help` imported heavy modules; import them inside the functions that "
                        f"need them: {', '.join(loaded[:20])}")
