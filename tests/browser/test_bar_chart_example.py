"""The bar-chart example end to end, as the README shows it: `selfcorrect run` with its
recorded answers (the real loop and sandbox), `selfcorrect history` lists the run, `selfcorrect
view` writes its page, and Chromium shows both attempts with the charts each drew, the token
and cost charts, and nothing on the console. The README's screenshot is made the same way
(tests/browser/screenshot.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from PIL import Image

from tests.browser.checks import errors, serious_violations
from tests.browser.screenshot import HEIGHT, SCREENSHOT, WIDTH, capture, example_page

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver


@pytest.fixture(autouse=True)
def _no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SELFCORRECT_MODEL"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("sandbox_image")
def test_the_bar_chart_examples_page_shows_both_attempts_and_their_charts(
        page: WebDriver, tmp_path: Path, axe_source: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    run_id, html = example_page(tmp_path)
    # `selfcorrect run` said how to see it; `selfcorrect history` listed it (example_page).
    assert f"page:     selfcorrect view {run_id}  (the run is in the history at " in \
        capsys.readouterr().out
    capture(page, html, tmp_path / "shot.png")
    assert page.title == "selfcorrect: scripts/sales_chart.py (passed)"
    sections = page.execute_script(
        "return [...document.querySelectorAll('section.attempt h3')].map(h => h.textContent)")
    assert sections == ["Attempt 1 of 6: initial, failed (contract)",
                        "Attempt 2 of 6: patch, passed"]
    drawn = page.execute_script(
        "return [...document.querySelectorAll('section.attempt img')].map(i => "
        "[i.closest('section').id, i.alt, i.complete && i.naturalWidth > 0])")
    assert drawn == [["attempt-1", "sales_chart.png, drawn by attempt 1", True],
                     ["attempt-2", "chart.png, drawn by attempt 2", True]]
    assert page.execute_script("return document.querySelectorAll('svg.bars rect').length") == 4
    assert run_id in page.execute_script("return document.querySelector('header').textContent")
    assert errors(page) == []
    assert serious_violations(page, axe_source) == []
    with Image.open(tmp_path / "shot.png") as shot:
        assert shot.size == (WIDTH, HEIGHT)


def test_the_readme_shows_the_screenshot() -> None:
    readme = (SCREENSHOT.parents[1] / "README.md").read_text()
    assert f"({SCREENSHOT.relative_to(SCREENSHOT.parents[1]).as_posix()})" in readme
    with Image.open(SCREENSHOT) as shot:
        assert shot.format == "PNG" and shot.size == (WIDTH, HEIGHT)
