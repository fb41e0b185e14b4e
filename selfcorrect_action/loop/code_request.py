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
from dataclasses import dataclass

from selfcorrect_action.llm.models import ChatMessage, ChatRequest, Purpose
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.feedback import render_packet
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


@dataclass(frozen=True)
class CodeRequest:
    request: ChatRequest
    prompt: str  # the text we wrote (what an echo repeats)
    prefix: str = ""  # completion mode: the code the answer continues


def code_request(state: RunState, step: NextStep, deps: Deps) -> CodeRequest:
    purpose: Purpose = "repair" if step.strategy is Strategy.PATCH else "generate"
    temperature = temperature_for(state)
    target = target_of(state)
    if state.generation == "completion" and target is not None and target.head:
        prefix = _completion_prefix(state, step, target)
        return CodeRequest(ChatRequest(
            purpose=purpose, tier=step.tier, mode="completion", stop=SERVER_STOPS,
            messages=(ChatMessage(role="user", content=prefix),), temperature=temperature,
            max_tokens=COMPLETION_MAX_TOKENS), prefix, prefix)
    if state.profile == "small":
        prompt = _small_prompt(state, step, target)
        system = ChatMessage(role="system", content=render("prompts/system/code_small.j2"))
        return CodeRequest(ChatRequest(
            purpose=purpose, tier=step.tier, temperature=temperature,
            max_tokens=SMALL_MAX_TOKENS,
            messages=(system, ChatMessage(role="user", content=prompt))), prompt)
    prompt = _standard_prompt(state, step, deps)
    return CodeRequest(ChatRequest(
        purpose=purpose, tier=step.tier, temperature=temperature,
        messages=(system_message(state, "code"), ChatMessage(role="user", content=prompt))),
        prompt)


def _standard_prompt(state: RunState, step: NextStep, deps: Deps) -> str:
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
    packet_text = _packet_text(state)
    if step.strategy is Strategy.PATCH and step.base_attempt is not None:
        base = state.attempts[step.base_attempt - 1]
        return render("prompts/repair.j2", base_code=base.code, base_attempt=base.index,
                      packet_text=packet_text, **common)
    return render("prompts/rethink.j2", packet_text=packet_text, **common)


def cut_at_stops(continuation: str) -> str:
    """The continuation up to the first stop (a server may not have stopped at all)."""
    ends = [found for stop in COMPLETION_STOPS if (found := continuation.find(stop)) >= 0]
    return continuation[: min(ends)] if ends else continuation


def _small_prompt(state: RunState, step: NextStep, target: FunctionTarget | None) -> str:
    base = (state.attempts[step.base_attempt - 1].code
            if step.strategy is Strategy.PATCH and step.base_attempt is not None else "")
    return render("prompts/small/code.j2", strategy=step.strategy.value, target=target,
                  prompt=state.spec.prompt, output_name=state.output_name,
                  artifacts=[a.path for a in state.contract.artifacts],
                  stdout=state.contract.stdout_contains, base_code=base,
                  packet=_last_packet(state), guidance=state.guidance)


def _completion_prefix(state: RunState, step: NextStep, target: FunctionTarget) -> str:
    """The code to continue: the function's start, after comments saying what failed."""
    text = render("prompts/completion.py.j2", head=target.head, packet=_last_packet(state),
                  strategy=step.strategy.value)
    return text.strip("\n") + "\n"  # the model continues on the line after the docstring


def _last_packet(state: RunState) -> RepairPacket | None:
    return state.attempts[-1].packet if state.attempts else None


def _packet_text(state: RunState) -> str:
    packet = _last_packet(state)
    return render_packet(packet) if packet else ""
