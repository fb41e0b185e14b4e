"""The request a generation sends: its messages (or, in completion mode, the code to
continue), temperature, answer length and stops, by the run's profile and generation.
Pure: the prompts are Jinja2 templates in templates/prompts/.

- standard, chat: the system prompt of the coder and the full task (contract, inputs,
  frozen tests), as before.
- small, chat: a short system prompt and one instruction per message; a function's own
  code (imports, `def` line, docstring) is given as the start of the answer (issue 21).
- completion (`kind: function`): the model continues the function's code from its
  docstring, as HumanEval is designed; a repair puts the failure in comments above it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from selfcorrect_action.llm.models import ChatMessage, ChatRequest, Purpose
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.feedback import render_packet, smallest
from selfcorrect_action.loop.function_target import FunctionTarget, target_of
from selfcorrect_action.loop.inputs_preview import previews
from selfcorrect_action.loop.llm_step import system_message
from selfcorrect_action.loop.sampling import temperature_for
from selfcorrect_action.loop.state import NextStep, RepairPacket, RunState, Strategy
from selfcorrect_action.templating import render

# A completion ends where the function does: the next statement at column 0. The OpenAI
# API (and litellm) take at most 4 stops: those go to the server, and the continuation is
# cut at the first of all of them here.
SERVER_STOPS = ("\ndef ", "\nclass ", "\nif __name__", "```")
COMPLETION_STOPS = (*SERVER_STOPS, "\nprint(", "\nassert ", "\n#", "\n@")
SMALL_MAX_TOKENS = 768
COMPLETION_MAX_TOKENS = 512


# What a prompt that does not fit the model's context window leaves out, in this order
# (issue 38): each level leaves out what the one before did and one thing more, the least
# needed first. A repair told less about its failure still sees the code it repairs; one
# without the code rewrites the file from the task, as a rethink does.
TRIMS = ("the input files' previews", "the failure's evidence beyond its first lines",
         "the previous code (the repair rewrites the file)", "the frozen tests' bodies")
LEFT_OUT = "(left out to fit the model's context window)"


@dataclass(frozen=True)
class CodeRequest:
    request: ChatRequest
    prompt: str  # the text we wrote (what an echo repeats)
    prefix: str = ""  # completion mode: the code the answer continues
    trimmed: tuple[str, ...] = ()  # what was left out to fit the context window (TRIMS)


def code_request(state: RunState, step: NextStep, deps: Deps, *, trim: int = 0
                 ) -> CodeRequest:
    """The request for `step`; `trim` (0 to len(TRIMS)) leaves out the first `trim` of
    TRIMS, for a model whose window the whole prompt does not fit."""
    purpose: Purpose = "repair" if step.strategy is Strategy.PATCH else "generate"
    temperature = temperature_for(state)
    target = target_of(state)
    trimmed = TRIMS[:trim]
    if trim >= 3 and step.strategy is Strategy.PATCH:
        step = NextStep(strategy=Strategy.RETHINK, tier=step.tier, reason=step.reason)
    if state.generation == "completion" and target is not None and target.head:
        prefix = _completion_prefix(state, step, target, trim=trim)
        return CodeRequest(ChatRequest(
            purpose=purpose, tier=step.tier, mode="completion", stop=SERVER_STOPS,
            messages=(ChatMessage(role="user", content=prefix),), temperature=temperature,
            max_tokens=COMPLETION_MAX_TOKENS), prefix, prefix, trimmed)
    if state.profile == "small":
        prompt = _small_prompt(state, step, target, trim=trim)
        system = ChatMessage(role="system", content=render("prompts/system/code_small.j2"))
        return CodeRequest(ChatRequest(
            purpose=purpose, tier=step.tier, temperature=temperature,
            max_tokens=SMALL_MAX_TOKENS,
            messages=(system, ChatMessage(role="user", content=prompt))), prompt,
            trimmed=trimmed)
    prompt = _standard_prompt(state, step, deps, trim=trim)
    return CodeRequest(ChatRequest(
        purpose=purpose, tier=step.tier, temperature=temperature,
        messages=(system_message(state, "code"), ChatMessage(role="user", content=prompt))),
        prompt, trimmed=trimmed)


def _standard_prompt(state: RunState, step: NextStep, deps: Deps, *, trim: int = 0) -> str:
    inputs = previews(deps.inputs)
    if trim >= 1:
        inputs = [replace(item, preview=LEFT_OUT) for item in inputs]
    tests = state.tests if trim < 4 else {name: f"# {LEFT_OUT}" for name in state.tests}
    common = {
        "prompt": state.spec.prompt,
        "contract_json": json.dumps(state.contract.model_dump(mode="json"),
                                    indent=2 if trim < 4 else None),
        "output_name": state.output_name,
        "tests": tests,
        "guidance": state.guidance,
        "inputs": inputs,
    }
    if step.strategy is Strategy.INITIAL:
        approach = state.plan.approach if state.plan else ""
        return render("prompts/generate.j2", approach=approach, **common)
    packet_text = _packet_text(state, trim=trim)
    if step.strategy is Strategy.PATCH and step.base_attempt is not None:
        base = state.attempts[step.base_attempt - 1]
        return render("prompts/repair.j2", base_code=base.code, base_attempt=base.index,
                      packet_text=packet_text, **common)
    return render("prompts/rethink.j2", packet_text=packet_text, **common)


def cut_at_stops(continuation: str) -> str:
    """The continuation up to the first stop (a server may not have stopped at all)."""
    ends = [found for stop in COMPLETION_STOPS if (found := continuation.find(stop)) >= 0]
    return continuation[: min(ends)] if ends else continuation


def _small_prompt(state: RunState, step: NextStep, target: FunctionTarget | None, *,
                  trim: int = 0) -> str:
    base = (state.attempts[step.base_attempt - 1].code
            if step.strategy is Strategy.PATCH and step.base_attempt is not None else "")
    return render("prompts/small/code.j2", strategy=step.strategy.value, target=target,
                  prompt=state.spec.prompt, output_name=state.output_name,
                  artifacts=[a.path for a in state.contract.artifacts],
                  stdout=state.contract.stdout_contains, base_code=base,
                  packet=_last_packet(state, trim=trim), guidance=state.guidance)


def _completion_prefix(state: RunState, step: NextStep, target: FunctionTarget, *,
                       trim: int = 0) -> str:
    """The code to continue: the function's start, after comments saying what failed."""
    text = render("prompts/completion.py.j2", head=target.head,
                  packet=_last_packet(state, trim=trim) if trim < 3 else None,
                  strategy=step.strategy.value)
    return text.strip("\n") + "\n"  # the model continues on the line after the docstring


def _last_packet(state: RunState, *, trim: int = 0) -> RepairPacket | None:
    packet = state.attempts[-1].packet if state.attempts else None
    return smallest(packet) if packet is not None and trim >= 2 else packet


def _packet_text(state: RunState, *, trim: int = 0) -> str:
    packet = _last_packet(state, trim=trim)
    return render_packet(packet) if packet else ""
