"""One attempt as the audit shows it: everything computed here, so the template only lays out.

The view is built from an already redacted state (report/run_json.redacted_state) and holds
raw text; the template quotes it with the Markdown filters (fenced, md_inline, md_quote).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from selfcorrect_action.evaluation.junit import describe_totals
from selfcorrect_action.loop.feedback import render_packet
from selfcorrect_action.loop.state import (
    MAX_REJECTED_CHARS,
    Attempt,
    LLMCall,
    RejectedReply,
    RunState,
    Status,
    Strategy,
)
from selfcorrect_action.repair.test_run import REPORT_PATH
from selfcorrect_action.report import text
from selfcorrect_action.report.layers import LayerRow, attempt_failure, layer_rows
from selfcorrect_action.report.network_view import ConnectionRow, connection_rows, log_notes
from selfcorrect_action.report.repair_view import (
    ChangeView,
    change_view,
    repair_layer_rows,
    repair_progress,
)
from selfcorrect_action.sandbox.models import ExecutionResult

CODE_CHARS = 40_000
MAX_FAILING_TESTS = 10
TEST_DETAIL_LINES = 30
# Bounds on the texts a run.json may hold at any length (model answers, evidence built from
# output): the loop keeps its own within these, a hand-made or hostile run.json need not.
EVIDENCE_CHARS = 2_000
REASONING_CHARS = 4_000
ITEM_CHARS = 500
MAX_ITEMS = 20
PACKET_CHARS = 8_000


@dataclass(frozen=True)
class CallRow:
    purpose: str
    model: str
    tokens: str
    cost: str
    latency: str
    replayed: str


@dataclass(frozen=True)
class ExecutionView:
    exit_code: str
    timed_out: str
    oom_killed: str
    signal: str
    duration: str
    runtime: str
    notes: list[str]
    artifacts: list[str]
    # The egress proxy's log (issue 19): "" and no rows for a run without network, and for
    # runs recorded before run.json schema 4, which kept none.
    network: str = ""
    connections: list[ConnectionRow] = field(default_factory=list)
    # Which interpreter ran the script (issue 20; "cold" before run.json schema 5).
    start: str = "cold"


@dataclass(frozen=True)
class StreamView:
    name: str
    header: str
    text: str


@dataclass(frozen=True)
class TestRow:
    test_id: str
    outcome: str
    message: str
    detail: str


@dataclass(frozen=True)
class DiffView:
    base: str  # "attempt 1", or "" when there is nothing to compare with
    text: str
    stat: str  # "+5 -3 lines"
    more: str  # "" or what was left out
    note: str  # why there is no diff to show


@dataclass(frozen=True)
class RejectedView:
    """A refused model answer, as AUDIT.md shows it."""

    purpose: str
    reason: str
    text: str
    note: str  # "cut off at the token limit", "4,000 of 12,345 characters shown", or ""


def rejected_views(replies: list[RejectedReply]) -> list[RejectedView]:
    return [RejectedView(r.purpose, r.reason, r.text, _rejected_note(r)) for r in replies]


def _rejected_note(reply: RejectedReply) -> str:
    notes = []
    if reply.finish_reason == "length":
        notes.append("cut off by the model's token limit")
    if reply.chars > len(reply.text):
        notes.append(f"{text.number(MAX_REJECTED_CHARS)} of {text.number(reply.chars)} "
                     "characters shown")
    return "; ".join(notes)


@dataclass(frozen=True)
class AttemptView:
    index: int
    strategy: str
    tier: str
    model: str
    reason: str
    start: str  # what the generation started from
    code: str
    code_size: str  # "23 lines"
    code_more: str  # "" or what was left out
    diff: DiffView
    execution: ExecutionView | None
    not_run: str  # why there is no execution
    streams: list[StreamView]
    layers: list[LayerRow]
    passed: bool
    result: str  # "passed", the failure category, or "not evaluated"
    category: str
    evidence: str
    failed_checks: list[str]
    tests_summary: str
    failing_tests: list[TestRow]
    judge_reasoning: str
    unmet: list[str]
    packet: str
    calls: list[CallRow]
    tokens: str
    cost: str
    duration: str
    progress: str
    rejected: list[RejectedView]
    # kind repair: the files against the repository's, the reviewer's word, regressions
    change: ChangeView | None
    review: str
    review_approved: bool
    regressions: list[str]


def attempt_view(state: RunState, attempt: Attempt, *, full: bool = True) -> AttemptView:
    """The attempt as the reports show it. `full=False` leaves out what only its own section
    shows (code, diff, output, tests, calls, refused answers, the packet): a page that lists
    hundreds of attempts in a table does not compute each one's diff."""
    return _attempt_view(state, attempt) if full else _summary_view(state, attempt)


