"""One run's page: report/view.py's RunView (the view-model AUDIT.md is rendered from, so the
page says nothing the audit does not), plus what only a page can show: the attempts' pictures
and tables inline, and the tokens and cost of each attempt as a chart.

Bounded whatever the run: every quote is bounded by the view-model already, and a run of
hundreds of attempts has the first and last ones in full, the others in the table (their
details are in AUDIT.md and run.json).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from selfcorrect_action import __version__
from selfcorrect_action.history.artifacts import KeptArtifact
from selfcorrect_action.loop.state import SCHEMA_VERSION, Attempt, RunState
from selfcorrect_action.redact import MIN_SECRET_CHARS
from selfcorrect_action.report import text
from selfcorrect_action.report.attempt_view import AttemptView, call_tokens
from selfcorrect_action.report.run_json import redacted_state
from selfcorrect_action.report.view import RunView, run_view
from selfcorrect_action.viewer import site
from selfcorrect_action.viewer.charts import Chart, Point, bar_chart
from selfcorrect_action.viewer.files import AttemptFiles, StripItem, attempt_files, picture_strip
from selfcorrect_action.viewer.html import render_html
from selfcorrect_action.viewer.repair import RepairPage, repair_page, without_own_report

PAGE_TEMPLATE = "viewer/run.html.j2"
FIRST_IN_FULL = 10
LAST_IN_FULL = 40
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


@dataclass(frozen=True)
class TimelineRow:
    attempt: AttemptView
    result_class: str  # passed, failed, pending
    in_full: bool


@dataclass(frozen=True)
class PageView:
    run: RunView
    badge: str  # the status's class: passed, failed, pending, cancelled (viewer/site.py)
    timeline: list[TimelineRow]
    in_full: list[AttemptView]
    left_out: str  # which attempts are in the table only, or ""
    files: dict[int, AttemptFiles]
    strip: list[StripItem]
    tokens: Chart
    cost: Chart
    repository: str
    generator: str
    repair: RepairPage | None  # kind repair: the rewritten files, the baseline's failures


def render_page(state: RunState, artifacts: Sequence[KeptArtifact], *,
                secrets: Sequence[str], from_report: bool = False) -> str:
    """The page, as one HTML document that needs nothing else. `from_report`: the state
    was read from a run.json, whose token-shaped strings were redacted when it was written;
    only the secrets known here are looked for again (the whole pass costs seconds on a
    run.json of 100 MB, and a page must come in one)."""
    known = [secret for secret in secrets if len(secret.strip()) >= MIN_SECRET_CHARS]
    clean = state if from_report and not known else redacted_state(
        state, secrets=secrets, shapes=not from_report)
    return render_html(PAGE_TEMPLATE, page=page_view(clean, artifacts, secrets=secrets))


def page_view(state: RunState, artifacts: Sequence[KeptArtifact], *,
              secrets: Sequence[str] = ()) -> PageView:
    """From an already redacted state (report/run_json.redacted_state)."""
    state = without_own_report(state)
    shown = in_full([attempt.index for attempt in state.attempts])
    run = run_view(state, in_full=shown)
    results = {a.index: result_class(a) for a in run.attempts}
    by_attempt: dict[int, list[KeptArtifact]] = {}
    for item in artifacts:
        by_attempt.setdefault(item.attempt, []).append(item)
    files = {index: attempt_files(items, secrets=secrets) for index, items in by_attempt.items()}
    return PageView(
        run=run,
        badge=site.result_class(state.status.value),
        timeline=[TimelineRow(a, results[a.index], a.index in shown) for a in run.attempts],
        in_full=[a for a in run.attempts if a.index in shown],
        left_out=_left_out(run, shown),
        files=files,
        strip=picture_strip(files, shown, {a.index: (a.result, results[a.index])
                                           for a in run.attempts}),
        tokens=bar_chart("Tokens per attempt", _points(state, results, _tokens), unit="token"),
        cost=bar_chart("Cost per attempt", _points(state, results, _cost), unit="usd",
                       note="" if state.usage.cost_known else
                       "some calls had no known price: their cost is not in the bars"),
        repository=state.origin.repository if state.origin else "",
        generator=f"selfcorrect {__version__}, run.json schema {SCHEMA_VERSION}",
        repair=repair_page(state, shown),
    )


def in_full(indexes: Sequence[int]) -> set[int]:
    """The attempts shown in full: all of them, or the first and the last ones."""
    if len(indexes) <= FIRST_IN_FULL + LAST_IN_FULL:
        return set(indexes)
    return {*indexes[:FIRST_IN_FULL], *indexes[-LAST_IN_FULL:]}


def result_class(attempt: AttemptView) -> str:
    if attempt.passed:
        return "passed"
    return "pending" if attempt.result in ("not evaluated", "in progress") else "failed"


def page_name(run_id: str) -> str:
    """A file name for the run's page: its id when that is a plain name, else a digest of
    it (an imported run.json may carry any run id, `../../x` included)."""
    if _SAFE_NAME.fullmatch(run_id):
        return f"{run_id}.html"
    return f"run-{hashlib.sha256(run_id.encode()).hexdigest()[:16]}.html"


def _left_out(run: RunView, shown: set[int]) -> str:
    hidden = [a.index for a in run.attempts if a.index not in shown]
    if not hidden:
        return ""
    return (f"Attempts {hidden[0]} to {hidden[-1]} ({text.number(len(hidden))} of them) are "
            "in the table only, to keep this page small: AUDIT.md and run.json have each "
            "in full.")


def _points(state: RunState, results: dict[int, str], measure: Callable[[Attempt], float]
            ) -> list[Point]:
    return [Point(a.index, measure(a), results.get(a.index, "pending")) for a in state.attempts]


def _tokens(attempt: Attempt) -> float:
    return float(call_tokens(attempt.llm_calls))


def _cost(attempt: Attempt) -> float:
    return sum(call.cost_usd for call in attempt.llm_calls)
