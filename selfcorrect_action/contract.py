"""The execution contract: what a passing script must produce, and the limits it runs under.

Every later step uses this shape: the planner fills its gaps, the sandbox takes its limits,
layer 2 of the evaluation checks its artifacts and stdout expectations.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from selfcorrect_action import yamlio
from selfcorrect_action.choices import MAX_TIMEOUT_S
from selfcorrect_action.network_rules import NetworkPolicy

ArtifactKind = Literal["png", "jpeg", "svg", "csv", "json", "txt", "any"]

IMAGE_KINDS: frozenset[str] = frozenset({"png", "jpeg"})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ArtifactSpec(_Strict):
    path: str = Field(description="file the script must write, relative to its work dir")
    kind: ArtifactKind = "any"
    min_bytes: int | None = Field(default=None, ge=0, strict=True)
    max_bytes: int | None = Field(default=None, ge=1, strict=True)
    non_blank: bool = Field(default=False, strict=True,
                            description="images: pixel variance above a floor")
    columns: list[str] | None = Field(default=None, description="csv: header must contain these")
    min_rows: int | None = Field(default=None, ge=0, strict=True,
                                 description="csv: data rows, header excluded")
    required_keys: list[str] | None = Field(
        default=None, description="json: keys of the top-level object (a.b for nested)"
    )

    @field_validator("path")
    @classmethod
    def _relative_inside_work_dir(cls, value: str) -> str:
        pure = PurePosixPath(value)
        if not value.strip() or value.endswith("/") or str(pure) in (".", ""):
            raise ValueError("must name a file, e.g. chart.png")
        if any(ord(char) < 32 for char in value):
            raise ValueError("must not contain control characters")
        if pure.is_absolute() or ".." in pure.parts or "\\" in value:
            raise ValueError("must be a relative path inside the work dir, without '..'")
        return str(pure)

    @model_validator(mode="after")
    def _options_fit_kind(self) -> ArtifactSpec:
        misplaced = []
        if self.non_blank and self.kind not in IMAGE_KINDS:
            misplaced.append("non_blank (png, jpeg)")
        if (self.columns is not None or self.min_rows is not None) and self.kind != "csv":
            misplaced.append("columns/min_rows (csv)")
        if self.required_keys is not None and self.kind != "json":
            misplaced.append("required_keys (json)")
        if misplaced:
            raise ValueError(
                f"kind {self.kind!r} does not take {', '.join(misplaced)}: "
                "set kind to match or drop the option"
            )
        if self.min_bytes and self.max_bytes and self.min_bytes > self.max_bytes:
            raise ValueError("min_bytes is larger than max_bytes")
        return self


class ExecutionContract(_Strict):
    artifacts: list[ArtifactSpec] = Field(default_factory=list)
    # An empty string is in every output: as a check it could never fail.
    stdout_contains: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)
    # none, open, or {allow: [...]} / {observe: true} (network_rules.py): written by a person.
    network: NetworkPolicy = "none"
    # strict: YAML's `true` or "30" must be an error, not a silent 1 second or 30 seconds.
    timeout_s: float = Field(default=30, gt=0, le=MAX_TIMEOUT_S, strict=True,
                             allow_inf_nan=False)
    memory_mb: int = Field(default=512, ge=32, le=16384, strict=True)
    success_criteria: list[str] = Field(default_factory=list)
    # false: every attempt starts a fresh interpreter, never a warm one with the task's
    # libraries imported before the script came (sandbox/warm.py). Written by a person.
    warm: bool = Field(default=True, strict=True)

    @field_validator("artifacts")
    @classmethod
    def _unique_paths(cls, value: list[ArtifactSpec]) -> list[ArtifactSpec]:
        seen: set[str] = set()
        for artifact in value:
            if artifact.path in seen:
                raise ValueError(f"artifact {artifact.path!r} is listed twice")
            seen.add(artifact.path)
        return value


def load_contract(path: Path) -> ExecutionContract:
    """Read a contract YAML file; problems come back as SpecError with file:line:col."""
    return yamlio.load_model(ExecutionContract, path)
