"""The documentation site builds with ``mkdocs build --strict``.

CI runs the README's test command, so this is where CI builds the site: a broken link, a link to a
heading that does not exist, a page left out of the navigation or an API reference that no longer
resolves (a module renamed or removed) is a warning, and ``--strict`` turns any warning into a
failed build.  The build goes to a temporary directory; nothing in the checkout is written.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
NEEDS = "mkdocs and mkdocstrings are not installed: pip install -e \".[docs]\" (CI installs the docs extra, .ci/run)"


def _mkdocs() -> None:
    try:
        import mkdocs  # noqa: F401
        import mkdocstrings  # noqa: F401
        import mkdocstrings_handlers.python  # noqa: F401
    except ImportError:
        pytest.fail(NEEDS)


def _build(config: Path, site: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
                           "--site-dir", str(site)], capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _mkdocs()
    out = tmp_path_factory.mktemp("site")
    proc = _build(REPO / "mkdocs.yml", out, REPO)
    warnings = "\n".join(line for line in proc.stderr.splitlines() if not line.startswith("INFO"))
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{warnings or proc.stderr[-4000:]}"
    return out


def test_the_site_builds_strict(site: Path) -> None:
    assert (site / "index.html").is_file()
    pages = sorted(p.relative_to(DOCS).with_suffix("") for p in DOCS.rglob("*.md") if "_hooks" not in p.parts)
    for page in pages:
        html = site / page.parent / "index.html" if page.name == "index" else site / page / "index.html"
        assert html.is_file(), f"docs/{page}.md was not built"


@pytest.mark.parametrize(("page", "names"), [
    ("mechanisms", ["PrivacyClaim", "NDLaplace", "DPKCCM"]),
    ("execution", ["draw_releases", "WorkerMechanism", "settle_verdict"]),
    ("membership", ["ShokriAttack", "LiRAAttack", "epsilon_one_run"]),
    ("reconstruction", ["dpaudit.attacks.reconstruction"]),
    ("epsilon", ["estimate_epsilon", "EpsilonEstimate"]),
    ("dpaudit", ["EXIT_STATUS", "dpaudit.cli"]),
], ids=lambda v: v if isinstance(v, str) else "")
def test_the_api_reference_is_rendered_from_the_docstrings(site: Path, page: str, names: list[str]) -> None:
    html = (site / "api" / page / "index.html").read_text(encoding="utf-8")
    for name in names:
        assert name in html, f"api/{page}: {name} is not rendered"
    assert not re.search(r":(func|class|mod|meth|attr|data):<code>", html), "a Sphinx role shown raw"


@pytest.mark.parametrize("page", ["mechanisms", "execution", "membership", "reconstruction", "epsilon", "dpaudit"])
def test_every_code_example_on_an_api_page_renders_as_code(site: Path, page: str) -> None:
    """A docstring's ``>>>`` example is a code block on the page (an ``Examples`` section), never a paragraph of
    run-together text — which is what a bare ``>>>`` in a numpy-style description becomes: Markdown reads each
    ``>`` as a quote, three nested blockquotes around one paragraph."""
    html = (site / "api" / page / "index.html").read_text(encoding="utf-8")
    quoted = re.search(r"<blockquote>\s*<blockquote>\s*<blockquote>\s*<p>(.*?)</p>", html, re.S)
    assert quoted is None, f"api/{page}: a >>> example rendered as text: {quoted.group(1)[:200] if quoted else ''}"
    prose = re.sub(r"<(pre|code)\b.*?</\1>", "", html, flags=re.S)
    assert "&gt;&gt;&gt;" not in prose, f"api/{page}: a >>> example outside a code block"


def test_the_docs_extra_installs_what_the_build_asks_for() -> None:
    """mkdocstrings formats the separate signatures with Black or Ruff: the [docs] extra installs one."""
    docs = re.search(r"^docs = \[(.*)\]", (REPO / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    assert docs and re.search(r'"(ruff|black)\b', docs.group(1)), "the docs extra installs a formatter"


def test_a_broken_link_fails_the_strict_build(tmp_path: Path) -> None:
    """The site's own link checks (``validation`` in mkdocs.yml) make a broken link fail the build."""
    _mkdocs()
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    validation = re.search(r"^validation:\n(?:[ ]+.*\n)+", config, re.M)
    assert validation, "mkdocs.yml states its link validation"
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\n[there](other.md#no-such-heading)\n", encoding="utf-8")
    (tmp_path / "docs" / "other.md").write_text("# Other\n\n[gone](gone.md)\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text(textwrap.dedent("""\
        site_name: broken
        nav:
          - index.md
          - other.md
        """) + validation.group(0), encoding="utf-8")
    proc = _build(tmp_path / "mkdocs.yml", tmp_path / "site", tmp_path)
    assert proc.returncode != 0
    assert "gone.md" in proc.stderr and "no-such-heading" in proc.stderr, proc.stderr[-2000:]


def test_the_verdicts_page_documents_the_same_exit_status_table() -> None:
    from dpaudit.verdicts.exit_status import EXIT_STATUS

    text = (DOCS / "verdicts.md").read_text(encoding="utf-8")
    table = text.split("## Exit status", 1)[1].split("\n\n", 2)[1]
    rows = [tuple(c.strip() for c in line.strip("|").split("|")) for line in table.splitlines()[2:]]
    assert rows == [(code, when) for code, when in EXIT_STATUS]
