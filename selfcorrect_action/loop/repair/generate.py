"""GENERATE (kind repair): whole files, among those the spec allows. An answer that names
any other file (a test, a conftest, something outside `files:`) is refused and counts as a
failed attempt, as does one that does not parse or changes nothing; none of them runs. The
diff against the repository is computed afterwards, for the reviewer and the audit."""

from __future__ import annotations

import ast
import hashlib
import json

from selfcorrect_action.llm.models import ChatMessage, ChatRequest
from selfcorrect_action.loop.budget import estimate_tokens
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.feedback import render_packet
from selfcorrect_action.loop.generate import INITIAL, count_retry
from selfcorrect_action.loop.llm_step import RunEnded, call_or_end, metered
from selfcorrect_action.loop.metered import DEFAULT_MAX_TOKENS
from selfcorrect_action.loop.repair.context import current_files, originals, record
from selfcorrect_action.loop.repair.plan import target_failures
from selfcorrect_action.loop.state import (
    Attempt,
    NextStep,
    RejectedReply,
    RunState,
    Strategy,
)
from selfcorrect_action.records import evolve
from selfcorrect_action.repair.answer import parse_answer, unified_diff
from selfcorrect_action.repair.files import refusal
from selfcorrect_action.taxonomy import Category, Check, Verdict
from selfcorrect_action.templating import render, shorten

ANSWER_MARGIN_TOKENS = 1_000


def generate_repair(state: RunState, deps: Deps) -> RunState:
    step = state.next_step or INITIAL
    index = len(state.attempts) + 1
    deps.on_event("generate", f"attempt {index}/{state.max_attempts}: {step.strategy.value} "
                  f"with the {step.tier} model")
    llm = metered(state, deps)
    base = state.attempts[step.base_attempt - 1] if (
        step.strategy is Strategy.PATCH and step.base_attempt is not None) else None
    shown = _shown(state, deps, base)
    request = ChatRequest(
        purpose="repair" if step.strategy is Strategy.PATCH else "generate", tier=step.tier,
        max_tokens=answer_tokens(shown),
        messages=(ChatMessage(role="system", content=render("prompts/system/repair.j2")),
                  ChatMessage(role="user", content=_prompt(state, step, base, shown))))
    outcome = call_or_end(state, llm, lambda: llm.complete(request))
    if isinstance(outcome, RunEnded):
        return outcome.state
    parsed = parse_answer(outcome.text, only_file=next(iter(shown)) if len(shown) == 1
                          else None)
    files = _merged(state, deps, base, parsed.files)
    attempt = Attempt(
        index=index, strategy=step.strategy, tier=step.tier, model=outcome.model, code="",
        code_sha=files_sha(files), base_attempt=step.base_attempt, reason=step.reason,
        llm_calls=llm.calls, files=files, diff=unified_diff(originals(state, deps), files))
    attempt = _cycle(state, attempt)
    verdict = None if attempt.cycle_of else _refused(state, parsed.files, parsed.problems,
                                                     files)
    if verdict is not None:
        attempt = evolve(attempt, {"verdict": verdict, "rejected": [RejectedReply.of(
            request.purpose, verdict.evidence, outcome.text, outcome.finish_reason)]})
    _say(deps, attempt)
    return evolve(state, {"attempts": [*state.attempts, attempt],
                          "usage": count_retry(llm.usage, step.strategy), "next_step": None})


