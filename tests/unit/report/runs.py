"""Realistic finished runs, built the way the loop builds them: verdicts from the real
evaluation layers, repair packets from the real feedback step, chart PNGs drawn with Pillow.

Token-shaped strings are planted in the prompt, the code, stdout, stderr and the judge's
reasoning, so every report test also checks redaction.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from selfcorrect_action.contract import ArtifactSpec, ExecutionContract
from selfcorrect_action.evaluation.layers import evaluate
from selfcorrect_action.llm.models import ModelTiers, Tier
from selfcorrect_action.loop.feedback import build_packet
from selfcorrect_action.loop.state import (
    Attempt,
    JudgeOutcome,
    LLMCall,
    NextStep,
    PlanRecord,
    Progress,
    RunState,
    Status,
    Strategy,
    Usage,
)
from selfcorrect_action.sandbox.models import ArtifactRecord, ExecutionResult, StreamCapture
from selfcorrect_action.spec import Budget, TaskSpec
from selfcorrect_action.taxonomy import Category, Check, TestOutcome, Verdict

# Planted secrets: none of them may appear in any report.
GITHUB_TOKEN = "ghp_" + "R8x2Kq9LmZ4vT7wN1pY6sD3fH5jB0cE2gA8u"
OPENAI_KEY = "sk-proj-" + "Zq7Wm2Lx9Ks4Pt1Rv8Nb3Hc6Jd5Fg0Ae"
AWS_KEY_ID = "AKIA" + "IOSFODNN7EXAMPLE"
ENV_SECRET = "correct-horse-battery-staple-42"  # an exact value, as secrets_from_env finds it
PLANTED = (GITHUB_TOKEN, OPENAI_KEY, AWS_KEY_ID, ENV_SECRET)
SECRETS = [ENV_SECRET]

PROMPT = (
    "Read sales.csv and plot the monthly sales totals to chart.png as a line chart.\n"
    "Print the grand total as `Total: <number>`.\n\n"
    f"The bucket is reached with key id {AWS_KEY_ID} (do not print it)."
)
USER_CONTRACT = ExecutionContract(artifacts=[ArtifactSpec(path="chart.png", kind="png")])
CONTRACT = ExecutionContract(
    artifacts=[ArtifactSpec(path="chart.png", kind="png", non_blank=True)],
    stdout_contains=["Total:"],
    timeout_s=20,
    success_criteria=["one point per month", "the y axis shows sales in dollars"],
)
SPEC = TaskSpec(
    prompt=PROMPT,
    output="scripts/sales_chart.py",
    contract=USER_CONTRACT,
    tests=["tests/test_sales.py"],
    inputs=["data/sales.csv"],
    budget=Budget(patch_attempts=2, rethink_attempts=1),
)
TEST_FILE = """from sales_chart import monthly_totals


def test_totals_per_month():
    rows = [{"month": "2024-01", "amount": 3}, {"month": "2024-01", "amount": 4}]
    assert monthly_totals(rows) == {"2024-01": 7}
"""

FIRST_CODE = f'''import csv

import matplotlib.pyplot as plt

API_TOKEN = "{GITHUB_TOKEN}"


def monthly_totals(rows):
    totals = {{}}
    for row in rows:
        totals[row["month"]] = totals.get(row["month"], 0) + float(row["amount"])
    return totals


def main():
    with open("sales.csv") as handle:
        totals = monthly_totals(csv.DictReader(handle))
    plt.plot(list(totals), list(totals.values()))
    plt.savefig("Chart.png")
    print("Total:", sum(totals.values()))


main()
'''
FIXED_CODE = FIRST_CODE.replace('plt.savefig("Chart.png")', 'plt.savefig("chart.png")')
KEYERROR_CODE = FIRST_CODE.replace('row["month"]', 'row["Month"]')
KEYERROR_TRACEBACK = """Traceback (most recent call last):
  File "/work/sales_chart.py", line 22, in <module>
    main()
  File "/work/sales_chart.py", line 17, in main
    totals = monthly_totals(csv.DictReader(handle))
  File "/work/sales_chart.py", line 11, in monthly_totals
    totals[row["Month"]] = totals.get(row["Month"], 0) + float(row["amount"])
