"""What may be resumed, and from where (issue 37): one answer for every orchestrator. Pure.

A checkpoint carries answers, not verdicts. A resumed run keeps every attempt the earlier
run made, as it was recorded, and executes one again in the sandbox: the one it continues
from, whose verdict the next repair is built on (and a repair's baseline is taken again).
The model calls that attempt's evaluation made (the judge's) are taken back out of the
usage: made again for the same output, they are played back from the recording at no
cost, so nothing is counted twice.

Refused, each with what to do instead: a checkpoint of another task, of other inputs or
tests, made replaying when this run is not (or the other way round); a run that passed; a
run that ended on its budget or on a lack of progress, unless it is given more; a run whose
contract opens the network and whose attempt would be executed again (a second request to
someone's API is not made silently).
"""

from __future__ import annotations

from dataclasses import dataclass

from selfcorrect_action.errors import UsageError
from selfcorrect_action.loop.budget import add_call
from selfcorrect_action.loop.reflect import reflect
from selfcorrect_action.loop.state import (
    Attempt,
    LLMCall,
    Progress,
    Resume,
    RunState,
    Status,
    Usage,
)
from selfcorrect_action.records import evolve

# Calls an attempt's evaluation makes: taken back when the attempt is executed again.
EVALUATION_PURPOSES = frozenset({"judge"})
SPENT = frozenset({Status.EXHAUSTED, Status.STOPPED})
FRESH_HINT = "start a fresh run instead (the same command without --resume)"


class ResumeRefused(UsageError):
    """This checkpoint cannot be resumed as asked; the message says why and what to do."""


@dataclass(frozen=True)
class MoreBudget:
    """What a resumed run may spend beyond its spec's budget."""

    attempts: int = 0
    tokens: int = 0
    usd: float = 0.0

    def __bool__(self) -> bool:
        return bool(self.attempts or self.tokens or self.usd)

    def described(self) -> str:
        parts = [f"{self.attempts} more attempt(s)" if self.attempts else "",
                 f"{self.tokens:,} more tokens" if self.tokens else "",
                 f"${self.usd:g} more" if self.usd else ""]
        return ", ".join(part for part in parts if part) or "no more budget"


@dataclass(frozen=True)
class Ended:
    """How the earlier run ended, when it lived to say so (a SIGKILL leaves none)."""

    status: Status
    reason: str = ""
    error_exit_code: int | None = None


def resume_state(saved: RunState, fresh: RunState, *, more: MoreBudget, now: str,
                 ended: Ended | None = None, recorded_calls: int = 0,
                 where: str = "--resume") -> RunState:
    """The state a resumed run starts from: `saved` (the earlier run after its last finished
    step) checked against `fresh` (this run's first state, from the spec as it is now),
    with this run's settings, `more` budget, and the attempt it continues from made ready
    to be executed again. `recorded_calls`: exchanges the earlier run's recording holds
    beyond those its state counts (played back where the requests match)."""
    _check_same_task(saved, fresh, where)
    status = ended.status if ended is not None else saved.status
    _check_status(saved, status, ended, more, where)
    state = evolve(saved, {
        # This run's settings: its models, runtime and guidance decide its new calls.
        "models": fresh.models, "runtime": fresh.runtime, "orchestrator": fresh.orchestrator,
        "guidance": fresh.guidance, "origin": fresh.origin, "replay_file": fresh.replay_file,
        "selfcorrect_version": fresh.selfcorrect_version,
        "status": Status.RUNNING, "stop_reason": "", "finished_at": None,
        "interrupted_by": None, "error_exit_code": None, "next_step": None,
        "image": None, "final_check": None,
    })
    attempts_before = len(saved.attempts)
    again = _to_run_again(state)
    if again is not None:
        _check_network(state, again, where)
        state = _ready_to_run(state, again)
    retaken = state.repair is not None and state.repair.baseline is not None
    if retaken:
        assert state.repair is not None
        state = evolve(state, {"repair": evolve(state.repair, {"baseline": None, "targets": []})})
    note = Resume(resumed_at=now, previous_status=status,
                  previous_reason=ended.reason if ended is not None else saved.stop_reason,
                  attempts_before=attempts_before,
                  reexecuted=again.index if again is not None else None,
                  baseline_retaken=retaken, earlier=state.usage,
                  recorded_calls=recorded_calls, more_attempts=more.attempts,
                  more_tokens=more.tokens, more_usd=more.usd)
    state = evolve(state, {"resumes": [*state.resumes, note]})
    if state.attempts and again is None:
        # Nothing to execute again (the last answer held no code, or repeated an earlier
        # one): the decision after it is made again, within the budget as it is now.
        last = evolve(state.attempts[-1], {"packet": None})
        state = reflect(evolve(state, {"attempts": [*state.attempts[:-1], last]}))
    return state


