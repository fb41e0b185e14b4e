"""The frozen spec tests' run, judged: pytest's exit status and its junit report must agree,
and a failure is classified like any other (an exception raised inside the candidate is
`runtime`, a wrong answer caught by an assertion is `contract`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from selfcorrect_action.evaluation.classify import classify_execution_failure
from selfcorrect_action.evaluation.junit import (
    PYTEST_JUNIT_PATH,
    JUnitError,
    JUnitReport,
    Totals,
    parse_junit_report,
)
from selfcorrect_action.evaluation.pytest_traceback import detail_frames
from selfcorrect_action.evaluation.tracebacks import same_file
from selfcorrect_action.sandbox.models import ExecutionResult
from selfcorrect_action.taxonomy import Category, Check, TestOutcome

PYTEST_NO_TESTS = 5
NO_TOTALS = Totals(0, 0, 0, 0)
EVIDENCE_CHARS = 600


@dataclass(frozen=True)
class TestsVerdict:
    passed: bool
    check: Check
    outcomes: list[TestOutcome] = field(default_factory=list)
    totals: Totals = NO_TOTALS
    category: Category | None = None
    evidence: str = ""


def judge_test_run(result: ExecutionResult, *, candidate: str) -> TestsVerdict:
    if result.replaced_inputs:
        # Whatever the tests concluded, they read files the candidate had swapped.
        return _failed("files placed for the tests were replaced while they ran ("
                       + ", ".join(result.replaced_inputs[:5]) + "): the inputs and the "
                       "candidate's earlier output are the tests' to read, not the "
                       "candidate's to change", Category.CONTRACT)
    if result.timed_out or result.oom_killed or result.sandbox_note:
        category, evidence = classify_execution_failure(result, script_name=candidate)
        return _failed(f"the test run did not finish: {evidence}", category)
    record = next((a for a in result.artifacts if a.path == PYTEST_JUNIT_PATH), None)
    if record is None or record.host_path is None:
        return _failed(_no_report(result), Category.CONTRACT)
    try:
        report = parse_junit_report(record.host_path)
    except JUnitError as exc:
        return _failed(f"the test results are unreadable: {exc}", Category.RUNTIME)
    return _from_report(result, report, candidate)


def _from_report(result: ExecutionResult, report: JUnitReport, candidate: str) -> TestsVerdict:
    outcomes, totals = report.outcomes, report.totals
    bad = totals.failed + totals.errored
    summary = f"{totals.passed} passed, {totals.failed} failed, {totals.errored} errors"
    incomplete = report.incomplete() if bad == 0 else ""
    if incomplete:
        # The tests' own doing (a pytest.exit, -x), never the candidate's pass: said as an
        # error of the tests, naming what did not run.
        return _failed(f"the frozen tests did not all run, so they cannot pass: {incomplete}",
                       Category.CONTRACT, outcomes, totals)
    if (result.exit_code == 0) != (bad == 0) or (result.exit_code == 0 and totals.passed == 0):
        return _failed(
            f"pytest's exit status {result.exit_code} disagrees with its report ({summary}): "
            "the results were tampered with or no test ran", Category.CONTRACT, outcomes, totals)
    if bad == 0:
        return TestsVerdict(True, Check(name="tests", passed=True, detail=summary),
                            outcomes, totals)
    first = next(o for o in outcomes if o.outcome in ("failed", "error"))
    category = _category(first, candidate)
    evidence = f"tests: {summary}; first: {first.test_id}: {first.message}"
    return _failed(evidence, category, outcomes, totals)


# How the boundary between the tests and the candidate (sandbox/boundary/) fails a call.
_BOUNDARY = "selfcorrect_boundary."
_BOUNDARY_CATEGORIES = {
    "CandidateHung": Category.RESOURCE,  # it did not answer within the run's time limit
    "CandidateCrashed": Category.RUNTIME,  # exit, os._exit, a signal
    "CandidateRefused": Category.RUNTIME,  # SystemExit, KeyboardInterrupt, a skip from a call
    "ProtocolBroken": Category.RUNTIME,  # an answer too large or malformed
    "NotPlainData": Category.CONTRACT,  # a value that cannot cross: return plain data
}


def _category(outcome: TestOutcome, candidate: str) -> Category:
    message = outcome.message
    if message.startswith(_BOUNDARY):
        kind = message[len(_BOUNDARY):].split(":", 1)[0]
        if kind == "CandidateCrashed" and "signal 9" in message:
            return Category.RESOURCE  # the memory limit's OOM kill, most likely
        return _BOUNDARY_CATEGORIES.get(kind, Category.RUNTIME)
    if message.startswith(("SyntaxError", "IndentationError", "TabError")):
        return Category.SYNTAX
    module = PurePosixPath(candidate).stem
    if message.startswith(("ModuleNotFoundError", "ImportError")) and f"'{module}'" not in message:
        return Category.ENVIRONMENT
    if message.startswith(("MemoryError", "RecursionError")):
        return Category.RESOURCE
    frames = detail_frames(outcome.detail)
    raised_in_candidate = bool(frames) and same_file(frames[-1].file, candidate)
    if raised_in_candidate and not message.startswith(("AssertionError", "assert ")):
        return Category.RUNTIME
    return Category.CONTRACT


def _no_report(result: ExecutionResult) -> str:
    if result.exit_code == PYTEST_NO_TESTS:
        return "pytest collected no tests from the frozen test files"
    output = result.stderr.text.strip() or result.stdout.text.strip()
    tail = output.splitlines()[-3:]
    return f"pytest wrote no report (exit status {result.exit_code}): {' | '.join(tail)}"


def _failed(
    evidence: str, category: Category, outcomes: list[TestOutcome] | None = None,
    totals: Totals = NO_TOTALS,
) -> TestsVerdict:
    evidence = evidence[:EVIDENCE_CHARS]
    return TestsVerdict(False, Check(name="tests", passed=False, detail=evidence),
                        outcomes or [], totals, category, evidence)