def _summary_view(state: RunState, attempt: Attempt) -> AttemptView:
    failure = attempt_failure(state, attempt)
    return AttemptView(
        index=attempt.index, strategy=attempt.strategy.value, tier=attempt.tier,
        model=attempt.model, reason=text.clip(_reason(state, attempt), ITEM_CHARS),
        start=_start(attempt), code="",
        code_size=text.plural(len(attempt.code.splitlines()), "line"),
        code_more="", diff=DiffView("", "", "", "", "not shown here"),
        execution=_execution(attempt.execution, repair=state.spec.kind == "repair"),
        not_run=_not_run(attempt), streams=[],
        layers=(repair_layer_rows(state, attempt) if state.spec.kind == "repair"
                else layer_rows(state, attempt)), passed=failure is None,
        result=_result(state, attempt), category=failure.category if failure else "",
        evidence=text.clip(failure.evidence, EVIDENCE_CHARS) if failure else "",
        failed_checks=[], tests_summary=describe_totals(attempt.tests), failing_tests=[],
        judge_reasoning="", unmet=[], packet="", calls=[],
        tokens=text.number(call_tokens(attempt.llm_calls)), cost=calls_cost(attempt.llm_calls),
        duration=text.duration(attempt.duration_ms) if attempt.execution else "",
        progress=progress_words(state, attempt), rejected=[],
        # A summary line: the repair's files, review and regressions are its section's.
        change=None, review="", review_approved=bool(attempt.review and
                                                     attempt.review.approved),
        regressions=list(attempt.regressions[:MAX_FAILING_TESTS]))


def _attempt_view(state: RunState, attempt: Attempt) -> AttemptView:
    failure = attempt_failure(state, attempt)
    code, code_more = _bounded_code(attempt.code)
    judge = attempt.judge
    return AttemptView(
        index=attempt.index,
        strategy=attempt.strategy.value,
        tier=attempt.tier,
        model=attempt.model,
        reason=text.clip(_reason(state, attempt), ITEM_CHARS),
        start=_start(attempt),
        code=code,
        code_size=text.plural(len(attempt.code.splitlines()), "line"),
        code_more=code_more,
        diff=_diff(state, attempt),
        execution=_execution(attempt.execution, repair=state.spec.kind == "repair"),
        not_run=_not_run(attempt),
        streams=_streams(attempt.execution),
        layers=(repair_layer_rows(state, attempt) if state.spec.kind == "repair"
                else layer_rows(state, attempt)),
        passed=failure is None,
        result=_result(state, attempt),
        category=failure.category if failure else "",
        evidence=text.clip(failure.evidence, EVIDENCE_CHARS) if failure else "",
        failed_checks=_items(failure.failed_checks) if failure else [],
        tests_summary=describe_totals(attempt.tests),
        failing_tests=_failing_tests(attempt),
        judge_reasoning=text.clip(judge.reasoning, REASONING_CHARS) if judge else "",
        unmet=_items(judge.unmet_criteria) if judge else [],
        packet=text.clip(render_packet(attempt.packet), PACKET_CHARS) if attempt.packet else "",
        calls=[call_row(call) for call in attempt.llm_calls],
        tokens=text.number(call_tokens(attempt.llm_calls)),
        cost=calls_cost(attempt.llm_calls),
        duration=text.duration(attempt.duration_ms) if attempt.execution else "",
        progress=progress_words(state, attempt),
        rejected=rejected_views(attempt.rejected),
        change=change_view(attempt) if attempt.files else None,
        review=attempt.review.reasons if attempt.review else "",
        review_approved=bool(attempt.review and attempt.review.approved),
        regressions=list(attempt.regressions[:MAX_FAILING_TESTS]),
    )


