"""The pages at a laptop's width and a phone's (issue 38, item 4): no page-level horizontal
scroll; no word split across lines in a table (a long path or test id may break only after
`/`, `-` or `_`); a table wider than the screen scrolls inside its own wrapper, which the
keyboard can reach. Measured in Chromium: the document's scroll width, and each word's line
boxes (a DOM Range over the word's characters has one client rect per line it is on)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from selfcorrect_action.cli import main
from selfcorrect_action.history.entry import SOURCE_RUN
from selfcorrect_action.history.record import record_run
from selfcorrect_action.report.run_json import run_json
from selfcorrect_action.viewer.page import render_page
from tests.browser.checks import errors, serious_violations
from tests.unit.report.runs import SECRETS, exhausted_run, passing_run
from tests.unit.viewer.repair_runs import repair_run

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver

WIDTHS = (1280, 390)
# A path as long as a real repository's, in the site's spec column and the run's summary.
LONG_SPEC = ".selfcorrect/tasks/" + "_".join(["fix_ordinal_suffixes_of_large_numbers"] * 3) \
    + ".yml"

# Every run of characters between the places a line may break (spaces, and after / - _)
# inside a table cell, with the number of lines it is drawn on; only the drawn ones.
WORDS = """
const found = [];
for (const cell of document.querySelectorAll('th, td')) {
  const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node = walk.nextNode(); node; node = walk.nextNode()) {
    for (const m of node.data.matchAll(/[^\\s\\/_-]+/g)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const rects = [...range.getClientRects()].filter(r => r.width > 0);
      if (rects.length) {
        found.push([m[0], new Set(rects.map(r => Math.round(r.top))).size]);
      }
    }
  }
}
return found;
"""


@pytest.fixture
def at_width(page: WebDriver) -> Iterator[Any]:
    """Sets the viewport to a width (a phone's emulated as one: its viewport meta applies)."""
    def resize(width: int) -> None:
        page.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600})
    yield resize
    page.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def _write(tmp_path: Path, name: str, html: str) -> str:
    path = tmp_path / name
    path.write_text(html, encoding="utf-8")
    return path.as_uri()


def _pages(tmp_path: Path) -> dict[str, str]:
    script = passing_run(tmp_path).model_copy(update={"spec_source": LONG_SPEC})
    history = tmp_path / "history"
    for state in (script, exhausted_run(), repair_run(tmp_path)):
        record_run(history, state, run_json=run_json(state, secrets=[]), source=SOURCE_RUN,
                   location="")
    assert main(["view", "--site", str(tmp_path / "site"), "--history", str(history)]) == 0
    return {"script": _write(tmp_path, "script.html", render_page(script, (), secrets=SECRETS)),
            "repair": _write(tmp_path, "repair.html",
                             render_page(repair_run(tmp_path), (), secrets=[])),
            "index": (tmp_path / "site" / "index.html").as_uri()}


def _layout(page: WebDriver) -> dict[str, Any]:
    found: list[list[Any]] = page.execute_script(WORDS)
    return {
        "page_scrolls": page.execute_script(
            "const e = document.documentElement; return e.scrollWidth > e.clientWidth"),
        "split": sorted({word for word, lines in found if lines > 1}),
        "words": {word for word, _ in found},
        "wide": page.execute_script(
            "return [...document.querySelectorAll('table')].filter(t => "
            "t.getBoundingClientRect().right > document.documentElement.clientWidth + 1 && "
            "!(t.parentElement.classList.contains('wide') && "
            "t.parentElement.tabIndex === 0 && "
            "t.parentElement.getBoundingClientRect().right <= "
            "document.documentElement.clientWidth + 1)).length"),
    }


@pytest.mark.parametrize("width", WIDTHS)
def test_no_word_is_split_and_the_page_never_scrolls_sideways(
        page: WebDriver, at_width: Any, tmp_path: Path, width: int) -> None:
    at_width(width)
    for name, url in _pages(tmp_path).items():
        page.get(url)
        layout = _layout(page)
        assert layout["split"] == [], f"{name} at {width} px: words split across lines"
        assert not layout["page_scrolls"], f"{name} at {width} px scrolls sideways"
        assert layout["wide"] == 0, f"{name} at {width} px: a table wider than the screen " \
            "outside a wrapper of its own"
        # The measure saw the cells (it cannot pass on an empty page).
        assert {"passed", "status"} <= layout["words"] or name == "index", name
        assert errors(page) == []


def test_at_a_phones_width_a_wide_table_scrolls_in_its_wrapper(
        page: WebDriver, at_width: Any, tmp_path: Path, axe_source: str) -> None:
    at_width(390)
    page.get(_pages(tmp_path)["script"])
    wrapper = page.execute_script(
        "const w = document.querySelector('#attempts table').parentElement;"
        "return [w.className, w.scrollWidth > w.clientWidth, w.tabIndex, "
        "w.getAttribute('role'), w.getAttribute('aria-label')]")
    assert wrapper == ["wide", True, 0, "region", "Every attempt, in order"]
    # The known word of the issue, "passed", drawn on one line in its cell.
    lines = page.execute_script(
        "const cell = [...document.querySelectorAll('#attempts td.result')]"
        ".find(c => c.textContent === 'passed');"
        "const range = document.createRange(); range.selectNodeContents(cell);"
        "return new Set([...range.getClientRects()].map(r => Math.round(r.top))).size")
    assert lines == 1
    assert serious_violations(page, axe_source) == []
