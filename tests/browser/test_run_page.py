"""A run's page in a real browser (Debian's Chromium through Selenium), opened from a file as
`selfcorrect view` opens it: every attempt, picture and chart there and drawn, nothing on the
console, an injected script refused by the page's policy, nothing of a hostile run.json run,
and no serious accessibility violation (axe-core)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

from PIL import Image, ImageDraw

from selfcorrect_action.history.artifacts import KeptArtifact
from selfcorrect_action.report.run_json import load_run_json
from selfcorrect_action.viewer.page import render_page
from tests.browser.checks import errors, serious_violations
from tests.unit.report.runs import SECRETS, passing_run
from tests.unit.viewer.hostile import PWNED, hostile_run_json

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver

def _chart(colour: str) -> bytes:
    image = Image.new("RGB", (320, 200), "white")
    ImageDraw.Draw(image).rectangle([40, 60, 120, 190], fill=colour)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def _page(tmp_path: Path, html: str) -> str:
    path = tmp_path / "page.html"
    path.write_text(html, encoding="utf-8")
    return path.as_uri()


def _run_page(tmp_path: Path) -> str:
    kept = (KeptArtifact(1, "Chart.png", "png", 900, _chart("red")),
            KeptArtifact(2, "chart.png", "png", 900, _chart("green")),
            KeptArtifact(2, "totals.csv", "csv", 26, b"month,total\nJan,10\nFeb,20\n"))
    return _page(tmp_path, render_page(passing_run(tmp_path), kept, secrets=SECRETS))


def test_every_attempt_picture_and_chart_is_there_and_the_console_is_quiet(
        page: WebDriver, tmp_path: Path) -> None:
    page.get(_run_page(tmp_path))
    sections = page.execute_script(
        "return [...document.querySelectorAll('section.attempt')].map(s => s.id)")
    assert sections == ["attempt-1", "attempt-2"]
    images = page.execute_script(
        "return [...document.images].map(i => [i.alt, i.complete && i.naturalWidth])")
    assert len(images) == 4, "each picture in its attempt's section and in the strip"
    assert all(width == 320 for _, width in images), images
    bars = page.execute_script(
        "return [...document.querySelectorAll('svg.bars')].map(s => "
        "[...s.querySelectorAll('rect')].map(r => r.getBBox().height > 0))")
    assert bars == [[True, True], [True, True]]
    assert page.execute_script("return document.querySelectorAll('table.preview td').length") \
        == 4
    assert errors(page) == []


def test_the_policy_blocks_a_script_injected_into_the_page(page: WebDriver,
                                                           tmp_path: Path) -> None:
    page.get(_run_page(tmp_path))
    page.execute_script(
        f"const s = document.createElement('script'); s.textContent = 'window.{PWNED} = 1';"
        "document.body.appendChild(s);"
        f"const i = document.createElement('img'); i.setAttribute('onerror', "
        f"'window.{PWNED} = 2'); i.src = 'data:image/png;base64,broken';"
        "document.body.appendChild(i);")
    page.execute_script("return new Promise(done => setTimeout(done, 200))")
    assert page.execute_script(f"return window.{PWNED} === undefined")
    refused = errors(page)
    assert any("Content Security Policy" in message for message in refused), refused


def test_a_hostile_run_json_runs_nothing_in_the_page(page: WebDriver, tmp_path: Path) -> None:
    state = load_run_json(hostile_run_json())
    page.get(_page(tmp_path, render_page(state, (), secrets=[], from_report=True)))
    assert page.execute_script(f"return window.{PWNED} === undefined")
    assert page.execute_script("return document.scripts.length") == 0
    # Nothing tried to run: the policy had nothing to refuse.
    assert errors(page) == []
    shown = page.execute_script("return document.querySelectorAll('section.attempt').length")
    rows = page.execute_script("return document.querySelectorAll('#attempts tbody tr').length")
    assert (shown, rows) == (50, 500)
    assert "<script>window.__pwned=1</script>" in page.execute_script(
        "return document.querySelector('#task blockquote').textContent")


def test_no_serious_accessibility_violation(page: WebDriver, tmp_path: Path,
                                            axe_source: str) -> None:
    page.get(_run_page(tmp_path))
    assert serious_violations(page, axe_source) == []
