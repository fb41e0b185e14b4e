"""The repair packet: what the next generation is told about a failed attempt.

Never raw logs (docs/loop.md, "The repair packet"): a script that prints 100,000 lines, or one
5 MB line, must cost the next prompt no more than one that prints ten. Every field is cut
to its own cap while it is built, and the rendered packet is then shrunk, least useful part
first, until it fits PACKET_TOKEN_BUDGET.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePosixPath

from selfcorrect_action.evaluation.junit import describe_totals
from selfcorrect_action.evaluation.pytest_traceback import detail_frames
from selfcorrect_action.evaluation.tracebacks import (
    Frame,
    last_frame_in,
    parse_traceback,
    same_file,
)
from selfcorrect_action.loop.budget import estimate_tokens
from selfcorrect_action.loop.function_target import wanted_shape
from selfcorrect_action.loop.state import (
    Attempt,
    JudgeOutcome,
    NextStep,
    RepairPacket,
    RunState,
)
from selfcorrect_action.markdown import defang_fences
from selfcorrect_action.records import evolve
from selfcorrect_action.sandbox.models import ExecutionResult, StreamCapture
from selfcorrect_action.taxonomy import Category, TestOutcome, Verdict
from selfcorrect_action.templating import render

TEMPLATE = "prompts/repair_packet.j2"
# Under the 1,500 the design allows, so that a caller adding a heading stays inside it.
PACKET_TOKEN_BUDGET = 1_400
MAX_FAILING_TESTS = 5
MAX_FAILED_CHECKS = 8
MAX_TRIED = 6
TAIL_LINES = 15
TAIL_LINE_CHARS = 200
_CAPS = {
    "evidence": 600, "test_id": 150, "message": 200, "detail": 600, "check": 200,
    "location": 300, "judge": 600, "tried": 160, "tail": 1_500,
}  # fmt: skip
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")




def build_packet(
    state: RunState, attempt: Attempt, next_step: NextStep, *, max_attempts: int
) -> RepairPacket:
    """Distil `attempt`'s failure for the generation `next_step` makes."""
    source = _evaluated(state, attempt)
    verdict = _verdict(source)
    evidence = verdict.evidence
    if source is not attempt:
        evidence = f"the code was identical to attempt {source.index}'s, which failed: {evidence}"
    packet = RepairPacket(
        attempt=attempt.index,
        max_attempts=max_attempts,
        strategy=next_step.strategy,
        category=_category(verdict),
        evidence=_cut(evidence, _CAPS["evidence"]),
        failing_tests=_failing_tests(source.tests),
        tests_summary=describe_totals(source.tests),
        failed_checks=_failed_checks(verdict),
        location=_location(source, verdict, state.output_name),
        judge_reasoning=_judge_reasoning(source.judge),
        already_tried=_already_tried(state.attempts, attempt.index),
        output_excerpt=_output_excerpt(source.execution or source.test_execution),
        file_name=state.output_name,
        base_attempt=next_step.base_attempt,
        wanted_shape=wanted_shape(state) if _category(verdict) is Category.SYNTAX else "",
    )
    return fit(packet)


def smallest(packet: RepairPacket) -> RepairPacket:
    """`packet` with every shrink applied: what a prompt that must fit a small context
    window says of the failure (its category, where, the start of its evidence)."""
    for shrink in _SHRINKS:
        packet = shrink(packet)
    return packet


def render_packet(packet: RepairPacket) -> str:
    return render(TEMPLATE, packet=packet)


def fit(packet: RepairPacket) -> RepairPacket:
    """Shrink `packet` step by step until its rendering fits PACKET_TOKEN_BUDGET."""
    for shrink in _SHRINKS:
        if estimate_tokens(render_packet(packet)) <= PACKET_TOKEN_BUDGET:
            return packet
        packet = shrink(packet)
    if estimate_tokens(render_packet(packet)) > PACKET_TOKEN_BUDGET:
        raise AssertionError("the repair packet's caps do not fit its token budget")
    return packet


