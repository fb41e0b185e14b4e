"""PLAN: the LLM fills the contract's gaps (never what the user wrote) and, for a
`kind: function` task without tests, writes the tests before any implementation exists.
Those tests are then frozen like the user's own."""

from __future__ import annotations

import json
from pathlib import PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from selfcorrect_action.contract import ArtifactSpec, ExecutionContract, NetworkPolicy
from selfcorrect_action.llm.models import ChatMessage, ChatRequest
from selfcorrect_action.llm.structured import complete_json
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.inputs_preview import previews
from selfcorrect_action.loop.llm_step import RunEnded, call_or_end, metered, system_message
from selfcorrect_action.loop.metered import MeteredLLM
from selfcorrect_action.loop.state import PlanRecord, RunState, Status, end_run
from selfcorrect_action.records import evolve
from selfcorrect_action.templating import render
from selfcorrect_action.test_files import test_file_problem

CONTRACT_FIELDS = (
    "artifacts", "stdout_contains", "timeout_s", "memory_mb", "success_criteria",
)
# The planner may lengthen limits within these, never beyond: its answer is untrusted.
MAX_PLANNED_TIMEOUT_S = 300.0
MAX_PLANNED_MEMORY_MB = 2048
FIELD_HINTS = {
    "artifacts": '[{"path": "...", "kind": "..."}] or null',
    "stdout_contains": '["text the program must print"] or null',
    "timeout_s": "seconds the program needs (number, at most 300) or null",
    "memory_mb": "MB the program needs (at most 2048) or null",
    "success_criteria": '["checkable statement", ...]',
}


class PlannedContract(BaseModel):
    model_config = ConfigDict(extra="forbid")

    artifacts: list[ArtifactSpec] | None = None
    stdout_contains: list[str] | None = None
    timeout_s: float | None = Field(default=None, gt=0)
    memory_mb: int | None = Field(default=None, ge=32)
    success_criteria: list[str] | None = None
    network: NetworkPolicy | None = None  # accepted, never applied: see merge_contract


class PlanAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    approach: str = Field(min_length=1, max_length=4000)
    contract: PlannedContract = Field(default_factory=PlannedContract)
    tests: str | None = None

    @field_validator("tests")
    @classmethod
    def _tests_are_python(cls, value: str | None) -> str | None:
        if value is None:
            return None
        problem = test_file_problem(value)
        if problem:
            raise ValueError(f"the tests {problem}")
        return value


def plan(state: RunState, deps: Deps) -> RunState:
    deps.on_event("plan", "planning the contract")
    llm = metered(state, deps)
    need_tests = state.spec.kind == "function" and not state.tests
    missing = [f for f in CONTRACT_FIELDS if f not in _top_level(state.user_contract_fields)]
    request = ChatRequest(
        purpose="plan", tier="cheap",
        messages=(system_message(state, "plan"), ChatMessage(role="user", content=render(
            "prompts/plan.j2", prompt=state.spec.prompt, inputs=previews(deps.inputs),
            user_contract_json=_user_contract_json(state), missing=missing,
            field_hints=FIELD_HINTS, need_tests=need_tests, module_name=module_name(state),
        ))),
    )
    outcome = call_or_end(state, llm, lambda: complete_json(llm, request, PlanAnswer))
    if isinstance(outcome, RunEnded):
        return _record(outcome.state, llm, PlanRecord())
    answer = outcome.value
    contract, filled = merge_contract(state.contract, set(state.user_contract_fields),
                                      answer.contract)
    updates: dict[str, Any] = {"contract": contract}
    wrote_tests = need_tests and bool(answer.tests)
    if need_tests and not answer.tests:
        # The model failed its task, not the infrastructure: stopped (exit 1), not error.
        return _record(end_run(
            state, Status.STOPPED,
            "the plan step was asked to write tests for this `kind: function` task and wrote "
            "none; add a tests: file to the spec, or use a stronger model",
        ), llm, PlanRecord(approach=answer.approach, filled_fields=filled))
    if wrote_tests:
        updates["tests"] = {f"test_{module_name(state)}.py": answer.tests}
        updates["tests_written_by_plan"] = True
    record = PlanRecord(approach=answer.approach, filled_fields=filled, wrote_tests=wrote_tests)
    deps.on_event("plan", f"contract planned: filled {', '.join(filled) or 'nothing'}")
    return _record(evolve(state, updates), llm, record)


def merge_contract(
    user: ExecutionContract, user_fields: set[str], planned: PlannedContract
) -> tuple[ExecutionContract, list[str]]:
    """The user's contract with its unwritten fields taken from the plan. The network is
    never opened by the planner: `network: open` must be written by a person."""
    written = _top_level(user_fields)
    updates: dict[str, Any] = {}
    for name in CONTRACT_FIELDS:
        value = getattr(planned, name)
        if name in written or value is None:
            continue
        if name == "timeout_s":
            value = min(float(value), MAX_PLANNED_TIMEOUT_S)
        elif name == "memory_mb":
            value = min(int(value), MAX_PLANNED_MEMORY_MB)
        updates[name] = value
    merged = ExecutionContract.model_validate({**user.model_dump(), **updates})
    return merged, sorted(updates)


def module_name(state: RunState) -> str:
    return PurePosixPath(state.output_name).stem


def _top_level(fields: set[str] | list[str]) -> set[str]:
    return {field.split(".", 1)[0] for field in fields}


def _user_contract_json(state: RunState) -> str:
    written = _top_level(state.user_contract_fields)
    data = state.contract.model_dump(mode="json")
    return json.dumps({k: v for k, v in data.items() if k in written}, indent=2)


def _record(state: RunState, llm: MeteredLLM, record: PlanRecord) -> RunState:
    return evolve(state, {
        "plan": evolve(record, {"llm_calls": llm.calls}),
        "usage": llm.usage,
    })
