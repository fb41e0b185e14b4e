"""The run as the reports show it: a small, pure view-model computed from a (redacted)
RunState, so the templates only lay it out and every number is tested in Python."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field

from selfcorrect_action.loop.budget import usd
from selfcorrect_action.loop.state import Attempt, RunState, Status
from selfcorrect_action.report import text
from selfcorrect_action.report.attempt_view import (
    EVIDENCE_CHARS,
    REASONING_CHARS,
    AttemptView,
    CallRow,
    RejectedView,
    attempt_view,
    call_row,
    progress_words,
    rejected_views,
)
from selfcorrect_action.report.contract_view import ContractView, contract_view
from selfcorrect_action.report.layers import attempt_failure
from selfcorrect_action.report.network_view import NetworkAdvice, network_advice
from selfcorrect_action.report.repair_view import RepairView, repair_cautions, repair_view
from selfcorrect_action.report.resume_view import ResumeView, resume_views
from selfcorrect_action.taxonomy import Category

CYCLE_BUCKET = "repeated code"
PROMPT_CHARS = 20_000
STATUS_WORDS = {
    Status.PASSED: "passed",
    Status.EXHAUSTED: "failed: budget exhausted",
    Status.STOPPED: "failed: stopped",
    # Neither failed nor an error: stopped from outside (issue 34), its attempts kept.
    Status.CANCELLED: "cancelled: stopped before it ended",
    Status.ERROR: "error: the run could not continue",
    Status.RUNNING: "unfinished",
}


@dataclass(frozen=True)
class Row:
    label: str
    value: str


@dataclass(frozen=True)
class PlanView:
    approach: str
    planner_fields: list[str]
    wrote_tests: bool
    calls: list[CallRow]
    skipped: str
    rejected: list[RejectedView]
    files: list[str]  # kind repair: the files the plan named


@dataclass(frozen=True)
class OutcomeView:
    passed: bool
    stop_reason: str
    best: str  # the attempt that got furthest and how far; "" when none ran
    best_failure: str
    tried: list[str]


@dataclass(frozen=True)
class RunView:
    title: str
    status: str
    passed: bool
    replayed: bool
    replay_file: str
    headline: str
    # What a reader must know before trusting the verdict (who wrote the tests, whether the
    # candidate shared their process): every report shows these first.
    cautions: list[str]
    summary: list[Row]
    prompt: str
    guidance: str
    plan: PlanView | None
    contract: ContractView
    attempts: list[AttemptView]
    max_attempts: int
    outcome: OutcomeView
    run_id: str
    started_at: str
    finished_at: str
    repair: RepairView | None  # kind repair: the repository, its baseline, the change
    # The allow list an observed run needed, or the lines to add for refused hosts.
    network: NetworkAdvice | None = None
    resumes: list[ResumeView] = field(default_factory=list)  # issue 37


def title(state: RunState) -> str:
    """What the run made: the script, or for a repair the files it may rewrite."""
    if state.spec.kind == "repair":
        return "repair of " + ", ".join(state.spec.files)
    return state.spec.output or state.output_name


def run_view(state: RunState, *, in_full: Collection[int] | None = None) -> RunView:
    """`in_full`: the attempts whose sections are shown (None: all); the others carry what
    a table row shows (attempt_view's full=False)."""
    return RunView(
        title=title(state),
        status=STATUS_WORDS[state.status],
        passed=state.status is Status.PASSED,
        replayed=replayed(state),
        replay_file=state.replay_file,
        headline=_headline(state),
        cautions=cautions(state),
        summary=_summary(state),
        prompt=text.clip(state.spec.prompt, PROMPT_CHARS),
        guidance=text.clip(state.guidance, REASONING_CHARS),
        plan=_plan(state),
        contract=contract_view(state),
        attempts=[attempt_view(state, attempt,
                               full=in_full is None or attempt.index in in_full)
                  for attempt in state.attempts],
        max_attempts=state.max_attempts,
        outcome=_outcome(state),
        run_id=state.run_id,
        started_at=state.started_at,
        finished_at=state.finished_at or "",
        repair=repair_view(state),
        network=network_advice(state),
        resumes=resume_views(state),
    )


def replayed(state: RunState) -> bool:
    """Reports always say when the answers were recorded ones, not a model's: the state's
    flag, or any call that was played back (a state built without setting the flag)."""
    calls = [
        *(state.plan.llm_calls if state.plan else []),
        *(call for attempt in state.attempts for call in attempt.llm_calls),
    ]
    return state.replayed or any(call.replayed for call in calls)


def histogram(state: RunState) -> list[tuple[str, int]]:
    """Failed attempts per category, in the taxonomy's order; cycles (not run) apart."""
    counts: Counter[str] = Counter()
    for attempt in state.attempts:
        failure = attempt_failure(state, attempt)
        if attempt.cycle_of is not None:
            counts[CYCLE_BUCKET] += 1
        elif failure is not None:
            counts[failure.category or "not evaluated"] += 1
    order = [category.value for category in Category] + [CYCLE_BUCKET, "not evaluated"]
    return [(name, counts[name]) for name in order if counts[name]]


def histogram_text(state: RunState) -> str:
    pairs = histogram(state)
    return ", ".join(f"{name} {count}" for name, count in pairs) if pairs else "no failures"


MODEL_WROTE_TESTS = (
    "The tests that judged this run were written by a model from the task, before any code, "
    "not by a person: a result is only as right as they are, and repairs steered by "
    "model-written tests can fit the code to a wrong test. Read the tests before trusting "
    "the result.")
SHARED_PROCESS = (
    "The candidate shared the tests' process (isolation: in-process): each attempt was "
    "scanned for tampering before it ran, but nothing stood between its code and the tests "
    "while they ran.")


def cautions(state: RunState) -> list[str]:
    """What a reader must know before trusting the verdict."""
    found = repair_cautions(state)
    if state.tests and state.tests_written_by_plan:
        found.append(MODEL_WROTE_TESTS)
    if state.tests and state.spec.isolation == "in-process":
        found.append(SHARED_PROCESS)
    return found


def _headline(state: RunState) -> str:
    usage = state.usage
    return (
        f"{len(state.attempts)} of {state.max_attempts} attempts, "
        f"{text.number(usage.tokens)} tokens, "
        f"cost {text.money(usage.cost_usd, known=usage.cost_known)}, "
        f"{text.wall_time(state.started_at, state.finished_at)}"
    )


def _summary(state: RunState) -> list[Row]:
    usage, budget = state.usage, state.budget
    cost = text.money(usage.cost_usd, known=usage.cost_known)
    if budget.cost_usd is not None:
        cost += f" (cap {usd(budget.cost_usd)})"
    return [
        Row("status", STATUS_WORDS[state.status]),
        Row(
            "attempts",
            f"{len(state.attempts)} of {state.max_attempts} "
            f"({usage.patch_attempts} of {budget.patch_attempts} patches, "
            f"{usage.rethink_attempts} of {budget.rethink_attempts} rethinks)",
        ),
        Row("failures by category", histogram_text(state)),
        Row(
            "tokens",
            f"{text.number(usage.tokens)} of {text.number(budget.tokens)} "
            f"in {text.number(usage.llm_calls)} model calls",
        ),
        Row("cost", cost),
        Row("wall time", text.wall_time(state.started_at, state.finished_at)),
        Row("models", _models_row(state)),
        *([Row("profile", state.profile_reason)] if state.profile_reason else []),
        Row("sandbox runtime", "runsc (gVisor)" if state.runtime == "runsc" else state.runtime),
        Row("frozen tests", _tests_row(state)),
        Row("task spec", state.spec_source),
        Row("files" if state.spec.kind == "repair" else "script", title(state).removeprefix(
            "repair of ")),
    ]


def _models_row(state: RunState) -> str:
    models = state.models
    if state.spec.kind == "repair":
        review = (f"review {models.for_tier('review')}" if state.spec.review
                  else "review off")
        return f"cheap {models.cheap}, strong {models.strong}, {review}"
    return (f"cheap {models.cheap}, strong {models.strong}, judge {models.judge}"
            + ("" if state.spec.judge else " (judge off)"))


def _tests_row(state: RunState) -> str:
    if state.spec.kind == "repair":
        return (f"the repository's own suite ({' '.join(state.spec.test_command)}), "
                "in pytest's own process; tests, conftest.py and configuration frozen")
    if not state.tests:
        return "none"
    who = ("written by a model from the task" if state.tests_written_by_plan
           else "given in the spec")
    where = ("imported into pytest's own process (isolation: in-process)"
             if state.spec.isolation == "in-process"
             else "run apart from the candidate, in a process and under a user of their own")
    return f"{text.plural(len(state.tests), 'file')}, {who}; {where}"


def _plan(state: RunState) -> PlanView | None:
    if state.plan is None:
        return None
    return PlanView(
        approach=text.clip(state.plan.approach, REASONING_CHARS),
        planner_fields=list(state.plan.filled_fields),
        wrote_tests=state.plan.wrote_tests or state.tests_written_by_plan,
        calls=[call_row(call) for call in state.plan.llm_calls],
        skipped=state.plan.skipped,
        rejected=rejected_views(state.plan.rejected),
        files=list(state.plan.files),
    )


def _outcome(state: RunState) -> OutcomeView:
    passed = state.status is Status.PASSED
    best = _passing(state) if passed else state.best()
    return OutcomeView(
        passed=passed,
        stop_reason=text.clip(state.stop_reason, EVIDENCE_CHARS) or "no reason was recorded",
        best=_best_line(state, best) if best else "",
        best_failure=_failure_line(state, best) if best and not passed else "",
        tried=[_tried_line(state, attempt) for attempt in state.attempts],
    )


def _passing(state: RunState) -> Attempt | None:
    return next((a for a in reversed(state.attempts) if attempt_failure(state, a) is None), None)


def _best_line(state: RunState, attempt: Attempt) -> str:
    return (
        f"attempt {attempt.index} ({attempt.strategy.value}, {attempt.tier} model "
        f"{attempt.model}): {progress_words(state, attempt)}"
    )


def _failure_line(state: RunState, attempt: Attempt) -> str:
    failure = attempt_failure(state, attempt)
    if failure is None:
        return ""
    if not failure.category:
        return f"it was {text.clip(failure.evidence, EVIDENCE_CHARS)}"
    layer = attempt.verdict.failed_layer if attempt.verdict else None
    where = f"at the {layer} layer, " if layer else ""
    return f"it failed {where}{failure.category}: {text.clip(failure.evidence, EVIDENCE_CHARS)}"


def _tried_line(state: RunState, attempt: Attempt) -> str:
    failure = attempt_failure(state, attempt)
    result = "passed" if failure is None else (failure.category or "not evaluated")
    return (
        f"attempt {attempt.index}: {attempt.strategy.value} with {attempt.model} "
        f"({attempt.tier}): {result}, {progress_words(state, attempt)}"
    )
