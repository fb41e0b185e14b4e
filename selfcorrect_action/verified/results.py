"""What `selfcorrect check` says of each spec: the list `--json` prints, and what the
summary table (templates/reports/check_summary.txt.j2) renders. Every string in it is
redacted by whoever builds it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from selfcorrect_action.verified.check import CheckStatus


class ScriptLine(BaseModel):
    """A line of the committed script a failure points at (a traceback's frame in it)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    line: int = Field(ge=1)
    message: str


class JudgeResult(BaseModel):
    """--judge: what the judge said of a stale spec's script, asked with its new prompt, and
    what that cost."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    verdict: Literal["pass", "fail"] | None = Field(description="None: not answered (the "
                                                     "spec's budget stopped the call)")
    reasoning: str = Field(description="the judge's reasons, or why it did not answer")
    model: str = Field(description="the judge tier's model, as a run of the spec resolves it")
    calls: int = Field(ge=0, description="model calls made (a malformed answer is asked "
                       "again once)")
    tokens: int = Field(ge=0)
    cost_usd: float | None = Field(description="None: no price is known for the model")


class CheckResult(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    spec: str = Field(description="the spec file, relative to the repository root (for an "
                      "orphaned record: the spec it names)")
    status: CheckStatus
    record: str | None = Field(default=None, description="its verification record, if any")
    script: str | None = Field(default=None, description="the script the spec's output names")
    changes: list[str] = Field(default_factory=list, description="what changed since the "
                               "record, e.g. 'input data/sales.csv (changed)'")
    reverified: Literal["passed", "failed"] | None = Field(
        default=None, description="the committed script's verdict in the sandbox; None when "
        "it did not run")
    failed_layer: str | None = None
    category: str | None = None
    evidence: str = ""
    took_ms: int | None = Field(default=None, description="the re-verification, from asking "
                                "for its container to the verdict")
    sandbox_ms: int | None = Field(default=None, description="how long the script, then its "
                                   "tests, ran in their containers")
    no_docker: bool = Field(default=False, description="a change that could not be "
                            "re-verified: no Docker engine answered")
    lock: Literal["updated", "written"] | None = Field(
        default=None, description="--update-lock: the record rewritten with today's digests "
        "(updated), or a first record written (written)")
    problems: list[str] = Field(default_factory=list, description="invalid: the located "
                                "problems of the spec or its record")
    locations: list[ScriptLine] = Field(default_factory=list, description="fails: the "
                                        "script's lines the failure's traceback points at")
    judge: JudgeResult | None = Field(default=None, description="--judge, a stale spec "
                                      "whose re-verification passed: the judge's answer")
