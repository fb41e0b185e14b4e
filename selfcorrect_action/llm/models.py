"""The data that crosses the LLM seam: what the loop asks for and what it gets back."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Tier = Literal["cheap", "strong", "judge", "review"]
Purpose = Literal["plan", "generate", "repair", "judge", "review"]
Role = Literal["system", "user", "assistant"]
ResponseFormat = Literal["text", "json"]
# chat: the messages are a conversation; completion: the last (user) message is text for the
# model to continue, sent to a text-completion endpoint (/v1/completions).
RequestMode = Literal["chat", "completion"]


class ModelTiers(BaseModel):
    """litellm model names per tier, e.g. ``openai/gpt-4o-mini``; a request names a tier."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cheap: str = "openai/gpt-4o-mini"
    strong: str = "openai/gpt-4o"
    judge: str = "openai/gpt-4o-mini"
    # A repair's reviewer (kind repair); None: the judge's model reviews.
    review: str | None = None

    def for_tier(self, tier: Tier) -> str:
        if tier == "review":
            return self.review or self.judge
        return str(getattr(self, tier))


# A downscaled image is a few hundred KB at most (evaluation/images.judge_image): anything
# bigger is not one of ours.
MAX_IMAGE_BASE64_CHARS = 1_400_000


class ImageAttachment(BaseModel):
    """An image sent with a message (to a model that accepts images): base64 PNG or JPEG."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    media_type: Literal["image/png", "image/jpeg"]
    data: str = Field(max_length=MAX_IMAGE_BASE64_CHARS)
    label: str = ""  # what it is, e.g. the artifact's path

    @property
    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.data}"


class ChatMessage(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    content: str
    images: tuple[ImageAttachment, ...] = ()


class ChatRequest(BaseModel):
    """One chat completion to run. Give a ``tier`` (usual) or an explicit litellm ``model``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    purpose: Purpose
    messages: tuple[ChatMessage, ...] = Field(min_length=1)
    tier: Tier | None = None
    model: str | None = None
    # None leaves the provider's default: some reasoning models reject any other value.
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    max_tokens: int | None = Field(default=None, gt=0)
    response_format: ResponseFormat = "text"
    # The JSON Schema a "json" answer must match, for providers that enforce one (the
    # answer is validated against the full model either way).
    json_schema: dict[str, Any] | None = None
    schema_name: str = ""
    mode: RequestMode = "chat"
    stop: tuple[str, ...] = ()  # where the model stops writing (completion mode's ends)

    @model_validator(mode="after")
    def _tier_or_model(self) -> ChatRequest:
        if (self.tier is None) == (self.model is None):
            raise ValueError("give exactly one of tier or model")
        if self.mode == "completion" and (len(self.messages) != 1
                                          or self.messages[0].role != "user"):
            raise ValueError("a completion request holds one user message: the text to "
                             "continue")
        return self

    @property
    def completion_prompt(self) -> str:
        """The text a completion request continues."""
        return self.messages[-1].content

    @property
    def target(self) -> str:
        """The tier, or the explicit model: what replay checks and what logs name."""
        return self.tier or f"model {self.model}"


class ChatResponse(BaseModel):
    """A completed chat call. ``cost_usd`` is 0 with ``cost_known=False`` for unpriced models."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    model: str
    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)
    cost_usd: float = Field(ge=0.0)
    cost_known: bool
    latency_ms: int = Field(ge=0)
    finish_reason: str | None = None
    replayed: bool = False
    # Played back from the earlier run's recording when a run was resumed (issue 37): paid
    # for by that run, not a model's answer now.
    resumed: bool = False

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens
