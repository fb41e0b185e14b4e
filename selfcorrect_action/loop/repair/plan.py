"""PLAN (kind repair): locate the fault from the task, the failing tests' packets and the
files the repair may rewrite, and say which of them to rewrite. The answer is untrusted:
a file it names outside what `files:` allows is refused (one retry), and an answer unusable
twice does not sink the run, which goes on with the files the failing tests' tracebacks
pass through."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from selfcorrect_action.evaluation.pytest_traceback import detail_frames
from selfcorrect_action.llm.errors import LLMStructuredOutputError
from selfcorrect_action.llm.models import ChatMessage, ChatRequest
from selfcorrect_action.llm.structured import JSONAnswer, Rejection, complete_json
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.llm_step import RunEnded, call_or_end, metered
from selfcorrect_action.loop.metered import MeteredLLM
from selfcorrect_action.loop.repair.context import originals, record
from selfcorrect_action.loop.state import PlanRecord, RejectedReply, RunState
from selfcorrect_action.records import evolve
from selfcorrect_action.repair.answer import normal_path
from selfcorrect_action.repair.verdict import allowed_file
from selfcorrect_action.taxonomy import TestOutcome
from selfcorrect_action.templating import render

# What the planner reads of the failing tests and of the suspect files: bounded, whatever
# the repository's size.
MAX_SHOWN_TESTS = 5
MAX_SOURCE_CHARS = 40_000
MAX_LISTED_FILES = 200
MAX_PLANNED_FILES = 10


class RepairPlanAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    approach: str = Field(min_length=1, max_length=4000)
    files: list[str] = Field(min_length=1, max_length=MAX_PLANNED_FILES)


def plan_repair(state: RunState, deps: Deps) -> RunState:
    allowed = record(state).allowed
    deps.on_event("plan", f"locating the fault among {len(allowed)} file(s) the spec allows")
    llm = metered(state, deps)
    request = ChatRequest(purpose="plan", tier="cheap", messages=(
        ChatMessage(role="system", content=render("prompts/system/repair_plan.j2")),
        ChatMessage(role="user", content=_prompt(state, deps)),
    ))

    def ask() -> JSONAnswer[RepairPlanAnswer] | LLMStructuredOutputError:
        try:
            return complete_json(llm, request, RepairPlanAnswer, check=_allowed_only(allowed),
                                 on_retry=lambda why: deps.on_event("plan", why))
        except LLMStructuredOutputError as exc:
            return exc

    outcome = call_or_end(state, llm, ask)
    if isinstance(outcome, RunEnded):
        return _record(outcome.state, llm, PlanRecord())
    if isinstance(outcome, LLMStructuredOutputError):
        files = suspects(state, deps) or allowed[:3]
        why = (f"skipped: the plan answer was unusable twice ({outcome.message}); the repair "
               f"goes on with {', '.join(files)}")
        deps.on_event("plan", why)
        return _record(state, llm, PlanRecord(skipped=why, files=files,
                                              rejected=_rejected(outcome.rejected)))
    answer = outcome.value
    files = list(dict.fromkeys(normal_path(path) for path in answer.files))
    deps.on_event("plan", f"files to rewrite: {', '.join(files)}")
    return _record(state, llm, PlanRecord(approach=answer.approach, files=files,
                                          rejected=_rejected(outcome.rejected)))


def _allowed_only(allowed: list[str]) -> Callable[[RepairPlanAnswer], str | None]:
    def check(answer: RepairPlanAnswer) -> str | None:
        outside = [path for path in answer.files if normal_path(path) not in set(allowed)]
        if outside:
            return (f"{', '.join(outside)} may not be rewritten: name files from the list of "
                    "files the repair may rewrite, exactly as written there")
        return None
    return check


def _prompt(state: RunState, deps: Deps) -> str:
    allowed = record(state).allowed
    texts = originals(state, deps)
    shown = _bounded({path: texts[path] for path in suspects(state, deps) or allowed})
    return render("prompts/repair/plan.j2", prompt=state.spec.prompt,
                  failing=target_failures(state)[:MAX_SHOWN_TESTS], allowed=allowed[
                      :MAX_LISTED_FILES], more_allowed=max(0, len(allowed) - MAX_LISTED_FILES),
                  sources=shown, guidance=state.guidance)


def target_failures(state: RunState) -> list[TestOutcome]:
    """The baseline's failing outcomes of the targets (with assertion and traceback)."""
    repair = record(state)
    baseline = repair.baseline
    if baseline is None:
        return []
    targets = set(repair.targets)
    return [o for o in baseline.failing_outcomes if o.test_id in targets]


def suspects(state: RunState, deps: Deps) -> list[str]:
    """Allowed files the failing tests' tracebacks pass through, innermost first."""
    allowed = set(record(state).allowed)
    found: list[str] = []
    for outcome in target_failures(state):
        for frame in reversed(detail_frames(outcome.detail)):
            path = allowed_file(frame.file, allowed)
            if path is not None and path not in found:
                found.append(path)
    return found


def _bounded(sources: dict[str, str]) -> dict[str, str]:
    """As many whole files as fit MAX_SOURCE_CHARS, in the order given (at least one,
    cut if it alone is larger)."""
    shown: dict[str, str] = {}
    total = 0
    for path, text in sources.items():
        if shown and total + len(text) > MAX_SOURCE_CHARS:
            break
        shown[path] = text[:MAX_SOURCE_CHARS]
        total += len(text)
    return shown


def _rejected(rejections: tuple[Rejection, ...]) -> list[RejectedReply]:
    return [RejectedReply.of("plan", r.reason, r.text, r.finish_reason) for r in rejections]


def _record(state: RunState, llm: MeteredLLM, plan: PlanRecord) -> RunState:
    return evolve(state, {"plan": evolve(plan, {"llm_calls": llm.calls}), "usage": llm.usage})