KeyError: 'Month'
"""


def stream(text: str) -> StreamCapture:
    return StreamCapture(text=text, total_bytes=len(text.encode()))


def result(
    *, exit_code: int | None = 0, stdout: str = "", stderr: str = "", **fields: Any
) -> ExecutionResult:
    return ExecutionResult.model_validate(
        {
            "exit_code": exit_code,
            "duration_ms": 2_340,
            "stdout": stream(stdout),
            "stderr": stream(stderr),
            **fields,
        }
    )


def chart_png(directory: Path) -> ArtifactRecord:
    """A real chart, copied out as the sandbox does: the host path is a runner temp path."""
    path = directory / "artifacts-3f9c" / "chart.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    image = Image.new("RGB", (400, 300), "white")
    draw = ImageDraw.Draw(image)
    draw.line([(40, 10), (40, 270), (390, 270)], fill="black", width=2)
    draw.line([(40 + i * 38, 40 + (i * 37) % 210) for i in range(10)], fill="blue", width=3)
    image.save(path)
    return ArtifactRecord(path="chart.png", size=path.stat().st_size, host_path=path)


def call(
    purpose: str, model: str = "openai/gpt-4o-mini", *, replayed: bool = False, known: bool = True
) -> LLMCall:
    return LLMCall(
        purpose=purpose,
        model=model,
        prompt_tokens=1_200,
        completion_tokens=340,
        cost_usd=0.0004 if known else 0.0,
        cost_known=known,
        latency_ms=1_850,
        replayed=replayed,
    )


def base_state(**updates: Any) -> RunState:
    state = RunState(
        run_id="run-20240501-100000-sales",
        started_at="2024-05-01T10:00:00+00:00",
        finished_at="2024-05-01T10:03:05+00:00",
        spec_source=".selfcorrect/tasks/sales-chart.yml",
        spec=SPEC,
        user_contract_fields=["artifacts", "artifacts.0.kind", "artifacts.0.path"],
        output_name="sales_chart.py",
        contract=CONTRACT,
        tests={"test_sales.py": TEST_FILE},
        inputs=["sales.csv"],
        models=ModelTiers(),
        plan=PlanRecord(
            approach="Read the CSV with the csv module, sum amounts per month, plot them with "
            "matplotlib and save chart.png; print the grand total.",
            filled_fields=["stdout_contains", "success_criteria", "timeout_s"],
            llm_calls=[call("plan")],
        ),
    )
    return state.model_copy(update=updates)


def add_attempt(
    state: RunState,
    code: str,
    execution: ExecutionResult | None,
    *,
    strategy: Strategy,
    tier: Tier = "cheap",
    reason: str = "",
    base: int | None = None,
    tests: list[TestOutcome] | None = None,
    judge: JudgeOutcome | None = None,
    cycle_of: int | None = None,
) -> RunState:
    """Append an evaluated attempt as the loop's generate/execute/evaluate steps would."""
    index = len(state.attempts) + 1
    verdict, progress = _evaluate(state, execution, tests or [], judge)
    if cycle_of is not None:
        original = state.attempts[cycle_of - 1]
        verdict, progress = original.verdict, original.progress
    model = state.models.for_tier(tier)
    calls = [call("repair" if index > 1 else "generate", model)]
    calls += [call("judge", state.models.judge)] if judge else []
    attempt = Attempt(
        index=index,
        strategy=strategy,
        tier=tier,
        model=model,
        code=code,
        code_sha=f"sha-{hash(code) & 0xFFFF:04x}",
        base_attempt=base,
        cycle_of=cycle_of,
        execution=execution,
        test_execution=result() if tests else None,
        tests=tests or [],
        verdict=verdict,
        judge=judge,
        progress=progress,
        llm_calls=calls,
        duration_ms=9_400,
        reason=reason,
    )
    return state.model_copy(update={"attempts": [*state.attempts, attempt]})


