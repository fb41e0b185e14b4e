"""A repair run's page in Chromium (issue 38, item 3), as clear as a script run's: each
attempt's change against the repository and the files it rewrote, the reviewer's word, the
regressions; the baseline and the target tests; the outcome said as a repair's; the run's
own junit report not listed as a file the run wrote. At a laptop's width and a phone's.
Made from the repair loop over its fakes, and from README's example run end to end (the
recorded answers, the real sandbox and the example repository's own suite)."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from selfcorrect_action.cli import main
from selfcorrect_action.repair.test_run import REPORT_PATH
from selfcorrect_action.viewer.page import render_page
from tests.browser.checks import errors, serious_violations
from tests.e2e.test_run_repair import REPLAY, SPEC, checkout
from tests.unit.loop.repair.test_repair_loop import ADD, MUL, OTHER
from tests.unit.viewer.repair_runs import repair_run

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver

# What a reader sees of each attempt section: its title, the visible diff lines added,
# the reviewer's word, the regressions, whether a script's "code (...)" summary is there.
SECTIONS = """
return [...document.querySelectorAll('section.attempt')].map(s => ({
  title: s.querySelector('h3').textContent,
  added: [...s.querySelectorAll('pre.diff .add')].filter(l => l.offsetHeight > 0)
    .map(l => l.textContent.trim()),
  rewritten: [...s.querySelectorAll('details.rewritten summary')].map(x => x.textContent),
  review: (s.querySelector('blockquote.review') || {}).textContent || '',
  reviewed: [...s.querySelectorAll('p')].map(p => p.textContent)
    .filter(t => t.startsWith('The reviewer')),
  regressions: [...s.querySelectorAll('ul.regressions li')].map(li => li.textContent),
  code: [...s.querySelectorAll('summary')].some(x => x.textContent.startsWith('code (')),
}));
"""
BASELINE = """
return [...document.querySelectorAll('#repository table.baseline tbody tr')]
  .filter(r => r.offsetHeight > 0)
  .map(r => [...r.cells].map(c => c.textContent));
"""


@pytest.fixture
def at_width(page: WebDriver) -> Iterator[Any]:
    def resize(width: int) -> None:
        page.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600})
    yield resize
    page.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def _open(page: WebDriver, tmp_path: Path, html: str) -> None:
    path = tmp_path / "repair.html"
    path.write_text(html, encoding="utf-8")
    page.get(path.as_uri())


def _text(page: WebDriver, selector: str) -> str:
    return " ".join(str(page.execute_script(
        f"return document.querySelector({selector!r}).innerText")).split())


@pytest.mark.parametrize("width", [1280, 390])
def test_a_repairs_page_shows_each_change_review_and_regression(
        page: WebDriver, at_width: Any, tmp_path: Path, axe_source: str, width: int) -> None:
    at_width(width)
    _open(page, tmp_path, render_page(repair_run(tmp_path), (), secrets=[]))
    shown = page.execute_script(SECTIONS)
    assert [s["title"] for s in shown] == [
        "Attempt 1 of 6: initial, failed (contract)", "Attempt 2 of 6: patch, failed (contract)",
        "Attempt 3 of 6: rethink, failed (semantic)", "Attempt 4 of 6: rethink, passed"]
    assert not any(s["code"] for s in shown), "no script's code summary on a repair"
    # The refused test edit, the regression, the rejected fix and the fix, each diff open.
    assert "+    assert add(2, 2) == 0" in shown[0]["added"]
    assert "+    return a ** b" in shown[1]["added"]
    assert shown[3]["added"] == ["+++ b/pkg/core.py", "+    return a + b", "+# fixed"]
    assert [s["rewritten"] for s in shown] == [
        ["tests/test_core.py as attempt 1 wrote it (4 lines)"],
        *[[f"pkg/core.py as attempt {n} wrote it ({lines} lines)"]
          for n, lines in ((2, 6), (3, 6), (4, 7))]]
    assert [s["reviewed"] for s in shown] == [
        [], *[[f"The reviewer {word} the change before it ran:"]
              for word in ("approved", "rejected", "approved")]]
    assert shown[2]["review"] == "hard-codes the test's expected value"
    assert [s["regressions"] for s in shown] == [[], [MUL], [], []]

    assert page.execute_script(BASELINE) == [[ADD, "failed", "yes", "assert -0 == 4"]]
    repository = _text(page, "#repository")
    assert "baseline 1 passed, 1 failed, 0 skipped, 1 flaky (two runs" in repository
    assert f"target tests 1, failing in both baseline runs: {ADD}" in repository
    assert f"flaky tests {OTHER}: their result differed" in repository
    outcome = _text(page, "#outcome")
    assert outcome.startswith("Outcome Passed. The target tests pass and no test that passed "
                              "at baseline fails, with the change of attempt 4 to pkg/core.py:")
    assert "+ return a + b" in outcome and "The script is" not in outcome
    assert REPORT_PATH not in _text(page, "main")
    assert errors(page) == []
    assert serious_violations(page, axe_source) == []


@pytest.mark.usefixtures("sandbox_image")
def test_the_readme_repair_examples_page(page: WebDriver, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """README's "Repair mode" run (examples/repair/calc and its recorded answers), recorded
    in a history, its page written by `selfcorrect view` as a user would."""
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SELFCORRECT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    repo, history = checkout(tmp_path), str(tmp_path / "history")
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        assert main(["run", str(repo / SPEC), "--replay", str(REPLAY), "--out",
                     str(tmp_path / "out"), "--history", history, "--json"]) == 0
        run_id = json.loads(printed.getvalue())["run_id"]
        assert main(["view", run_id, "--no-open", "--history", history, "--out",
                     str(tmp_path / "page.html")]) == 0
    page.get((tmp_path / "page.html").as_uri())
    shown = page.execute_script(SECTIONS)
    assert [s["title"] for s in shown] == [
        "Attempt 1 of 4: initial, failed (contract)", "Attempt 2 of 4: patch, failed (contract)",
        "Attempt 3 of 4: rethink, passed"]
    assert "+    return total(values) / len(values)" in shown[2]["added"]
    assert shown[1]["regressions"] == ["tests/test_core.py::test_clamp[11-10]",
                                       "tests/test_core.py::test_clamp[5-5]"]
    assert [row[:3] for row in page.execute_script(BASELINE)] == [
        ["tests/test_core.py::test_mean", "failed", "yes"],
        ["tests/test_core.py::test_mean_of_one", "failed", "yes"]]
    assert "with the change of attempt 3 to src/calc/core.py:" in _text(page, "#outcome")
    assert REPORT_PATH not in _text(page, "main")
    assert errors(page) == []
