"""What a repair run records in the run state (loop/state.py holds them): the repository it
ran against, the baseline taken before any model call, and the tests that must pass.

Plain records: the decisions over them are repair/baseline.py's and repair/verdict.py's.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from selfcorrect_action.sandbox.models import ExecutionResult
from selfcorrect_action.taxonomy import TestOutcome

# How the repository's suite meets the rewritten code (the audit says it): pytest imports
# the package into its own process, as the repository runs it; no plain-data boundary fits
# a whole test suite, so the rewritten files are scanned for tampering before they run.
IN_PROCESS = "in-process"


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Baseline(_Record):
    """The test command's outcome on the unchanged repository, run twice. A test whose
    result differs between the two runs is flaky: never a target on its own, and left out
    of the regression check (the report names it)."""

    passing: list[str] = Field(default_factory=list)  # passed both times
    failing: list[str] = Field(default_factory=list)  # failed (or errored) both times
    skipped: list[str] = Field(default_factory=list)
    flaky: list[str] = Field(default_factory=list)
    # The second run's failing tests, with their assertion and traceback: what the plan and
    # the first generation are told.
    failing_outcomes: list[TestOutcome] = Field(default_factory=list)
    # Repository files the unchanged suite itself modifies: not held against a repair.
    changed: list[str] = Field(default_factory=list)
    runs: list[ExecutionResult] = Field(default_factory=list)


class ReviewOutcome(_Record):
    """The reviewer's word on one change, before it ran."""

    approved: bool
    reasons: str
    raw_verdict: str = ""


class RepairRecord(_Record):
    """The repository a repair ran against and what it had to achieve."""

    allowed: list[str]  # files of the repository the `files:` globs let the model rewrite
    repository_files: int
    repository_bytes: int
    listed_by: str  # "git" (git's list of files) or "walk"
    left_out: list[str] = Field(default_factory=list)  # links, files gone from the work tree
    image: str = ""  # the derived sandbox image when the spec names requirements
    isolation: str = IN_PROCESS
    baseline: Baseline | None = None
    # The test ids that must pass: those `failing_tests` selects at baseline, else the ones
    # failing in both baseline runs.
    targets: list[str] = Field(default_factory=list)
