"""REVIEW (kind repair, on by default): before a change runs, a reviewer reads the task, the
failing tests and the diff, and approves or rejects it with reasons. A rejection is a
failed attempt (semantic, "rejected by the reviewer: <reason>"); the reviewer fails closed,
so an answer unreadable twice rejects. Its own prompt, its own tier (`models.review`, else
the judge's model), and its tokens count in the budget like every call."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from selfcorrect_action.llm.errors import LLMStructuredOutputError
from selfcorrect_action.llm.models import ChatMessage, ChatRequest
from selfcorrect_action.llm.structured import JSONAnswer, complete_json
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.llm_step import RunEnded, call_or_end, metered
from selfcorrect_action.loop.repair.plan import target_failures
from selfcorrect_action.loop.state import (
    Attempt,
    RejectedReply,
    RunState,
    Status,
    with_last_attempt,
)
from selfcorrect_action.records import evolve
from selfcorrect_action.repair.records import ReviewOutcome
from selfcorrect_action.taxonomy import Category, Check, Verdict
from selfcorrect_action.templating import render, shorten

MAX_DIFF_CHARS = 30_000
MAX_SHOWN_TESTS = 3


class ReviewAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    verdict: Literal["approve", "reject"]
    reasons: str = Field(min_length=1, max_length=4000)


def review_change(state: RunState, deps: Deps) -> RunState:
    attempt = state.last
    if (state.status is not Status.RUNNING or not state.spec.review or attempt is None
            or attempt.verdict is not None or attempt.cycle_of is not None
            or attempt.review is not None):  # reviewed before a resume: not asked twice
        return state
    deps.on_event("review", f"attempt {attempt.index}: asking the reviewer")
    llm = metered(state, deps)
    request = ChatRequest(purpose="review", tier="review", messages=(
        ChatMessage(role="system", content=render("prompts/system/review.j2")),
        ChatMessage(role="user", content=_prompt(state, attempt))))

    def ask() -> JSONAnswer[ReviewAnswer] | LLMStructuredOutputError:
        try:
            return complete_json(llm, request, ReviewAnswer,
                                 on_retry=lambda why: deps.on_event("review", why))
        except LLMStructuredOutputError as exc:
            return exc

    outcome = call_or_end(state, llm, ask)
    if isinstance(outcome, RunEnded):
        return with_last_attempt(outcome.state, evolve(attempt, {
            "llm_calls": [*attempt.llm_calls, *llm.calls]}))
    if isinstance(outcome, LLMStructuredOutputError):
        review = ReviewOutcome(approved=False, reasons="the reviewer's answer was unreadable "
                               f"twice ({outcome.message}); failing closed",
                               raw_verdict="unreadable")
        refused = outcome.rejected
    else:
        review = ReviewOutcome(approved=outcome.value.verdict == "approve",
                               reasons=outcome.value.reasons.strip(),
                               raw_verdict=outcome.value.verdict)
        refused = outcome.rejected
    updated = evolve(attempt, {
        "review": review, "llm_calls": [*attempt.llm_calls, *llm.calls],
        "rejected": [*attempt.rejected, *(RejectedReply.of("review", r.reason, r.text,
                                                           r.finish_reason) for r in refused)]})
    if not review.approved:
        evidence = f"rejected by the reviewer: {review.reasons}"
        updated = evolve(updated, {"verdict": Verdict(
            passed=False, failed_layer="semantic", category=Category.SEMANTIC,
            evidence=evidence[:1200],
            checks=[Check(name="review", passed=False, detail=evidence[:600])])})
    deps.on_event("review", f"attempt {attempt.index}: " + (
        "approved" if review.approved else shorten(f"rejected: {review.reasons}", 200)))
    return with_last_attempt(evolve(state, {"usage": llm.usage}), updated)


def _prompt(state: RunState, attempt: Attempt) -> str:
    diff = attempt.diff
    cut = len(diff) - MAX_DIFF_CHARS if len(diff) > MAX_DIFF_CHARS else 0
    return render("prompts/repair/review.j2", prompt=state.spec.prompt,
                  guidance=state.guidance, failing=target_failures(state)[:MAX_SHOWN_TESTS],
                  diff=diff[:MAX_DIFF_CHARS], cut=cut)