def add_packet(state: RunState, step: NextStep) -> RunState:
    """The repair packet reflect stores on the last attempt before the next generation."""
    last = state.attempts[-1]
    packet = build_packet(state, last, step, max_attempts=state.max_attempts)
    attempts = [*state.attempts[:-1], last.model_copy(update={"packet": packet})]
    return state.model_copy(update={"attempts": attempts, "next_step": step})


def _evaluate(
    state: RunState,
    execution: ExecutionResult | None,
    tests: list[TestOutcome],
    judge: JudgeOutcome | None,
) -> tuple[Verdict | None, Progress]:
    if execution is None:
        return None, Progress()
    verdict = evaluate(execution, state.contract, script_name=state.output_name)
    layer = 2 if verdict.passed else 1 if verdict.failed_layer == "contract" else 0
    checks_passed = sum(check.passed for check in verdict.checks)
    if verdict.passed and tests:
        failed = [test for test in tests if test.outcome != "passed"]
        passed = len(tests) - len(failed)
        summary = f"{passed} passed" + (f", {len(failed)} failed" if failed else "")
        checks = [*verdict.checks, Check(name="tests", passed=not failed, detail=summary)]
        verdict = verdict.model_copy(update={"checks": checks})
        if failed:
            layer = 1
            verdict = Verdict(
                passed=False,
                failed_layer="contract",
                category=Category.RUNTIME,
                evidence=f"{failed[0].test_id} failed: {failed[0].message}",
                checks=checks,
            )
    if verdict.passed and judge is not None:
        checks = [*verdict.checks, Check(name="judge", passed=judge.passed, detail=judge.reasoning)]
        verdict = verdict.model_copy(update={"checks": checks})
        layer = 3 if judge.passed else 2
        if not judge.passed:
            verdict = Verdict(
                passed=False,
                failed_layer="semantic",
                category=Category.SEMANTIC,
                evidence=f"the judge: {judge.reasoning}",
                checks=checks,
            )
    tests_passed = sum(test.outcome == "passed" for test in tests)
    return verdict, Progress(layer=layer, tests_passed=tests_passed, checks_passed=checks_passed)


def finish(state: RunState, status: Status, reason: str, **usage: Any) -> RunState:
    calls = [c for a in state.attempts for c in a.llm_calls] + (
        state.plan.llm_calls if state.plan else []
    )
    totals = Usage.model_validate(
        {
            "tokens": sum(c.prompt_tokens + c.completion_tokens for c in calls),
            "cost_usd": sum(c.cost_usd for c in calls),
            "cost_known": all(c.cost_known for c in calls),
            "llm_calls": len(calls),
            **usage,
        }
    )
    return state.model_copy(update={"status": status, "stop_reason": reason, "usage": totals})


PASSING_TESTS = [TestOutcome(test_id="test_sales.py::test_totals_per_month", outcome="passed")]
JUDGE_YES = JudgeOutcome(
    passed=True,
    reasoning=f"One point per month and a dollar axis, as asked. (Saw {ENV_SECRET} in a log.)",
)


def passing_run(tmp: Path) -> RunState:
    """Attempt 1 saves Chart.png (the contract wants chart.png), attempt 2 patches it."""
    state = base_state()
    first = result(
        stdout=f"using token {GITHUB_TOKEN}\nTotal: 1234.0\n",
        stderr=f"warning: Authorization: Bearer {OPENAI_KEY}\n",
        artifacts=[ArtifactRecord(path="Chart.png", size=18_220, host_path=tmp / "Chart.png")],
    )
    state = add_attempt(state, FIRST_CODE, first, strategy=Strategy.INITIAL, reason="first attempt")
    step = NextStep(
        strategy=Strategy.PATCH, tier="cheap", base_attempt=1, reason="contract failure: patch"
    )
    state = add_packet(state, step)
    fixed = result(stdout="Total: 1234.0\n", artifacts=[chart_png(tmp)])
    state = add_attempt(
        state,
        FIXED_CODE,
        fixed,
        strategy=Strategy.PATCH,
        base=1,
        reason=step.reason,
        tests=PASSING_TESTS,
        judge=JUDGE_YES,
    )
    return finish(state, Status.PASSED, "attempt 2 passed every layer", patch_attempts=1)