def _items(items: list[str]) -> list[str]:
    shown = [text.clip(item, ITEM_CHARS) for item in items[:MAX_ITEMS]]
    more = len(items) - MAX_ITEMS
    return shown + ([f"and {text.plural(more, 'more')}, in run.json"] if more > 0 else [])


def call_row(call: LLMCall) -> CallRow:
    return CallRow(
        purpose=call.purpose,
        model=call.model,
        tokens=f"{text.number(call.prompt_tokens)} in, {text.number(call.completion_tokens)} out",
        cost=text.money(call.cost_usd, known=call.cost_known),
        latency=text.duration(call.latency_ms),
        replayed="from the earlier run" if call.resumed else "yes" if call.replayed else "no",
    )


def call_tokens(calls: list[LLMCall]) -> int:
    return sum(call.prompt_tokens + call.completion_tokens for call in calls)


def calls_cost(calls: list[LLMCall]) -> str:
    total = sum(call.cost_usd for call in calls)
    return text.money(total, known=all(call.cost_known for call in calls))


def progress_words(state: RunState, attempt: Attempt) -> str:
    """How far it got, in words: the layer reached, then what passed on the way."""
    if _in_progress(state, attempt):
        return "in progress"
    if attempt.cycle_of is not None:
        return f"not run (same code as attempt {attempt.cycle_of})"
    if state.spec.kind == "repair":
        return repair_progress(attempt)
    progress = attempt.progress
    reached = (
        "did not run cleanly",
        "ran cleanly",
        "met the contract and tests",
        "passed every layer",
    )[min(progress.layer, 3)]
    if progress.layer == 2 and not state.spec.judge:
        reached = "passed every layer"
    if attempt.execution is None:
        reached = "did not run"
    if progress.layer == 0:
        return reached  # which of the execution checks passed says nothing more
    counts = [text.plural(progress.checks_passed, "check")] if progress.checks_passed else []
    counts += [text.plural(progress.tests_passed, "test")] if progress.tests_passed else []
    return reached + (f" ({' and '.join(counts)} passed)" if counts else "")


def _result(state: RunState, attempt: Attempt) -> str:
    """ "passed", the failure category, "not evaluated", or "in progress" in a live report."""
    if _in_progress(state, attempt):
        return "in progress"
    failure = attempt_failure(state, attempt)
    return "passed" if failure is None else failure.category or "not evaluated"


def _in_progress(state: RunState, attempt: Attempt) -> bool:
    """The live comment renders a running state: its last attempt may not be judged yet."""
    return state.status is Status.RUNNING and attempt is state.last and attempt.verdict is None


def _reason(state: RunState, attempt: Attempt) -> str:
    """Why it was made: reflect's reason as stored, else what the previous packet asked
    for; and what its prompt left out to fit the model's context window (issue 38)."""
    why = _why(state, attempt)
    if attempt.prompt_trimmed:
        why += ("; " if why else "") + ("its prompt was shortened to fit the model's "
                                         "context window, leaving out "
                                         + ", ".join(attempt.prompt_trimmed))
    return why


def _why(state: RunState, attempt: Attempt) -> str:
    if attempt.reason:
        return attempt.reason
    if attempt.strategy is Strategy.INITIAL:
        return "first attempt"
    earlier = [a for a in state.attempts if a.index < attempt.index and a.packet]
    if earlier and (packet := earlier[-1].packet) is not None:
        return f"{packet.category.value} failure: {packet.strategy.value}"
    return ""


def _start(attempt: Attempt) -> str:
    if attempt.strategy is Strategy.INITIAL:
        return "the task and the plan"
    if attempt.base_attempt is not None:
        return f"the code of attempt {attempt.base_attempt}"
    return "the task, with a different approach"


def _bounded_code(code: str) -> tuple[str, str]:
    shown, more = text.head_lines(code, text.CODE_LINES)
    if len(shown) > CODE_CHARS:
        shown = shown[:CODE_CHARS]
        return shown, f"{text.number(len(code) - len(shown))} more characters, in run.json"
    return shown, f"{text.number(more)} more lines, in run.json" if more else ""


