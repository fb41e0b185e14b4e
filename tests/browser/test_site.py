"""The history as a static site, served as any static host would serve it (the standard
library's HTTP server on 127.0.0.1): the index's filters narrow the list in the browser, its
links open the runs' pages, every run is listed without JavaScript, runs of one spec are
told apart, and axe finds no serious violation."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from selfcorrect_action.cli import main
from selfcorrect_action.history.entry import SOURCE_RUN, entry_for
from selfcorrect_action.history.record import record_run
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.report.run_json import run_json
from selfcorrect_action.viewer import site as viewer_site
from tests.browser import chrome
from tests.browser.checks import errors, serious_violations
from tests.unit.report.runs import exhausted_run, passing_run, stopped_run
from tests.unit.viewer.repair_runs import repair_run

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver


def _runs(tmp_path: Path) -> list[RunState]:
    return [
        passing_run(tmp_path).model_copy(update={
            "run_id": "run-passed-1", "started_at": "2026-03-01T10:00:00Z"}),
        exhausted_run().model_copy(update={
            "run_id": "run-exhausted", "started_at": "2026-02-01T10:00:00Z",
            "spec_source": ".selfcorrect/tasks/report.yml"}),
        stopped_run().model_copy(update={
            "run_id": "run-stopped", "started_at": "2026-01-01T10:00:00Z"}),
        passing_run(tmp_path).model_copy(update={
            "run_id": "run-passed-2", "started_at": "2025-12-01T10:00:00Z",
            "status": Status.PASSED}),
    ]


@pytest.fixture
def site(tmp_path: Path) -> Iterator[str]:
    """The site written by `selfcorrect view --site`, served; its index's URL."""
    history = tmp_path / "history"
    for state in _runs(tmp_path):
        record_run(history, state, run_json=run_json(state, secrets=[]), source=SOURCE_RUN,
                   location="")
    folder = tmp_path / "site"
    assert main(["view", "--site", str(folder), "--history", str(history)]) == 0
    handler = functools.partial(_Quiet, directory=str(folder))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return None


def _shown(driver: WebDriver) -> list[str]:
    return list(driver.execute_script(
        "return [...document.querySelectorAll('#runs tbody tr')].filter(r => !r.hidden)"
        ".map(r => r.dataset.status + ' ' + r.dataset.spec)"))


def test_the_filters_narrow_the_list(page: WebDriver, site: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    page.get(site)
    assert page.find_element(By.ID, "filters").is_displayed()
    assert len(_shown(page)) == 4
    assert page.find_element(By.ID, "shown").text == "4 of 4 runs shown"
    Select(page.find_element(By.NAME, "status")).select_by_value("passed")
    assert [row.split()[0] for row in _shown(page)] == ["passed", "passed"]
    Select(page.find_element(By.NAME, "status")).select_by_value("")
    page.find_element(By.NAME, "spec").send_keys("report.yml")
    assert _shown(page) == ["exhausted .selfcorrect/tasks/report.yml"]
    page.find_element(By.NAME, "spec").clear()
    page.execute_script("const d = document.querySelector('[name=since]');"
                        "d.value = '2026-01-15'; d.dispatchEvent(new Event('input', "
                        "{bubbles: true}));")
    assert len(_shown(page)) == 2
    assert page.find_element(By.ID, "shown").text == "2 of 4 runs shown"
    assert errors(page) == []


def test_each_run_links_to_its_page(page: WebDriver, site: str) -> None:
    from selenium.webdriver.common.by import By

    page.get(site)
    links = [a.get_attribute("href") or "" for a in
             page.find_elements(By.CSS_SELECTOR, "#runs a")]
    assert len(links) == 4 and all(link.startswith("http://127.0.0.1") for link in links)
    page.get(links[0])
    assert page.title == "selfcorrect: scripts/sales_chart.py (passed)"
    assert page.execute_script("return document.querySelectorAll('section.attempt').length") \
        == 2
    assert errors(page) == []


@pytest.mark.usefixtures("browser")  # skipped, or failed under CI=true, without Chromium
def test_without_javascript_every_run_is_listed(site: str) -> None:
    from selenium.webdriver.common.by import By

    with chrome.chrome(javascript=False) as driver:
        driver.get(site)
        rows = driver.find_elements(By.CSS_SELECTOR, "#runs tbody tr")
        assert len(rows) == 4 and all(row.is_displayed() for row in rows)
        assert not driver.find_element(By.ID, "filters").is_displayed()


def test_the_index_has_no_serious_accessibility_violation(page: WebDriver, site: str,
                                                          axe_source: str) -> None:
    page.get(site)
    assert serious_violations(page, axe_source) == []


def test_runs_of_one_repair_spec_are_told_apart(page: WebDriver, tmp_path: Path,
                                                axe_source: str) -> None:
    """Issue 38: nine runs of one repair spec were nine identical rows, the script column
    empty. Each row now says the task's first words and the run id, and what was changed."""
    fixed = repair_run(tmp_path)
    rows = []
    for n in range(9):
        state = fixed.model_copy(update={
            "run_id": f"run-{n}", "spec_source": ".selfcorrect/tasks/fix_ordinal.yml",
            "started_at": f"2026-12-0{n + 1}T10:00:00Z",
            "status": Status.PASSED if n % 2 else Status.EXHAUSTED,
            "spec": fixed.spec.model_copy(update={"prompt": f"ordinal({n + 10}) is wrong"})})
        entry = entry_for(state, source=SOURCE_RUN, location="")
        rows.append(viewer_site.site_row(entry, "", state, secrets=[]))
    index = tmp_path / "index.html"
    index.write_text(viewer_site.site_index(rows, title="history"), encoding="utf-8")
    page.get(index.as_uri())
    cells = page.execute_script(
        "return [...document.querySelectorAll('#runs tbody tr')].map(r => "
        "[r.cells[0].innerText, r.cells[2].innerText, r.cells[3].innerText])")
    assert len({spec for _, spec, _ in cells}) == 9, cells
    assert len({when for when, _, _ in cells}) == 9
    assert all(spec.startswith("fix_ordinal.yml in .selfcorrect/tasks") for _, spec, _ in cells)
    assert sorted({made for _, _, made in cells}) == [
        "changed pkg/core.py", "repair of pkg/*.py: no change passed"]
    assert errors(page) == []
    assert serious_violations(page, axe_source) == []
