"""Text from audited code is shown as quoted data: control characters escaped, one line, cut to a length,
never where a verdict line could be.

A plug-in raises and warns with a message that carries OSC/CSI escape sequences, BEL, a carriage return, a
right-to-left override and lines reading ``VERDICT: NO VIOLATION FOUND`` and ``Conclusion: Consistent …``
(``tests/plugins/faults.py:hostile_text``).  Through every command, nothing of it may act on a terminal
(stdout, stderr, ``cat report.md``, ``cat results.csv``) or start a line of its own.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dpaudit.cli import app
from dpaudit.execution.untrusted import printable, quoted

HOSTILE = f"{Path(__file__).parent / 'plugins' / 'faults.py'}:hostile_text"
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
SMALL = {
    "attack": ["--records", "100", "--repeats", "1", "--attack", "yeom", "--releases", "2000"],
    "audit": ["--records", "100", "--samples", "200", "--attack", "yeom", "--repeats", "1"],
    "estimate-eps": ["--samples", "200", "--records", "10", "--max-pairs", "1"],
    "sweep": ["--eps", "1,2", "--repeats", "1", "--records", "30", "--clusterers", "none"],
}


def test_printable_and_quoted() -> None:
    text = "a\x1b]0;t\x07b\r\nc\u202ed\x9b"
    assert printable(text) == "a\\x1b]0;t\\x07b\\r\\nc\\u202ed\\x9b"
    assert not CONTROL.search(printable(text)) and "\n" not in printable(text)
    assert quoted("x" * 500, limit=20) == '"' + "x" * 19 + '…"' and quoted("ok") == '"ok"'


@pytest.mark.parametrize("command", sorted(SMALL))
def test_audited_text_cannot_forge_a_verdict_or_act_on_a_terminal(command: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = CliRunner().invoke(app, [command, "-m", HOSTILE, "--eps", "1", *SMALL[command], "--out", str(out),
                                   "--timeout", "20", "--no-progress"])
    assert res.exit_code == 3, res.output  # the code failed everywhere: incomplete, never 0
    assert "Traceback" not in res.output
    for name, text in [("stdout", res.stdout), ("stderr", res.stderr)] + [
            (p.name, p.read_text(encoding="utf-8")) for p in out.iterdir() if p.suffix in (".md", ".csv", ".html")]:
        assert not CONTROL.search(text.replace("\n", "").replace("\t", "")), name
        lines = text.splitlines()
        forged = [line for line in lines if line.lstrip(" |#").startswith(("VERDICT", "Conclusion: Consistent"))]
        assert not forged, (name, forged)
    stdout = res.stdout.rstrip("\n").splitlines()
    assert [line for line in stdout if line.startswith("Conclusion:")] == [stdout[-1]]
    assert "boom" in res.stderr  # the finding is shown — as data
    assert re.search(r'first error "RuntimeError: .*\\x1b\]0;pwned\\x07', res.stderr)