def _check_same_task(saved: RunState, fresh: RunState, where: str) -> None:
    if saved.spec != fresh.spec:
        raise ResumeRefused(
            f"{where}: run {saved.run_id} was made for another task spec ({saved.spec_source}), "
            "or the spec changed since",
            hint=f"resume it with the spec it was started with, or {FRESH_HINT}")
    for name, what in (("input_digests", "input files"), ("test_digests", "test files")):
        if getattr(saved, name) and getattr(saved, name) != getattr(fresh, name):
            raise ResumeRefused(
                f"{where}: the spec's {what} changed since run {saved.run_id} started: its "
                "attempts were judged on the earlier ones", hint=FRESH_HINT)
    if saved.replayed != fresh.replayed:
        said = "played back a recording (--replay)" if saved.replayed else "called a model"
        raise ResumeRefused(f"{where}: run {saved.run_id} {said}; resume it the same way",
                            hint="pass the same --replay FILE (or none) as the run had")


def _check_status(saved: RunState, status: Status, ended: Ended | None, more: MoreBudget,
                  where: str) -> None:
    if status is Status.PASSED:
        raise ResumeRefused(
            f"{where}: run {saved.run_id} passed: there is nothing to resume",
            hint="its script is in its reports; to make another, " + FRESH_HINT)
    if status in SPENT and not more:
        raise ResumeRefused(
            f"{where}: run {saved.run_id} ended {status.value} ({saved.stop_reason or status}): "
            "resuming it as it was would stop at once",
            hint="give it more: --more-attempts N (and --more-tokens N, --more-usd X), or "
            "`/selfcorrect resume more attempts N` on GitHub")
    exit_code = ended.error_exit_code if ended is not None else saved.error_exit_code
    if status is Status.ERROR and exit_code == UsageError.exit_code:
        reason = ended.reason if ended is not None else saved.stop_reason
        raise ResumeRefused(
            f"{where}: run {saved.run_id} ended on a bad input, which a resume would meet "
            f"again: {reason.splitlines()[0] if reason else 'see its report'}",
            hint="fix what it names, then " + FRESH_HINT)


def _to_run_again(state: RunState) -> Attempt | None:
    """The attempt the run continues from: its last, when it holds code to execute (an
    answer that held none, or repeated an earlier one's, is kept as it was judged)."""
    last = state.last
    if last is None or last.cycle_of is not None or not (last.code or last.files):
        return None
    if last.review is not None and not last.review.approved and last.execution is None:
        return None  # a change the reviewer refused was never executed: nothing to redo
    return last


def _check_network(state: RunState, attempt: Attempt, where: str) -> None:
    if state.contract.network == "none":
        return
    raise ResumeRefused(
        f"{where}: run {state.run_id}'s contract opens the network, and going on would "
        f"execute attempt {attempt.index} again: it may already have reached the outside "
        "(a second request to someone's API is not made silently)",
        hint=FRESH_HINT)


def _ready_to_run(state: RunState, attempt: Attempt) -> RunState:
    """`attempt`, the last, as it was before its execution; its evaluation's calls taken
    back out of the usage (they are made again, played back where they match)."""
    kept = [call for call in attempt.llm_calls if call.purpose not in EVALUATION_PURPOSES]
    undone = [call for call in attempt.llm_calls if call.purpose in EVALUATION_PURPOSES]
    ready = evolve(attempt, {
        "execution": None, "test_execution": None, "tests": [], "verdict": None,
        "judge": None, "progress": Progress(), "packet": None, "regressions": [],
        "llm_calls": kept})
    return evolve(state, {"attempts": [*state.attempts[:-1], ready],
                          "usage": _without(state.usage, undone)})


def _without(usage: Usage, calls: list[LLMCall]) -> Usage:
    """`usage` less `calls` (counted in it once)."""
    less = Usage()
    for call in calls:
        less = add_call(less, call)
    return evolve(usage, {"tokens": max(0, usage.tokens - less.tokens),
                          "cost_usd": max(0.0, usage.cost_usd - less.cost_usd),
                          "llm_calls": max(0, usage.llm_calls - less.llm_calls)})
