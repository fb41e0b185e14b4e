from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.contract import ExecutionContract
from selfcorrect_action.evaluation.classify import EVIDENCE_MAX_CHARS
from selfcorrect_action.evaluation.layers import evaluate, evaluate_contract, evaluate_execution
from selfcorrect_action.sandbox.models import ArtifactRecord, ExecutionResult, StreamCapture
from selfcorrect_action.taxonomy import Category

from .conftest import draw_chart, record_for

CONTRACT = ExecutionContract.model_validate(
    {
        "artifacts": [
            {"path": "chart.png", "kind": "png", "non_blank": True},
            {"path": "summary.csv", "kind": "csv", "columns": ["region", "total"], "min_rows": 2},
        ],
        "stdout_contains": ["Total:", "done"],
    }
)


def _out(text: str, **fields: Any) -> StreamCapture:
    return StreamCapture(text=text, total_bytes=len(text.encode()), **fields)


@pytest.fixture
def good_run(tmp_path: Path) -> ExecutionResult:
    chart = tmp_path / "chart.png"
    draw_chart().save(chart)
    summary = tmp_path / "summary.csv"
    summary.write_text("region,total\nnorth,3\nsouth,4\n")
    return ExecutionResult(
        exit_code=0,
        duration_ms=900,
        stdout=_out("Total: 7\ndone\n"),
        artifacts=[record_for(chart), record_for(summary)],
    )


def test_layer1_passes_on_a_clean_exit() -> None:
    checks = evaluate_execution(ExecutionResult(exit_code=0))
    assert [c.name for c in checks] == [
        "exit code",
        "not timed out",
        "not out of memory",
        "no signal",
        "sandbox reported",
    ]
    assert all(c.passed for c in checks)


@pytest.mark.parametrize(
    ("fields", "failing", "detail"),
    [
        ({"exit_code": 3}, "exit code", "expected exit code 0, found exit code 3"),
        ({"exit_code": None}, "exit code", "expected exit code 0, found no exit code"),
        ({"exit_code": 0, "timed_out": True}, "not timed out", "killed at the time limit"),
        ({"exit_code": 0, "oom_killed": True}, "not out of memory", "out-of-memory killer"),
        ({"exit_code": 0, "signal": 9}, "no signal", "killed by signal 9"),
        ({"exit_code": 0, "sandbox_note": "flooded"}, "sandbox reported", "did not report"),
    ],
)
def test_layer1_each_failure(fields: dict[str, Any], failing: str, detail: str) -> None:
    checks = {c.name: c for c in evaluate_execution(ExecutionResult(**fields))}
    assert [name for name, c in checks.items() if not c.passed] == [failing]
    assert detail in checks[failing].detail


def test_layer2_checks_artifacts_then_stdout_in_contract_order(good_run: ExecutionResult) -> None:
    names = [c.name for c in evaluate_contract(good_run, CONTRACT)]
    assert names == [
        "chart.png: exists",
        "chart.png: kind",
        "chart.png: not blank",
        "summary.csv: exists",
        "summary.csv: kind",
        "summary.csv: columns",
        "summary.csv: rows",
        "stdout contains 'Total:'",
        "stdout contains 'done'",
    ]


def test_verdict_passes_with_every_check(good_run: ExecutionResult) -> None:
    verdict = evaluate(good_run, CONTRACT, script_name="sales.py")
    assert verdict.passed
    assert (verdict.failed_layer, verdict.category, verdict.evidence) == (None, None, "")
    assert len(verdict.checks) == 5 + 9
    assert all(c.passed for c in verdict.checks)


def test_layer1_failure_stops_before_layer2(good_run: ExecutionResult) -> None:
    stderr = (
        'Traceback (most recent call last):\n  File "/work/sales.py", line 4, in <module>\n'
        "    import seaborn as sns\nModuleNotFoundError: No module named 'seaborn'\n"
    )
    crashed = good_run.model_copy(update={"exit_code": 1, "stderr": _out(stderr)})
    verdict = evaluate(crashed, CONTRACT, script_name="sales.py")
    assert not verdict.passed
    assert (verdict.failed_layer, verdict.category) == ("execution", Category.ENVIRONMENT)
    assert verdict.evidence.startswith(
        "ModuleNotFoundError: No module named 'seaborn' at sales.py:4 in <module>: import seaborn"
    )
    assert verdict.checks[0].name == "exit code"
    assert len(verdict.checks) == 5  # no artifact was looked at