def _diff(state: RunState, attempt: Attempt) -> DiffView:
    """From the attempt it repaired, else from the one before: what this generation changed."""
    if attempt.cycle_of is not None:
        base = f"attempt {attempt.cycle_of}"
        return DiffView(base, "", "", "", f"none, the code is identical to {base}'s")
    if state.spec.kind == "repair":
        return DiffView("", "", "", "", "a repair's change is shown against the repository")
    before = attempt.base_attempt or attempt.index - 1
    earlier = next((a for a in state.attempts if a.index == before), None)
    if earlier is None:
        return DiffView("", "", "", "", "first attempt: no earlier code to compare with")
    if earlier.code == attempt.code:
        return DiffView(
            f"attempt {before}", "", "", "", f"none, the code is identical to attempt {before}'s"
        )
    diff = text.unified_diff(
        earlier.code,
        attempt.code,
        old_name=f"attempt {before}",
        new_name=f"attempt {attempt.index}",
    )
    more = f"{text.number(diff.more)} more diff lines, in run.json's code" if diff.more else ""
    stat = f"+{text.number(diff.added)} -{text.number(diff.removed)} lines"
    return DiffView(f"attempt {before}", diff.text, stat, more, "")


def _execution(result: ExecutionResult | None, *, repair: bool = False
               ) -> ExecutionView | None:
    """`repair`: the run's own junit report is no file the test command made, and "the
    command is not python3 SCRIPT" is no news about a test command (issue 38)."""
    if result is None:
        return None
    notes = [note for note in (result.sandbox_note, result.artifact_note) if note]
    if result.start_note and not repair:
        notes.append(f"interpreter: {result.start_note}")
    notes += log_notes(result.network)
    artifacts = [
        f"{record.path} ({text.number(record.size)} bytes"
        + (f", not copied out: {record.rejected})" if record.rejected else ")")
        for record in result.artifacts if not (repair and record.path == REPORT_PATH)
    ]
    return ExecutionView(
        exit_code="none" if result.exit_code is None else str(result.exit_code),
        timed_out="yes" if result.timed_out else "no",
        oom_killed="yes" if result.oom_killed else "no",
        signal="none" if result.signal is None else str(result.signal),
        duration=text.duration(result.duration_ms),
        runtime=result.runtime,
        notes=notes,
        artifacts=artifacts,
        network=result.network.policy if result.network is not None else "",
        connections=connection_rows(result.network),
        start=_interpreter(result),
    )


def _interpreter(result: ExecutionResult) -> str:
    if result.start != "warm":
        return "cold"
    shown = ", ".join(name for name in result.preloaded if "." not in name)
    return f"warm ({shown} preloaded)" if shown else "warm"


def _not_run(attempt: Attempt) -> str:
    if attempt.execution is not None:
        return ""
    if attempt.cycle_of is not None:
        return (
            f"Not run: the code is identical to attempt {attempt.cycle_of}'s, whose outcome stands"
        )
    if attempt.verdict is not None:
        return "Not run: the answer was rejected before running (see the evaluation)"
    return "Not run: the run ended before this attempt was executed"


def _streams(result: ExecutionResult | None) -> list[StreamView]:
    if result is None:
        return []
    views = []
    for name, stream in (("stdout", result.stdout), ("stderr", result.stderr)):
        if not stream.text.strip():
            continue
        excerpt = text.tail_excerpt(
            stream.text, total_bytes=stream.total_bytes, truncated=stream.truncated
        )
        views.append(StreamView(name, excerpt.header, excerpt.text))
    return views


def _failing_tests(attempt: Attempt) -> list[TestRow]:
    failing = [test for test in attempt.tests if test.outcome in {"failed", "error"}]
    return [
        TestRow(
            text.clip(test.test_id, ITEM_CHARS),
            test.outcome,
            text.clip(test.message, ITEM_CHARS),
            text.clip(text.head_lines(text.clean(test.detail), TEST_DETAIL_LINES)[0],
                      REASONING_CHARS),
        )
        for test in failing[:MAX_FAILING_TESTS]
    ]
