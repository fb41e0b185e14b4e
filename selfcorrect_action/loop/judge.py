"""Layer 3: an LLM judge compares the outcome with the original intent. Its answer has a
strict format and it fails closed: anything but an unambiguous pass is a fail, including an
answer that stays malformed after the repair-retry. Its reasoning is kept for the audit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from selfcorrect_action.evaluation.artifact_preview import describe_artifacts
from selfcorrect_action.llm.errors import LLMStructuredOutputError
from selfcorrect_action.llm.models import ChatMessage, ChatRequest
from selfcorrect_action.llm.structured import Rejection, complete_json
from selfcorrect_action.loop.llm_step import system_message
from selfcorrect_action.loop.metered import MeteredLLM
from selfcorrect_action.loop.state import Attempt, JudgeOutcome, RejectedReply, RunState
from selfcorrect_action.markdown import defang_fences
from selfcorrect_action.templating import render

STDOUT_TAIL_LINES = 40


class JudgeAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    verdict: Literal["pass", "fail"]
    reasoning: str = Field(min_length=1, max_length=6000)
    unmet_criteria: list[str] = Field(default_factory=list)


def judge(state: RunState, attempt: Attempt, llm: MeteredLLM,
          on_retry: Callable[[str], None] | None = None
          ) -> tuple[JudgeOutcome, list[RejectedReply]]:
    """The judge's outcome and the answers of its refused on the way. Raises
    BudgetExhausted when the budget cannot pay for the judge."""
    execution = attempt.execution
    request = ChatRequest(purpose="judge", tier="judge", messages=(
        system_message(state, "judge"), ChatMessage(role="user", content=render(
            "prompts/judge.j2", prompt=state.spec.prompt,
            criteria=state.contract.success_criteria, code=attempt.code,
            stdout=_tail(execution.stdout.text if execution else ""),
            artifacts=describe_artifacts(execution.artifacts if execution else []),
        )),),
    )
    try:
        answer = complete_json(llm, request, JudgeAnswer, on_retry=on_retry)
    except LLMStructuredOutputError as exc:
        return JudgeOutcome(passed=False, reasoning=f"the judge's answer was unreadable twice "
                            f"({exc.message}); failing closed", raw_verdict="unreadable"
                            ), _rejected(exc.rejected)
    return outcome_of(answer.value), _rejected(answer.rejected)


def _rejected(rejections: tuple[Rejection, ...]) -> list[RejectedReply]:
    return [RejectedReply.of("judge", r.reason, r.text, r.finish_reason) for r in rejections]


def outcome_of(answer: JudgeAnswer) -> JudgeOutcome:
    """A pass that still lists unmet criteria is ambiguous, and ambiguity fails."""
    unmet = [item.strip() for item in answer.unmet_criteria if item.strip()]
    passed = answer.verdict == "pass" and not unmet
    reasoning = answer.reasoning.strip()
    if answer.verdict == "pass" and unmet:
        reasoning += " [failed closed: the judge said pass but listed unmet criteria]"
    return JudgeOutcome(passed=passed, reasoning=reasoning, unmet_criteria=unmet,
                        raw_verdict=answer.verdict)


def _tail(text: str) -> str:
    lines = text.rstrip().splitlines()[-STDOUT_TAIL_LINES:]
    return defang_fences("\n".join(line[:300] for line in lines)) or "(nothing)"
