"""Layers 1 and 2 of evaluation and the verdict they make together.

Layer 1 (execution) asks whether the process ended normally; layer 2 (contract) whether it
left what the contract asks for. Cheapest first, and a failed layer 1 stops there: the
artifacts of a crashed run say nothing new. Layer 3 (the LLM judge) lives elsewhere.
"""

from __future__ import annotations

from selfcorrect_action.contract import ExecutionContract
from selfcorrect_action.evaluation.artifacts import check_artifact, find_record
from selfcorrect_action.evaluation.classify import EVIDENCE_MAX_CHARS, classify_execution_failure
from selfcorrect_action.evaluation.sniff import snippet
from selfcorrect_action.sandbox.models import ExecutionResult, StreamCapture
from selfcorrect_action.taxonomy import Category, Check, Verdict


def evaluate(result: ExecutionResult, contract: ExecutionContract, *, script_name: str) -> Verdict:
    """Layer 1, then layer 2 if layer 1 passed. `checks` holds every check that ran."""
    execution = evaluate_execution(result)
    if not all(check.passed for check in execution):
        category, evidence = classify_execution_failure(
            result, script_name=script_name, contract=contract
        )
        return Verdict(
            passed=False,
            failed_layer="execution",
            category=category,
            evidence=evidence,
            checks=execution,
        )
    contract_checks = evaluate_contract(result, contract)
    every = execution + contract_checks
    failing = [check for check in contract_checks if not check.passed]
    if failing:
        return Verdict(
            passed=False,
            failed_layer="contract",
            category=Category.CONTRACT,
            evidence=_contract_evidence(failing),
            checks=every,
        )
    return Verdict(passed=True, checks=every)


def evaluate_execution(result: ExecutionResult) -> list[Check]:
    """Layer 1: exit code 0, not timed out, not OOM-killed, no signal, runner reported."""
    return [
        _exit_code(result),
        _check(
            "not timed out", not result.timed_out, "finished in time", "killed at the time limit"
        ),
        _check(
            "not out of memory",
            not result.oom_killed,
            "no OOM kill",
            "killed by the out-of-memory killer",
        ),
        _check(
            "no signal",
            result.signal is None,
            "not killed by a signal",
            f"killed by signal {result.signal}",
        ),
        _check(
            "sandbox reported",
            result.sandbox_note is None,
            "the sandbox runner reported normally",
            f"the sandbox runner did not report normally: {result.sandbox_note}",
        ),
    ]


def evaluate_contract(result: ExecutionResult, contract: ExecutionContract) -> list[Check]:
    """Layer 2: every artifact in contract order, then every stdout expectation in order."""
    written = [record.path for record in result.artifacts]
    checks: list[Check] = []
    for spec in contract.artifacts:
        record = find_record(result.artifacts, spec.path)
        checks.extend(check_artifact(spec, record, written=written,
                                     unchanged=result.unchanged_inputs))
    checks.extend(
        _stdout_contains(result.stdout, expected) for expected in contract.stdout_contains
    )
    return checks


def _exit_code(result: ExecutionResult) -> Check:
    code = result.exit_code
    if code == 0:
        return Check(name="exit code", passed=True, detail="exit code 0")
    found = "no exit code (the process did not finish)" if code is None else f"exit code {code}"
    return Check(name="exit code", passed=False, detail=f"expected exit code 0, found {found}")


def _check(name: str, passed: bool, ok: str, problem: str) -> Check:
    return Check(name=name, passed=passed, detail=ok if passed else problem)


def _stdout_contains(stdout: StreamCapture, expected: str) -> Check:
    name = f"stdout contains {snippet(expected)}"
    if any(expected in part for part in stdout.captured()):
        return Check(name=name, passed=True, detail=f"found {snippet(expected)} in stdout")
    detail = f"expected stdout to contain {snippet(expected)}, not found in {_described(stdout)}"
    if stdout.truncated:
        # The middle of a truncated stream was never captured: the text may have been there,
        # but a pass has to be shown, so this fails and says why.
        detail += " (stdout was truncated, the uncaptured middle could not be searched)"
    return Check(name=name, passed=False, detail=detail)


def _described(stdout: StreamCapture) -> str:
    if not stdout.text.strip():
        return "an empty stdout"
    return f"{stdout.total_bytes:,} bytes of stdout ending {_tail(stdout.text)}"


def _tail(text: str) -> str:
    lines = [line for line in text.splitlines()[-3:] if line.strip()]
    return snippet(" | ".join(lines)[-120:])


def _contract_evidence(failing: list[Check]) -> str:
    evidence = "; ".join(check.detail for check in failing)
    if len(evidence) > EVIDENCE_MAX_CHARS:
        evidence = evidence[: EVIDENCE_MAX_CHARS - 1] + "…"
    return evidence
