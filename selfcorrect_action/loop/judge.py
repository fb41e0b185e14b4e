"""Layer 3: an LLM judge compares the outcome with the original intent. Its answer has a
strict format and it fails closed: anything but an unambiguous pass is a fail, including an
answer that stays malformed after the repair-retry. Its reasoning is kept for the audit."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from selfcorrect_action.evaluation.artifact_preview import describe_artifacts
from selfcorrect_action.evaluation.images import judge_image
from selfcorrect_action.evaluation.sniff import detect_kind
from selfcorrect_action.llm.errors import LLMStructuredOutputError
from selfcorrect_action.llm.models import ChatMessage, ChatRequest, ImageAttachment
from selfcorrect_action.llm.structured import Rejection, complete_json
from selfcorrect_action.loop.budget import PromptTooLong
from selfcorrect_action.loop.llm_step import system_message
from selfcorrect_action.loop.metered import MeteredLLM
from selfcorrect_action.loop.state import Attempt, JudgeOutcome, RejectedReply, RunState
from selfcorrect_action.markdown import defang_fences
from selfcorrect_action.sandbox.models import ArtifactRecord
from selfcorrect_action.templating import render

STDOUT_TAIL_LINES = 40


class JudgeAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    verdict: Literal["pass", "fail"]
    reasoning: str = Field(min_length=1, max_length=6000)
    unmet_criteria: list[str] = Field(default_factory=list)


def judge(state: RunState, attempt: Attempt, llm: MeteredLLM,
          on_retry: Callable[[str], None] | None = None, *, sees_images: bool = False,
          ) -> tuple[JudgeOutcome, list[RejectedReply]]:
    """The judge's outcome and the answers it refused on the way. A judge model that
    accepts images is sent the image artifacts themselves (issue 8: told only their
    dimensions and to fail what it cannot verify, it would reject a correct chart).
    Raises BudgetExhausted when the budget cannot pay for the judge."""
    execution = attempt.execution
    records = execution.artifacts if execution else []
    images = judge_images(records) if sees_images else []
    request = ChatRequest(purpose="judge", tier="judge", messages=(
        system_message(state, "judge"), ChatMessage(role="user", content=render(
            "prompts/judge.j2", prompt=state.spec.prompt,
            criteria=state.contract.success_criteria, code=attempt.code,
            stdout=_tail(execution.stdout.text if execution else ""),
            artifacts=describe_artifacts(records), sees_images=sees_images,
            attached=[image.label for image in images],
        ), images=tuple(images)),),
    )
    try:
        answer = complete_json(llm, request, JudgeAnswer, on_retry=on_retry)
    except PromptTooLong as exc:
        return JudgeOutcome(passed=False, reasoning="the judge could not be asked: its prompt "
                            f"does not fit the model's context window ({exc.message}); "
                            "failing closed", raw_verdict="unasked"), []
    except LLMStructuredOutputError as exc:
        return JudgeOutcome(passed=False, reasoning=f"the judge's answer was unreadable twice "
                            f"({exc.message}); failing closed", raw_verdict="unreadable"
                            ), _rejected(exc.rejected)
    return outcome_of(answer.value), _rejected(answer.rejected)


MAX_JUDGE_IMAGES = 3


def judge_images(records: list[ArtifactRecord]) -> list[ImageAttachment]:
    """The first few PNG and JPEG artifacts, checked and downscaled for the judge."""
    attached: list[ImageAttachment] = []
    for record in records:
        if len(attached) >= MAX_JUDGE_IMAGES:
            break
        if record.host_path is None or record.path.startswith("."):
            continue
        path = Path(str(record.host_path))
        image = judge_image(path, detect_kind(path))
        if image is None:
            continue
        attached.append(ImageAttachment(
            media_type=image.media_type,  # type: ignore[arg-type]  # png or jpeg only
            data=base64.b64encode(image.data).decode("ascii"),
            label=f"{record.path} ({image.original[0]}x{image.original[1]}, shown at "
                  f"{image.width}x{image.height})"))
    return attached


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
