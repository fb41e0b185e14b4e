"""What a resumed run's reports say about where it came from (issue 37): per resume, the
attempts that came from the earlier run, the one executed again, and what each part spent:
the earlier run, the answers played back from its recording, and the calls new here. Pure."""

from __future__ import annotations

from dataclasses import dataclass

from selfcorrect_action.loop.resume import MoreBudget
from selfcorrect_action.loop.state import RunState, Usage
from selfcorrect_action.report import text


@dataclass(frozen=True)
class ResumeView:
    at: str
    previous: str  # how the earlier run was when it stopped
    reason: str
    attempts_before: int
    reexecuted: int | None
    baseline_retaken: bool
    earlier: str  # what the earlier run had spent, as "N calls, T tokens, $C"
    played_back: str
    new: str
    more: str  # the budget this resume added ("" for none)


def resume_views(state: RunState) -> list[ResumeView]:
    views = []
    for number, note in enumerate(state.resumes):
        # What came after this resume: to the next resume, or to the end of the run.
        until = state.resumes[number + 1].earlier if number + 1 < len(state.resumes) \
            else state.usage
        new = _less(until, note.earlier, note.played_back)
        more = MoreBudget(note.more_attempts, note.more_tokens, note.more_usd)
        views.append(ResumeView(
            at=note.resumed_at,
            previous="killed or lost (it ended without a word)"
            if note.previous_status.value == "running" else note.previous_status.value,
            reason=note.previous_reason.splitlines()[0] if note.previous_reason else "",
            attempts_before=note.attempts_before, reexecuted=note.reexecuted,
            baseline_retaken=note.baseline_retaken, earlier=spent(note.earlier),
            played_back=spent(note.played_back), new=spent(new),
            more=more.described() if more else ""))
    return views


def spent(usage: Usage) -> str:
    return (f"{usage.llm_calls} model call(s), {text.number(usage.tokens)} tokens, "
            f"{text.money(usage.cost_usd, known=usage.cost_known)}")


def _less(total: Usage, *parts: Usage) -> Usage:
    return Usage(llm_calls=max(0, total.llm_calls - sum(part.llm_calls for part in parts)),
                 tokens=max(0, total.tokens - sum(part.tokens for part in parts)),
                 cost_usd=max(0.0, total.cost_usd - sum(part.cost_usd for part in parts)),
                 cost_known=total.cost_known)
