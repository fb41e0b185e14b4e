"""GENERATE: one whole Python file per attempt, first from the plan, then as a patch of an
earlier attempt or a rethink from scratch. The same code twice is caught here (a cycle)
and not run again."""

from __future__ import annotations

import ast
import hashlib
import json

from selfcorrect_action.llm.models import ChatMessage, ChatRequest
from selfcorrect_action.loop.codeblock import extract_code
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.feedback import render_packet
from selfcorrect_action.loop.inputs_preview import previews
from selfcorrect_action.loop.llm_step import RunEnded, call_or_end, metered, system_message
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
from selfcorrect_action.templating import render, shorten

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
    request = ChatRequest(
        purpose="repair" if step.strategy is Strategy.PATCH else "generate",
        tier=step.tier,
        messages=(system_message(state, "code"),
                  ChatMessage(role="user", content=_prompt(state, step, deps))),
    )
    outcome = call_or_end(state, llm, lambda: llm.complete(request))
    if isinstance(outcome, RunEnded):
        return outcome.state
    code = extract_code(outcome.text)
    refused = [] if code.strip() else [RejectedReply.of(
        request.purpose, "the answer held no Python code", outcome.text,
        outcome.finish_reason)]
    oversized = len(code) if len(code) > MAX_CODE_CHARS else None
    code = code[:MAX_CODE_CHARS]
    attempt = Attempt(
        index=index, strategy=step.strategy, tier=step.tier,
        model=outcome.model, code=code, code_sha=code_sha(code),
        base_attempt=step.base_attempt, reason=step.reason, llm_calls=llm.calls,
        rejected=refused,
    )
    attempt = _mark_cycle_or_empty(state, attempt, oversized=oversized)
    _say_what_came(deps, attempt)
    return evolve(state, {
        "attempts": [*state.attempts, attempt],
        "usage": count_retry(llm.usage, step.strategy),
        "next_step": None,
    })


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


def _prompt(state: RunState, step: NextStep, deps: Deps) -> str:
    common = {
        "prompt": state.spec.prompt,
        "contract_json": json.dumps(state.contract.model_dump(mode="json"), indent=2),
        "output_name": state.output_name,
        "tests": state.tests,
        "guidance": state.guidance,
        "inputs": previews(deps.inputs),
    }
    if step.strategy is Strategy.INITIAL:
        approach = state.plan.approach if state.plan else ""
        return render("prompts/generate.j2", approach=approach, **common)
    packet = state.attempts[-1].packet
    packet_text = render_packet(packet) if packet else ""
    if step.strategy is Strategy.PATCH and step.base_attempt is not None:
        base = state.attempts[step.base_attempt - 1]
        return render("prompts/repair.j2", base_code=base.code, base_attempt=base.index,
                      packet_text=packet_text, **common)
    return render("prompts/rethink.j2", packet_text=packet_text, **common)


def _mark_cycle_or_empty(state: RunState, attempt: Attempt, *, oversized: int | None = None
                         ) -> Attempt:
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
               if oversized else syntax_problem(attempt.code, state.output_name))
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
