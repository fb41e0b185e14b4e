"""A hostile run.json, as a repository could hold one or a model and its scripts could make
one: markup, event handlers and javascript: links in every text the page quotes, outputs of
10 MB, and 500 attempts. benchmarks/viewer_render.py times the page made from it."""

from __future__ import annotations

import json
from typing import Any

from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.loop.state import (
    SCHEMA_VERSION,
    Attempt,
    JudgeOutcome,
    LLMCall,
    Origin,
    PlanRecord,
    RejectedReply,
    RepairPacket,
    RunState,
    Status,
    Strategy,
    Usage,
)
from selfcorrect_action.sandbox.models import ArtifactRecord, ExecutionResult, StreamCapture
from selfcorrect_action.spec import Budget, TaskSpec
from selfcorrect_action.taxonomy import Category, Check, TestOutcome, Verdict

# Each piece would run script in the page if it reached it unescaped; PWNED is what they set.
PWNED = "__pwned"
MARKUP = (
    f"<script>window.{PWNED}=1</script>"
    f"<img src=x onerror=\"window.{PWNED}=2\">"
    f"<a href=\"javascript:window.{PWNED}=3\">click</a>"
    f"<svg onload=\"window.{PWNED}=4\"></svg>"
    "</pre></code></details></style></title></textarea><!-- \"'> {{7*7}} &amp; \x00\x1b[31m"
)
ATTEMPTS = 500
HUGE = 10 * 1024 * 1024  # the output of one stream
HUGE_AT = (250, ATTEMPTS)  # one attempt in the middle (left out of the page), and the last


def hostile_run_json(*, attempts: int = ATTEMPTS, huge: int = HUGE) -> str:
    """The run.json text, of the current schema version (dumped as run_json() dumps it,
    without its redaction pass: nothing here is a secret)."""
    state = hostile_state(attempts=attempts, huge=huge)
    return json.dumps({"schema_version": SCHEMA_VERSION, **state.model_dump(mode="json")})


def hostile_state(*, attempts: int = ATTEMPTS, huge: int = HUGE) -> RunState:
    plan = PlanRecord(approach=MARKUP, filled_fields=["success_criteria"],
                      llm_calls=[_call("plan")],
                      rejected=[RejectedReply.of("plan", MARKUP, MARKUP * 100)])
    state = RunState(
        run_id=f"../../{MARKUP[:40]}", started_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T01:00:00Z", spec_source=MARKUP,
        spec=TaskSpec(prompt=MARKUP * 20, judge=True, budget=Budget(
            patch_attempts=20, rethink_attempts=10, tokens=10**8)),
        output_name=MARKUP, contract=_contract(), tests={MARKUP: MARKUP * 50},
        models=ModelTiers(cheap=MARKUP, strong=MARKUP, judge=MARKUP), replayed=True,
        replay_file=f"javascript:{MARKUP}", plan=plan, guidance=MARKUP,
        origin=Origin(repository=MARKUP, visibility="private"))
    made = [_attempt(index, huge if index in HUGE_AT else 2_000) for index in
            range(1, attempts + 1)]
    calls = [call for attempt in made for call in attempt.llm_calls]
    usage = Usage(patch_attempts=attempts - 1, tokens=sum(c.prompt_tokens for c in calls),
                  cost_usd=sum(c.cost_usd for c in calls), llm_calls=len(calls))
    return state.model_copy(update={"attempts": made, "usage": usage,
                                    "status": Status.EXHAUSTED, "stop_reason": MARKUP})


def _contract() -> Any:
    from selfcorrect_action.contract import ArtifactSpec, ExecutionContract

    return ExecutionContract(artifacts=[ArtifactSpec(path="chart.png", kind="png")],
                             stdout_contains=[MARKUP], success_criteria=[MARKUP])


def _call(purpose: str) -> LLMCall:
    return LLMCall(purpose=purpose, model=MARKUP, prompt_tokens=1_000, completion_tokens=200,
                   cost_usd=0.001, cost_known=True, latency_ms=900, replayed=True)


def _attempt(index: int, output_bytes: int) -> Attempt:
    stream = StreamCapture(text=(MARKUP + "\n") * (output_bytes // (len(MARKUP) + 1)),
                           total_bytes=output_bytes, truncated=False)
    # And one line of 10 MB on stderr: no line ends to bound it by.
    line = StreamCapture(text=MARKUP * (output_bytes // len(MARKUP)), total_bytes=output_bytes)
    execution = ExecutionResult(
        exit_code=1, stdout=stream, stderr=line, sandbox_note=MARKUP, artifact_note=MARKUP,
        artifacts=[ArtifactRecord(path=f"{MARKUP}.png", size=12, rejected=MARKUP)])
    verdict = Verdict(passed=False, failed_layer="execution", category=Category.RUNTIME,
                      evidence=MARKUP * 20, checks=[Check(name=MARKUP, passed=False,
                                                           detail=MARKUP * 5)])
    packet = RepairPacket(attempt=index, max_attempts=ATTEMPTS + 1, strategy=Strategy.PATCH,
                          category=Category.RUNTIME, evidence=MARKUP * 20,
                          failed_checks=[MARKUP], location=MARKUP, judge_reasoning=MARKUP,
                          already_tried=[MARKUP], output_excerpt=MARKUP * 20,
                          file_name=MARKUP, base_attempt=index)
    return Attempt(
        index=index, strategy=Strategy.INITIAL if index == 1 else Strategy.PATCH,
        tier="cheap", model=MARKUP, code=f"# {index}\n" + (MARKUP + "\n") * 40,
        code_sha=f"{index:040x}", base_attempt=index - 1 if index > 1 else None,
        execution=execution, verdict=verdict,
        tests=[TestOutcome(test_id=MARKUP, outcome="failed", message=MARKUP * 10,
                           detail=MARKUP * 20)],
        judge=JudgeOutcome(passed=False, reasoning=MARKUP * 20, unmet_criteria=[MARKUP] * 30),
        packet=packet, llm_calls=[_call("repair")], duration_ms=1_000, reason=MARKUP,
        rejected=[RejectedReply.of("repair", MARKUP, MARKUP * 20)])


