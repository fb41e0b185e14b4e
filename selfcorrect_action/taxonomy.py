"""The seven failure categories and the verdict shapes evaluation produces (shared by the
evaluation layers and the loop's state, so evaluation never imports the loop)."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Category(StrEnum):
    ENVIRONMENT = "environment"  # ModuleNotFoundError, missing system tool
    SYNTAX = "syntax"  # SyntaxError / IndentationError, unparsable output
    RUNTIME = "runtime"  # exception in the candidate's own code, failing assertion
    RESOURCE = "resource"  # timeout, OOM kill, pids/fd/disk limits
    EXTERNAL = "external"  # network refused/DNS, blocked site, missing input data
    CONTRACT = "contract"  # ran fine but artifacts/tests/stdout miss the contract
    SEMANTIC = "semantic"  # the judge says it does not do what was asked


Layer = Literal["execution", "contract", "semantic"]


class Check(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    passed: bool
    detail: str = ""


class Verdict(BaseModel):
    """The outcome of evaluating one execution, layer by layer, stopping at the first failure."""

    model_config = ConfigDict(frozen=True)

    passed: bool
    failed_layer: Layer | None = None
    category: Category | None = None
    evidence: str = ""
    checks: list[Check] = Field(default_factory=list)


class TestOutcome(BaseModel):
    """One spec test's result, distilled from pytest's junit XML."""

    __test__ = False  # a record, not a test class: keeps pytest from collecting it by name
    model_config = ConfigDict(frozen=True, extra="forbid")

    test_id: str
    outcome: Literal["passed", "failed", "error", "skipped"]
    message: str = ""
    detail: str = ""  # the assertion / exception part of pytest's report, bounded
