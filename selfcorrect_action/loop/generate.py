"""GENERATE: one whole Python file per attempt, first from the plan, then as a patch of an
earlier attempt or a rethink from scratch. The same code twice is caught here (a cycle)
and not run again. An answer that is not runnable Python is drawn again, warmer, as many
times as the run's `redraws` allow (the small profile's), before it counts as an attempt."""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass, replace
from functools import partial

from selfcorrect_action.llm.models import ChatRequest, ChatResponse
from selfcorrect_action.loop.answer_shape import AnswerShape, read_answer
from selfcorrect_action.loop.budget import PromptTooLong
from selfcorrect_action.loop.code_request import TRIMS, CodeRequest, code_request, cut_at_stops
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.function_target import target_of, with_given_code
from selfcorrect_action.loop.llm_step import RunEnded, call_or_end, metered
from selfcorrect_action.loop.metered import MeteredLLM
from selfcorrect_action.loop.profile import switched_to_small
from selfcorrect_action.loop.sampling import redraw_temperature
from selfcorrect_action.loop.state import (
    Attempt,
    NextStep,
    RejectedReply,
    RunState,
    Strategy,
    Usage,
)
from selfcorrect_action.records import evolve
from selfcorrect_action.taxonomy import Category, Check, Verdict
from selfcorrect_action.templating import shorten

INITIAL = NextStep(strategy=Strategy.INITIAL, tier="cheap", reason="first attempt")
# No task's script is this large; an answer that is comes from a server ignoring max_tokens
# or a model looping. Kept cut at this size, so run.json stays bounded like AUDIT.md.
MAX_CODE_CHARS = 200_000


def generate(state: RunState, deps: Deps) -> RunState:
    step = state.next_step or INITIAL
    index = len(state.attempts) + 1
    deps.on_event("generate", f"attempt {index}/{state.max_attempts}: {step.strategy.value} "
                  f"with the {step.tier} model")
    llm = metered(state, deps)
    drawn = _draw(state, deps, llm, step, index)
    if isinstance(drawn, RunEnded):
        return drawn.state
    if isinstance(drawn, PromptTooLong):
        return _too_long(state, step, index, llm, drawn)
    state, drawn = _small_if_unrunnable(state, deps, llm, step, index, drawn)
    reply, request, shape = drawn.reply, drawn.request, drawn.shape
    code = shape.code
    refused = drawn.redrawn
    if shape.problem is not None:
        refused = [*refused, RejectedReply.of(request.purpose, shape.problem, reply.text,
                                              reply.finish_reason)]
    oversized = len(code) if len(code) > MAX_CODE_CHARS else None
    code = code[:MAX_CODE_CHARS]
    attempt = Attempt(
        index=index, strategy=step.strategy, tier=step.tier,
        model=reply.model, code=code,
        # An answer with no code is told apart from another by its text: two different
        # pieces of prose are not a cycle, the same one twice is.
        code_sha=code_sha(code if code.strip() else reply.text),
        base_attempt=step.base_attempt, reason=step.reason, llm_calls=llm.calls,
        rejected=refused, temperature=request.temperature,
        prompt_trimmed=list(drawn.trimmed),
    )
    attempt = _mark_cycle_or_empty(state, attempt, oversized=oversized,
                                   shape_problem=shape.problem)
    _say_what_came(deps, attempt)
    return evolve(state, {
        "attempts": [*state.attempts, attempt],
        "usage": count_retry(llm.usage, step.strategy),
        "next_step": None,
    })


@dataclass(frozen=True)
class _Drawn:
    reply: ChatResponse
    request: ChatRequest  # the one that got `reply` (a redraw's is warmer)
    shape: AnswerShape
    redrawn: list[RejectedReply]  # the answers drawn again, each with why
    trimmed: tuple[str, ...] = ()  # what the prompt left out to fit the context window


