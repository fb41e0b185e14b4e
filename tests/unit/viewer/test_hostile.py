"""A hostile run.json (tests/unit/viewer/hostile.py: markup, event handlers and javascript:
links in every text, outputs of 10 MB, 500 attempts) renders escaped and bounded, with work
that does not grow with what the page leaves out. benchmarks/viewer_render.py times it; the
browser tests (tests/browser/) load it and check that nothing in it runs."""

from __future__ import annotations

import functools

import pytest

from selfcorrect_action.history.entry import SOURCE_IMPORT, entry_for
from selfcorrect_action.loop.state import RunState
from selfcorrect_action.report import text
from selfcorrect_action.report.run_json import load_run_json
from selfcorrect_action.viewer import site
from selfcorrect_action.viewer.page import FIRST_IN_FULL, LAST_IN_FULL, page_name, render_page
from tests.unit.viewer.hostile import ATTEMPTS, HUGE, MARKUP, hostile_run_json
from tests.unit.viewer.html_checks import parse, structure_problems

MAX_PAGE_BYTES = 6 * 1024 * 1024
MAX_BLOCK_CHARS = 60_000  # the longest quote: code, at the view-model's CODE_CHARS


@functools.cache
def _state() -> RunState:
    return load_run_json(hostile_run_json())


@functools.cache
def _page(from_report: bool) -> str:
    """From a run.json (`view`, the site), or from a live state (the action's page at the
    end of its run: a smaller run, as its whole state is redacted first)."""
    if from_report:
        return render_page(_state(), (), secrets=["correct-horse-battery"], from_report=True)
    live = load_run_json(hostile_run_json(attempts=60, huge=100_000))
    return render_page(live, (), secrets=["correct-horse-battery"])


def test_the_hostile_run_is_as_large_as_it_claims() -> None:
    state = _state()
    assert len(state.attempts) == ATTEMPTS
    outputs = [a.execution.stdout.total_bytes for a in state.attempts if a.execution]
    assert max(outputs) == HUGE and MARKUP in state.spec.prompt


@pytest.mark.parametrize("from_report", [True, False], ids=["from run.json", "live"])
def test_every_hostile_text_is_escaped(from_report: bool) -> None:
    html = _page(from_report)
    page = parse(html)
    assert structure_problems(page) == []
    assert page.all("script") == [] and page.scripts == []
    assert not any(name.startswith("on") for _, attrs in page.elements for name in attrs)
    # The markup is there, as text a reader sees.
    assert "<script>window.__pwned=1</script>" in page.text
    assert 'onerror="window.__pwned=2"' in page.text and "javascript:" in page.text
    assert "<script" not in html.lower() and "<img src=x" not in html


def test_the_page_is_bounded_whatever_the_run_holds() -> None:
    html = _page(True)
    assert len(html.encode()) < MAX_PAGE_BYTES
    page = parse(html)
    sections = [a for a in page.all("section") if (a.get("id") or "").startswith("attempt-")]
    assert len(sections) == FIRST_IN_FULL + LAST_IN_FULL
    assert len(page.all("tr")) > ATTEMPTS  # every attempt still has its row
    assert "Attempts 11 to 460 (450 of them) are in the table only" in page.text


def test_rendering_does_work_only_for_the_attempts_it_shows(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The work bound: a diff per attempt shown in full, whatever the run's length (the
    time is printed by benchmarks/viewer_render.py)."""
    calls: list[int] = []
    real = text.unified_diff

    def counted(*args: object, **kwargs: object) -> text.Diff:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(text, "unified_diff", counted)
    render_page(_state(), (), secrets=[], from_report=True)
    assert len(calls) <= FIRST_IN_FULL + LAST_IN_FULL


def test_every_quote_is_bounded() -> None:
    page = parse(_page(True))
    longest = max(len(part) for part in page.text_parts)
    assert longest < MAX_BLOCK_CHARS


def test_the_site_index_escapes_a_hostile_run_and_names_its_page_safely() -> None:
    entry = entry_for(_state(), source=SOURCE_IMPORT, location=MARKUP)
    name = page_name(entry.run_id)
    assert name.startswith("run-") and "/" not in name
    html = site.site_index([site.SiteRow(entry, f"runs/{name}", "failed")], title="history")
    page = parse(html)
    assert structure_problems(page) == []
    (row,) = [attrs for name_, attrs in page.elements if name_ == "tr" and "data-spec" in attrs]
    assert row["data-spec"] == MARKUP  # an attribute value, never markup