def test_timeout_evidence_uses_the_contract_limit() -> None:
    result = ExecutionResult(timed_out=True, signal=9, duration_ms=30_500)
    contract = CONTRACT.model_copy(update={"timeout_s": 30})
    verdict = evaluate(result, contract, script_name="sales.py")
    assert verdict.category is Category.RESOURCE
    assert verdict.evidence.startswith("timed out after 30 s")


def test_contract_failure_collects_failing_details(
    good_run: ExecutionResult, tmp_path: Path
) -> None:
    text = tmp_path / "chart_as_text.png"
    text.write_text("Error: no data\n")
    broken = good_run.model_copy(
        update={
            "stdout": _out("Total: 7\n"),
            "artifacts": [record_for(text, "chart.png"), good_run.artifacts[1]],
        }
    )
    verdict = evaluate(broken, CONTRACT, script_name="sales.py")
    assert (verdict.passed, verdict.failed_layer, verdict.category) == (
        False,
        "contract",
        Category.CONTRACT,
    )
    assert verdict.evidence == (
        "chart.png: expected a PNG image, found text starting 'Error: no data'; "
        "expected stdout to contain 'done', not found in 9 bytes of stdout ending 'Total: 7'"
    )
    assert len(verdict.checks) == 5 + 8  # no blankness check on a file that is not a PNG


def test_contract_evidence_is_bounded(tmp_path: Path) -> None:
    many = ExecutionContract.model_validate(
        {"artifacts": [{"path": f"missing_{n:03}.txt", "kind": "txt"} for n in range(50)]}
    )
    verdict = evaluate(ExecutionResult(exit_code=0), many, script_name="x.py")
    assert verdict.failed_layer == "contract"
    assert len(verdict.evidence) <= EVIDENCE_MAX_CHARS
    assert sum(not c.passed for c in verdict.checks) == 50


def test_missing_and_rejected_artifacts(good_run: ExecutionResult) -> None:
    rejected = ArtifactRecord(path="summary.csv", size=10**9, rejected="larger than 32 MiB")
    run = good_run.model_copy(update={"artifacts": [rejected]})
    failing = [c for c in evaluate_contract(run, CONTRACT) if not c.passed]
    assert [c.name for c in failing] == ["chart.png: exists", "summary.csv: exists"]
    assert failing[1].detail.endswith("not copied out: larger than 32 MiB")


def test_stdout_expectation_on_truncated_stdout_says_so() -> None:
    run = ExecutionResult(exit_code=0, stdout=_out("x" * 100, truncated=True))
    contract = ExecutionContract(stdout_contains=["Total:"])
    [check] = evaluate_contract(run, contract)
    assert not check.passed
    assert "stdout was truncated" in check.detail


def test_stdout_expectation_on_empty_stdout() -> None:
    [check] = evaluate_contract(
        ExecutionResult(exit_code=0), ExecutionContract(stdout_contains=["ok"])
    )
    assert check.detail == "expected stdout to contain 'ok', not found in an empty stdout"


def test_stdout_checks_never_match_the_truncation_marker() -> None:
    """The '[... N bytes omitted ...]' line is ours, not the script's; and text cut in two
    by the omission is not a match either."""
    stdout = StreamCapture(text="head do\n[... 5,000 bytes omitted ...]\nne tail\n",
                           total_bytes=5017, truncated=True)
    result = ExecutionResult(exit_code=0, stdout=stdout)
    for expected in ("bytes omitted", "do\n[", "done"):
        contract = ExecutionContract(stdout_contains=[expected])
        assert not evaluate(result, contract, script_name="s.py").passed, expected
    contract = ExecutionContract(stdout_contains=["head do", "ne tail"])
    assert evaluate(result, contract, script_name="s.py").passed