def _fitting(state: RunState, deps: Deps, llm: MeteredLLM, step: NextStep, index: int
             ) -> tuple[CodeRequest, ChatResponse] | RunEnded | PromptTooLong:
    """The first answer, to the whole prompt or, where it does not fit the model's context
    window (as the run knows it, or as the model's refusal said), to one that leaves out
    more of code_request.TRIMS at each step; PromptTooLong when even the shortest does not
    fit."""
    too_long: PromptTooLong | None = None
    tried: CodeRequest | None = None
    left_out: list[str] = []  # what made a difference to this step's prompt
    for trim in range(len(TRIMS) + 1):
        built = code_request(state, step, deps, trim=trim)
        if tried is not None and built.request.messages == tried.request.messages:
            continue  # nothing of that kind in this prompt (a first attempt has no code)
        if trim:
            left_out.append(TRIMS[trim - 1])
        tried = built
        try:
            reply = call_or_end(state, llm, partial(llm.complete, built.request))
        except PromptTooLong as exc:
            too_long = exc
            continue
        if isinstance(reply, RunEnded):
            return reply
        if left_out:
            deps.on_event("generate", f"attempt {index}: the whole prompt did not fit the "
                          f"model's context window{_of(too_long)}: left out "
                          + ", ".join(left_out))
        return replace(built, trimmed=tuple(left_out)), reply
    assert too_long is not None
    deps.on_event("generate", f"attempt {index}: no prompt fits the model's context "
                  f"window{_of(too_long)}, even with " + ", ".join(left_out) + " left out")
    return too_long


def _of(exc: PromptTooLong | None) -> str:
    return f" of {exc.window:,} tokens" if exc is not None and exc.window else ""


def _too_long(state: RunState, step: NextStep, index: int, llm: MeteredLLM,
              exc: PromptTooLong) -> RunState:
    """No prompt fitted: a failed attempt (resource: the next one is a rethink, shorter
    still), not the end of the run; its code is none and unique, so it is no cycle."""
    evidence = (f"the prompt did not fit the model's context window even with "
                f"{', '.join(TRIMS)} left out: {exc.message}")
    verdict = Verdict(passed=False, failed_layer="execution", category=Category.RESOURCE,
                      evidence=evidence)
    attempt = Attempt(index=index, strategy=step.strategy, tier=step.tier,
                      model=state.models.for_tier(step.tier), code="",
                      code_sha=code_sha(f"no prompt fitted: attempt {index}"),
                      base_attempt=step.base_attempt, reason=step.reason,
                      llm_calls=llm.calls, verdict=verdict, prompt_trimmed=list(TRIMS))
    return evolve(state, {"attempts": [*state.attempts, attempt],
                          "usage": count_retry(llm.usage, step.strategy), "next_step": None})


def _draw(state: RunState, deps: Deps, llm: MeteredLLM, step: NextStep, index: int
          ) -> _Drawn | RunEnded | PromptTooLong:
    """The answer this attempt runs: the first one, or while it is not runnable Python
    (no code, an echo, a SyntaxError) and the run's redraws last, a fresh one a step
    warmer (the same prompt at temperature 0 gives the same answer)."""
    first = _fitting(state, deps, llm, step, index)
    if isinstance(first, RunEnded | PromptTooLong):
        return first
    built, reply = first
    request = built.request
    shape = _shape(state, built, reply.text)
    redrawn: list[RejectedReply] = []
    for draw in range(1, state.redraws + 1):
        problem = shape.problem or syntax_problem(shape.code, state.output_name)
        if problem is None:
            break
        warmer = request.model_copy(update={
            "temperature": redraw_temperature(built.request.temperature, draw)})
        deps.on_event("generate", f"attempt {index}: the answer is not runnable Python "
                      f"({shorten(problem, 100)}): asking again at temperature "
                      f"{warmer.temperature} ({draw} of {state.redraws})")
        try:
            again = call_or_end(state, llm, partial(llm.complete, warmer))
        except PromptTooLong:
            break  # the window shrank meanwhile: the attempt keeps the answer it has
        if isinstance(again, RunEnded):
            break  # the budget is spent: the attempt keeps the answer it has
        redrawn.append(RejectedReply.of(
            request.purpose, f"{problem}; asked again at temperature {warmer.temperature}",
            reply.text, reply.finish_reason))
        reply, request = again, warmer
        shape = _shape(state, built, reply.text)
    return _Drawn(reply, request, shape, redrawn, built.trimmed)


