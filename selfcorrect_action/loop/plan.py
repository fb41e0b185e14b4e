"""PLAN: the LLM fills the contract's gaps (never what the user wrote) and, for a
`kind: function` task without tests, writes the tests before any implementation exists.
Those tests are then frozen like the user's own."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from selfcorrect_action.contract import ArtifactSpec, ExecutionContract
from selfcorrect_action.llm.errors import LLMStructuredOutputError
from selfcorrect_action.llm.models import ChatMessage, ChatRequest
from selfcorrect_action.llm.structured import JSONAnswer, Rejection, complete_json
from selfcorrect_action.loop.budget import PromptTooLong
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.inputs_preview import previews
from selfcorrect_action.loop.llm_step import RunEnded, call_or_end, metered, system_message
from selfcorrect_action.loop.metered import MeteredLLM
from selfcorrect_action.loop.state import PlanRecord, RejectedReply, RunState, Status, end_run
from selfcorrect_action.network_rules import NetworkPolicy
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


NOTHING_TO_PLAN = ("skipped: the spec wrote every contract field and no tests need "
                   "writing, so there was nothing to plan")


def plan(state: RunState, deps: Deps) -> RunState:
    need_tests = state.spec.kind == "function" and not state.tests
    missing = [f for f in CONTRACT_FIELDS if f not in _top_level(state.user_contract_fields)]
    if not missing and not need_tests:
        # A call with nothing to add could still sink the run (issue 9): none is made.
        deps.on_event("plan", NOTHING_TO_PLAN)
        return evolve(state, {"plan": PlanRecord(skipped=NOTHING_TO_PLAN)})
    wanted = ", ".join(missing) + (" and the tests" if need_tests else "")
    deps.on_event("plan", f"planning the contract: {wanted}")
    llm = metered(state, deps)
    request = _request(state, deps, missing, need_tests=need_tests)

    def ask() -> JSONAnswer[PlanAnswer] | LLMStructuredOutputError:
        try:
            return complete_json(llm, request, PlanAnswer,
                                 check=_not_a_parrot(request.messages[-1].content),
                                 on_retry=lambda why: deps.on_event("plan", why))
        except LLMStructuredOutputError as exc:
            return exc

    try:
        outcome = call_or_end(state, llm, ask)
    except PromptTooLong as exc:
        # The model's window is too small for the plan's prompt (issue 38): the run goes on
        # without a plan, as with an unusable answer, rather than ending.
        return _without_plan(state, deps, llm, LLMStructuredOutputError(
            f"its prompt does not fit the model's context window ({exc.message})"),
            need_tests=need_tests)
    if isinstance(outcome, RunEnded):
        return _record(outcome.state, llm, PlanRecord())
    if isinstance(outcome, LLMStructuredOutputError):
        return _without_plan(state, deps, llm, outcome, need_tests=need_tests)
    return _with_plan(state, deps, llm, outcome, need_tests=need_tests)


def _request(state: RunState, deps: Deps, missing: list[str], *, need_tests: bool
             ) -> ChatRequest:
    return ChatRequest(
        purpose="plan", tier="cheap",
        messages=(system_message(state, "plan"), ChatMessage(role="user", content=render(
            "prompts/plan.j2", prompt=state.spec.prompt, inputs=previews(deps.inputs),
            user_contract_json=_user_contract_json(state), missing=missing,
            field_hints=FIELD_HINTS, need_tests=need_tests, module_name=module_name(state),
            judge_sees_images=deps.sees_images(state.models.judge),
        ))),
    )


def _with_plan(state: RunState, deps: Deps, llm: MeteredLLM, outcome: JSONAnswer[PlanAnswer],
               *, need_tests: bool) -> RunState:
    answer = outcome.value
    rejected = _rejected(outcome.rejected)
    contract, filled = merge_contract(state.contract, set(state.user_contract_fields),
                                      answer.contract)
    if need_tests and not answer.tests:
        # The model failed its task, not the infrastructure: stopped (exit 1), not error.
        return _record(end_run(
            state, Status.STOPPED,
            "the plan step was asked to write tests for this `kind: function` task and wrote "
            "none; add a tests: file to the spec, or use a stronger model",
        ), llm, PlanRecord(approach=answer.approach, filled_fields=filled, rejected=rejected))
    updates: dict[str, Any] = {"contract": contract}
    if need_tests and answer.tests:
        updates["tests"] = {f"test_{module_name(state)}.py": answer.tests}
        updates["tests_written_by_plan"] = True
    record = PlanRecord(approach=answer.approach, filled_fields=filled,
                        wrote_tests=need_tests and bool(answer.tests), rejected=rejected)
    deps.on_event("plan", f"contract planned: filled {', '.join(filled) or 'nothing'}")
    return _record(evolve(state, updates), llm, record)


def _without_plan(state: RunState, deps: Deps, llm: MeteredLLM,
                  failure: LLMStructuredOutputError, *, need_tests: bool) -> RunState:
    """A plan answer unusable twice does not sink the run (issue 8): it goes on with the
    contract the user wrote plus defaults and no planned criteria, so the judge judges
    against the task itself. Only tests that must be planned cannot be done without."""
    rejected = _rejected(failure.rejected)
    if need_tests:
        return _record(end_run(
            state, Status.STOPPED,
            "the plan step had to write the tests for this `kind: function` task and "
            + (failure.message if "context window" in failure.message else
               f"its answer was unusable twice ({failure.message})")
            + "; add a tests: file to the spec, or use a stronger model"), llm,
            PlanRecord(rejected=rejected))
    unusable = failure.message if "context window" in failure.message else (
        f"the plan answer was unusable twice ({failure.message})")
    why = (f"skipped: {unusable}; the run goes on with the contract as written plus "
           "defaults, and the judge judges against the task itself")
    deps.on_event("plan", why)
    return _record(state, llm, PlanRecord(skipped=why, rejected=rejected))


def _rejected(rejections: tuple[Rejection, ...]) -> list[RejectedReply]:
    return [RejectedReply.of("plan", r.reason, r.text, r.finish_reason) for r in rejections]


def _not_a_parrot(asked: str) -> Callable[[PlanAnswer], str | None]:
    """Refuses an approach made of the words it was asked with: the task's, or our own
    instructions' (a real model answered "2-6 sentences: how the program will do it...",
    the placeholder itself)."""
    def check(answer: PlanAnswer) -> str | None:
        if parrots(answer.approach, asked):
            return ("the approach repeats the words it was asked with instead of saying how "
                    "the program will do it (which steps, which libraries, which files)")
        return None
    return check


_WORDS = re.compile(r"[a-z0-9]+")


def parrots(approach: str, asked_with: str) -> bool:
    """Whether an 'approach' is what it was asked with said again: its words, in order,
    are (nearly) all the request's own. Such a plan plans nothing (issue 9)."""
    said = _WORDS.findall(approach.lower())
    asked = _WORDS.findall(asked_with.lower()[:40_000])
    if len(said) < 4:
        return False
    matcher = difflib.SequenceMatcher(None, said, asked, autojunk=False)
    shared = sum(block.size for block in matcher.get_matching_blocks())
    return shared / len(said) >= 0.85


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