def answer_tokens(shown: dict[str, str]) -> int:
    """Room for the answer: whole files come back whole, so the files shown, with a margin
    for edits and the lines around them (never less than a script's answer gets). The
    model's own output limit and the budget still cap it (loop/metered.py)."""
    return max(DEFAULT_MAX_TOKENS["generate"],
               estimate_tokens("".join(shown.values())) * 5 // 4 + ANSWER_MARGIN_TOKENS)


def files_sha(files: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()


def _shown(state: RunState, deps: Deps, base: Attempt | None) -> dict[str, str]:
    """The files the prompt shows whole: those the plan named, and those earlier attempts
    rewrote, as `base` left them."""
    current = current_files(state, deps, base)
    planned = state.plan.files if state.plan else []
    touched = [path for attempt in state.attempts for path in attempt.files]
    names = [path for path in dict.fromkeys([*planned, *touched]) if path in current]
    return {path: current[path] for path in names or record(state).allowed[:1]}


def _prompt(state: RunState, step: NextStep, base: Attempt | None, shown: dict[str, str]
            ) -> str:
    packet = state.attempts[-1].packet if state.attempts else None
    shown_from = (f"The files as attempt {base.index} left them (the repository's where it "
                  "changed nothing)" if base is not None else "The files as the repository "
                  "holds them")
    return render("prompts/repair/generate.j2", prompt=state.spec.prompt,
                  guidance=state.guidance,
                  failing=target_failures(state) if step.strategy is Strategy.INITIAL else [],
                  approach=state.plan.approach if state.plan else "",
                  allowed=record(state).allowed, shown=shown, shown_from=shown_from,
                  packet_text=render_packet(packet) if packet else "")


def _merged(state: RunState, deps: Deps, base: Attempt | None, answered: dict[str, str]
            ) -> dict[str, str]:
    """The attempt's files: a patch keeps what its base rewrote and the answer did not
    repeat (never a file its base was refused for); only files that differ from the
    repository are kept."""
    source = originals(state, deps)
    kept = {path: text for path, text in (base.files if base is not None else {}).items()
            if path in source}
    files = {**kept, **answered}
    return {path: text for path, text in sorted(files.items())
            if path not in source or source[path] != text}


def _refused(state: RunState, answered: dict[str, str], problems: list[str],
             files: dict[str, str]) -> Verdict | None:
    """Why the attempt fails without running, or None."""
    repair = record(state)
    refused = [why for path in answered
               if (why := refusal(path, repair.allowed, state.spec.files)) is not None]
    if refused:
        return _failed(Category.CONTRACT, "the answer rewrote files it may not (refused, "
                       "not run): " + "; ".join(refused), "allowed files")
    if problems:
        return _failed(Category.SYNTAX, "the answer could not be read: " + "; ".join(problems),
                       "files readable")
    if not answered:
        return _failed(Category.SYNTAX, "the answer held no file: write `File: <path>` and "
                       "the whole file in a fenced block", "files readable")
    for path, text in files.items():
        problem = file_syntax_problem(text, path)
        if problem is not None:
            return _failed(Category.SYNTAX, problem, "parses as Python")
    if not files:
        return _failed(Category.CONTRACT, "the answer changed nothing: every file it gave is "
                       "the same as the repository's", "changes something")
    return None


def file_syntax_problem(code: str, path: str) -> str | None:
    try:
        ast.parse(code, filename=path)
    except SyntaxError as exc:
        line = (exc.text or "").strip()
        return (f"{type(exc).__name__}: {exc.msg} at {path}:{exc.lineno}"
                + (f": {line[:200]}" if line else ""))
    except ValueError as exc:  # null bytes
        return f"SyntaxError: {exc} in {path}"
    return None


def _failed(category: Category, evidence: str, check: str) -> Verdict:
    return Verdict(passed=False, failed_layer="execution" if category is Category.SYNTAX
                   else "contract", category=category, evidence=evidence[:1200],
                   checks=[Check(name=check, passed=False, detail=evidence[:600])])


def _cycle(state: RunState, attempt: Attempt) -> Attempt:
    """The same files as an earlier attempt: they would fail the same way, so they are not
    run again; the verdict is the earlier one's."""
    for earlier in state.attempts:
        if earlier.code_sha == attempt.code_sha and earlier.cycle_of is None:
            return evolve(attempt, {"cycle_of": earlier.index, "verdict": earlier.verdict,
                                    "progress": earlier.progress, "tests": earlier.tests,
                                    "regressions": earlier.regressions})
    return attempt


def _say(deps: Deps, attempt: Attempt) -> None:
    if attempt.cycle_of is not None:
        said = f"the same change as attempt {attempt.cycle_of}: not run again"
    elif attempt.verdict is not None:
        said = (f"{attempt.verdict.category} failure found without running it: "
                + shorten(attempt.verdict.evidence, 160))
    else:
        said = f"rewrote {', '.join(attempt.files)}"
    deps.on_event("generate", f"attempt {attempt.index}: {said}")