def _small_if_unrunnable(state: RunState, deps: Deps, llm: MeteredLLM, step: NextStep,
                         index: int, drawn: _Drawn) -> tuple[RunState, _Drawn]:
    """Where nothing said the model's size (state.profile_open), its first answer that is
    not runnable Python switches the run to the small profile, and the attempt is drawn
    again that way; the answer it replaces is kept with why (loop/profile.py)."""
    if not state.profile_open:
        return state, drawn
    problem = drawn.shape.problem or syntax_problem(drawn.shape.code, state.output_name)
    if problem is None:
        return evolve(state, {"profile_open": False,
                              "profile_reason": f"standard: the model's size was unknown, and "
                              f"its first answer (attempt {index}) was runnable Python"}), drawn
    small = switched_to_small(state, index, shorten(problem, 200))
    deps.on_event("generate", f"attempt {index}: the answer is not runnable Python "
                  f"({shorten(problem, 100)}), and nothing says how big the model is: "
                  "asking the small profile's way from now on")
    again = _draw(small, deps, llm, step, index)
    if isinstance(again, RunEnded | PromptTooLong):
        return small, drawn  # the budget is spent: the attempt keeps the answer it has
    first = RejectedReply.of(drawn.request.purpose, f"{problem}; asked again with the small "
                             "profile", drawn.reply.text, drawn.reply.finish_reason)
    return small, replace(again, redrawn=[*drawn.redrawn, first, *again.redrawn])


def _say_what_came(deps: Deps, attempt: Attempt) -> None:
    """Every generation's outcome gets a line: four "attempt N" lines in a row with no word
    on why (all were answers that did not parse) left a user guessing (issue 9)."""
    lines = len(attempt.code.splitlines())
    if attempt.cycle_of is not None:
        said = f"the same code as attempt {attempt.cycle_of}: not run again"
    elif attempt.verdict is not None:
        said = f"{attempt.verdict.category} failure found without running it: " + shorten(
            attempt.verdict.evidence, 140)
    else:
        said = f"got {lines} lines of code"
    deps.on_event("generate", f"attempt {attempt.index}: {said}")


def code_sha(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


def _shape(state: RunState, built: CodeRequest, answer: str) -> AnswerShape:
    """What the answer gives: a completion continues the code it was given (an empty one
    wrote nothing after the docstring); a chat answer is read for its code block."""
    if built.request.mode == "completion":
        body = cut_at_stops(answer)
        if not body.strip():
            return AnswerShape("", "the completion was empty: the model wrote nothing after "
                               "the function's docstring")
        return AnswerShape(built.prefix + body.rstrip() + "\n")
    target = target_of(state)
    shape = read_answer(answer, prompt=built.prompt, kind=state.spec.kind,
                        entry_point=target.name if target else None)
    if shape.problem is None and shape.code:
        return AnswerShape(with_given_code(shape.code, target))
    return shape


def _mark_cycle_or_empty(state: RunState, attempt: Attempt, *, oversized: int | None = None,
                         shape_problem: str | None = None) -> Attempt:
    """Same code as an earlier attempt (unparsable answers included): it would fail the same
    way, so it is not run; its verdict is the earlier one's. Code that does not even parse
    (or no code at all) is a syntax failure found without spending a sandbox run."""
    for earlier in state.attempts:
        if earlier.code_sha == attempt.code_sha and earlier.cycle_of is None:
            return evolve(attempt, {
                "cycle_of": earlier.index, "verdict": earlier.verdict,
                "progress": earlier.progress, "tests": earlier.tests,
            })
    problem = (f"the answer held {oversized:,} characters of code, more than the "
               f"{MAX_CODE_CHARS:,} a script may have; it was cut and not run"
               if oversized else shape_problem or syntax_problem(attempt.code,
                                                                 state.output_name))
    if problem is not None:
        verdict = Verdict(
            passed=False, failed_layer="execution", category=Category.SYNTAX, evidence=problem,
            checks=[Check(name="parses as Python", passed=False, detail=problem)],
        )
        return evolve(attempt, {"verdict": verdict})
    return attempt


def syntax_problem(code: str, file_name: str) -> str | None:
    if not code.strip():
        return "the model's answer contained no Python code"
    try:
        ast.parse(code, filename=file_name)
    except SyntaxError as exc:
        line = (exc.text or "").strip()
        where = f" at {file_name}:{exc.lineno}" + (f": {line[:200]}" if line else "")
        return f"{type(exc).__name__}: {exc.msg}{where}"
    except ValueError as exc:  # null bytes
        return f"SyntaxError: {exc}"
    return None


def count_retry(usage: Usage, strategy: Strategy) -> Usage:
    if strategy is Strategy.PATCH:
        return evolve(usage, {"patch_attempts": usage.patch_attempts + 1})
    if strategy is Strategy.RETHINK:
        return evolve(usage, {"rethink_attempts": usage.rethink_attempts + 1})
    return usage