def _evaluated(state: RunState, attempt: Attempt) -> Attempt:
    """A cycle (the same code again) was not re-run: its failure is the original's."""
    if attempt.cycle_of is None:
        return attempt
    for earlier in state.attempts:
        if earlier.index == attempt.cycle_of:
            return earlier
    raise ValueError(f"attempt {attempt.index} repeats attempt {attempt.cycle_of}, not in state")


def _verdict(attempt: Attempt) -> Verdict:
    """The attempt's failing verdict; a judge rejection without one is a semantic failure."""
    if attempt.verdict is not None and not attempt.verdict.passed:
        return attempt.verdict
    if attempt.judge is not None and not attempt.judge.passed:
        return Verdict(
            passed=False, failed_layer="semantic", category=Category.SEMANTIC,
            evidence="the judge found that the result does not do what was asked",
        )  # fmt: skip
    raise ValueError(f"attempt {attempt.index} has no failure to repair")


def _category(verdict: Verdict) -> Category:
    # A failing verdict always carries a category; runtime is the patchable default.
    return verdict.category or Category.RUNTIME


def _failing_tests(tests: list[TestOutcome]) -> list[TestOutcome]:
    failing = [test for test in tests if test.outcome in {"failed", "error"}]
    listed: list[TestOutcome] = []
    for test in failing[:MAX_FAILING_TESTS]:
        detail = _cut(test.detail, _CAPS["detail"], keep="end")
        # Parametrized cases often fail identically: one copy of the traceback says it all.
        if any(detail == earlier.detail for earlier in listed):
            detail = ""
        listed.append(TestOutcome(
            test_id=_cut(test.test_id, _CAPS["test_id"]),
            outcome=test.outcome,
            message=_cut(test.message, _CAPS["message"]),
            detail=detail,
        ))  # fmt: skip
    return listed


def _failed_checks(verdict: Verdict) -> list[str]:
    """Contract checks only: an execution failure is told by the evidence already."""
    if verdict.failed_layer == "execution":
        return []
    failed = [check for check in verdict.checks if not check.passed]
    return [_cut(check.detail or check.name, _CAPS["check"]) for check in failed][
        :MAX_FAILED_CHECKS
    ]


def _location(attempt: Attempt, verdict: Verdict, file_name: str) -> str:
    """The innermost frame in the candidate file, from the script's traceback when the run
    failed, else from the first failing test whose traceback reaches the candidate."""
    frame: Frame | None = None
    if verdict.failed_layer == "execution" and attempt.execution is not None:
        tb = parse_traceback(attempt.execution.stderr.text)
        frame = last_frame_in(tb, file_name) if tb else None
    for test in attempt.tests:
        if frame is not None:
            break
        if test.outcome in {"failed", "error"}:
            inside = [f for f in detail_frames(test.detail) if same_file(f.file, file_name)]
            frame = inside[-1] if inside else None
    return _cut(describe_frame(frame), _CAPS["location"]) if frame else ""


def describe_frame(frame: Frame) -> str:
    where = f"{PurePosixPath(frame.file).name}:{frame.line}"
    if frame.function:
        where += f" in {frame.function}"
    return f"{where}: {frame.source}" if frame.source else where


def _judge_reasoning(judge: JudgeOutcome | None) -> str:
    if judge is None or judge.passed:
        return ""
    unmet = "".join(f"\n- unmet: {criterion}" for criterion in judge.unmet_criteria[:5])
    return _cut(judge.reasoning + unmet, _CAPS["judge"])


def _already_tried(attempts: list[Attempt], before: int) -> list[str]:
    earlier = [attempt for attempt in attempts if attempt.index < before]
    lines = [_tried_line(attempt) for attempt in earlier[-MAX_TRIED:]]
    if len(earlier) > MAX_TRIED:
        lines.insert(0, f"({len(earlier) - MAX_TRIED} earlier attempts not listed)")
    return lines