def exhausted_run() -> RunState:
    """Two runtime failures, then a rethink that times out: every retry used."""
    state = base_state()
    crash = result(
        exit_code=1,
        stderr=KEYERROR_TRACEBACK,
        stdout="loading\n```\nmarkdown fence in output\n`````\n",
    )
    state = add_attempt(
        state, KEYERROR_CODE, crash, strategy=Strategy.INITIAL, reason="first attempt"
    )
    patch = NextStep(
        strategy=Strategy.PATCH, tier="cheap", base_attempt=1, reason="runtime failure: patch"
    )
    state = add_packet(state, patch)
    state = add_attempt(
        state,
        KEYERROR_CODE.replace("float(", "int("),
        crash,
        strategy=Strategy.PATCH,
        base=1,
        reason=patch.reason,
    )
    rethink = NextStep(
        strategy=Strategy.RETHINK,
        tier="strong",
        reason="runtime failure: rethink with the strong model (no progress)",
    )
    state = add_packet(state, rethink)
    slow = result(exit_code=None, timed_out=True, stdout="reading row 1\n" * 50)
    state = add_attempt(
        state,
        "import time\n\nwhile True:\n    time.sleep(1)\n",
        slow,
        strategy=Strategy.RETHINK,
        tier="strong",
        reason=rethink.reason,
    )
    return finish(
        state,
        Status.EXHAUSTED,
        "retry budget used up: 2/2 patches, 1/1 rethinks",
        patch_attempts=2,
        rethink_attempts=1,
    )


def stopped_run() -> RunState:
    """The strong model returns attempt 2's code again: a cycle, so the run stops."""
    state = base_state()
    crash = result(exit_code=1, stderr=KEYERROR_TRACEBACK)
    state = add_attempt(state, KEYERROR_CODE, crash, strategy=Strategy.INITIAL)
    step = NextStep(
        strategy=Strategy.PATCH, tier="cheap", base_attempt=1, reason="runtime failure: patch"
    )
    state = add_packet(state, step)
    second = KEYERROR_CODE.replace("import csv", "import csv  # fixed?")
    state = add_attempt(state, second, crash, strategy=Strategy.PATCH, base=1, reason=step.reason)
    step = NextStep(
        strategy=Strategy.PATCH,
        tier="strong",
        base_attempt=1,
        reason="runtime failure: patch with the strong model (no progress)",
    )
    state = add_packet(state, step)
    state = add_attempt(
        state,
        second,
        None,
        strategy=Strategy.PATCH,
        tier="strong",
        base=1,
        reason=step.reason,
        cycle_of=2,
    )
    return finish(
        state,
        Status.STOPPED,
        "attempt 3 repeated attempt 2's code, even with the strong model",
        patch_attempts=2,
    )


def error_run() -> RunState:
    """The model API failed before the plan was made: nothing was tried."""
    state = base_state(plan=None, contract=USER_CONTRACT)
    return finish(
        state, Status.ERROR, "the model API kept failing: 503 Service Unavailable after 4 tries"
    )


def cancelled_run() -> RunState:
    """CI cancelled the job (SIGTERM) after one runtime failure: the attempt made is kept."""
    state = base_state()
    crash = result(exit_code=1, stderr=KEYERROR_TRACEBACK)
    state = add_attempt(state, KEYERROR_CODE, crash, strategy=Strategy.INITIAL,
                        reason="first attempt")
    state = finish(state, Status.CANCELLED,
                   "interrupted by SIGTERM: the attempts so far are kept in this report")
    return state.model_copy(update={"interrupted_by": "SIGTERM"})