def _tried_line(attempt: Attempt) -> str:
    head = f"attempt {attempt.index} ({attempt.strategy.value}, {attempt.tier})"
    if attempt.cycle_of is not None:
        return f"{head}: same code as attempt {attempt.cycle_of}, not run again"
    verdict = attempt.verdict
    if verdict is None or verdict.category is None:
        rejected = attempt.judge is not None and not attempt.judge.passed
        return f"{head}: {'semantic — rejected by the judge' if rejected else 'not evaluated'}"
    # classify.py writes "<what and where> — <why>": the what and where identifies it.
    summary = verdict.evidence.split(" — ", 1)[0]
    return _cut(f"{head}: {verdict.category.value} — {summary}", _CAPS["tried"])


def _output_excerpt(result: ExecutionResult | None) -> str:
    if result is None:
        return ""
    streams = [(name, s) for name, s in (("stderr", result.stderr), ("stdout", result.stdout))
               if s.text.strip()]  # fmt: skip
    if not streams:
        return ""
    budget = [TAIL_LINES] if len(streams) == 1 else [TAIL_LINES * 2 // 3, TAIL_LINES // 3]
    parts = [_stream_tail(name, s, n) for (name, s), n in zip(streams, budget, strict=True)]
    return _cut("\n".join(parts), _CAPS["tail"], keep="end")


def _stream_tail(name: str, stream: StreamCapture, count: int) -> str:
    text = stream.text.rstrip()
    # rsplit with a limit scans from the end only: cheap whatever the stream's size.
    lines = text.rsplit("\n", count)[-count:]
    total = text.count("\n") + 1
    shown = [_cut_line(line) for line in lines]
    cut = ", truncated by the sandbox" if stream.truncated else ""
    return f"{name} (last {len(shown)} of {total:,} lines{cut}):\n" + "\n".join(shown)


def _cut_line(line: str) -> str:
    line = _clean(line[: TAIL_LINE_CHARS * 4])
    return line if len(line) <= TAIL_LINE_CHARS else line[: TAIL_LINE_CHARS - 1] + "…"


def _clean(text: str) -> str:
    """Printable text that cannot close the template's code fences early."""
    text = _CONTROL.sub("", _ANSI.sub("", text.replace("\r\n", "\n").replace("\t", "    ")))
    return defang_fences(text)


def _cut(text: str, limit: int, *, keep: str = "start") -> str:
    text = _clean(text[: limit * 4] if keep == "start" else text[-limit * 4 :]).strip()
    if len(text) <= limit:
        return text
    return text[: limit - 1] + "…" if keep == "start" else "…" + text[-(limit - 1) :]


def _shorter_tail(packet: RepairPacket) -> RepairPacket:
    lines = packet.output_excerpt.splitlines()
    return evolve(packet, {"output_excerpt": "\n".join(lines[-6:])})


def _fewer_tests(packet: RepairPacket) -> RepairPacket:
    tests = [
        evolve(test, {"detail": _cut(test.detail, 300, keep="end")})
        for test in packet.failing_tests[:3]
    ]
    return evolve(packet, {"failing_tests": tests})


def _no_tail(packet: RepairPacket) -> RepairPacket:
    return evolve(packet, {"output_excerpt": ""})


def _less_history(packet: RepairPacket) -> RepairPacket:
    return evolve(packet, {
        "already_tried": packet.already_tried[-3:],
        "failed_checks": [_cut(check, 120) for check in packet.failed_checks[:4]],
    })  # fmt: skip


def _minimal(packet: RepairPacket) -> RepairPacket:
    first = [evolve(test, {"detail": _cut(test.detail, 300, keep="end")})
             for test in packet.failing_tests[:1]]  # fmt: skip
    return evolve(packet, {
        "failing_tests": first,
        "already_tried": packet.already_tried[-1:],
        "judge_reasoning": _cut(packet.judge_reasoning, 300),
        "evidence": _cut(packet.evidence, 300),
    })  # fmt: skip


_SHRINKS: tuple[Callable[[RepairPacket], RepairPacket], ...] = (
    _shorter_tail, _fewer_tests, _no_tail, _less_history, _minimal,
)  # fmt: skip
