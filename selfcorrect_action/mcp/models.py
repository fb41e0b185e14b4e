"""The MCP tools' own results (the runs the server holds, their audit trail, errors); the
results of a run, a script and a validation are the API's (api/results.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from selfcorrect_action.api.results import RunResult
from selfcorrect_action.errors import SelfcorrectError


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ErrorInfo(_Model):
    """An expected failure: the object `selfcorrect ... --json` prints for one."""

    error: str
    hint: str | None = None
    exit_code: int

    @classmethod
    def of(cls, exc: SelfcorrectError) -> ErrorInfo:
        return cls(error=exc.message, hint=exc.hint, exit_code=exc.exit_code)


class ProgressLine(_Model):
    """One step of the loop, as `selfcorrect run` prints it."""

    index: int = Field(description="1 for the first line of the run, then 2, 3...")
    step: str = Field(description="plan, generate, execute, evaluate, llm, sandbox, done...")
    message: str


class RunProgress(_Model):
    """A run the server was given: where it stands, what it said, how it ended."""

    run_id: str
    task: str = Field(description="what was run: a spec's source, or the prompt's first line")
    phase: Literal["queued", "running", "finished", "cancelled"] = Field(
        description="cancelled: stopped before it started (a run stopped while running "
        "finishes, its result's status cancelled, interrupted_by 'cancelled')")
    waiting_before: int | None = Field(
        default=None, description="while queued: how many runs must end before it starts "
        "(those running and those queued before it, less the server's free places)")
    folder: str = Field(description="where its run.json, AUDIT.md and script are written")
    progress: list[ProgressLine] = Field(description="its latest progress lines")
    progress_total: int = Field(description="how many progress lines it has said")
    result: RunResult | None = None
    error: ErrorInfo | None = Field(default=None,
                                    description="why it could not run (no Docker engine...)")


class RunSummary(_Model):
    """One run of the root's, from its run.json in the server's runs folder."""

    run_id: str
    status: str = Field(description="passed, exhausted, stopped, cancelled, error; or "
                        "queued, running (or cancelled before it started) for a run of this "
                        "server that has no run.json yet")
    task: str
    started_at: str | None = None
    finished_at: str | None = None
    attempts: int = 0
    tokens: int = 0
    cost_usd: float | None = None
    run_json: str | None = None
    audit: str | None = None
    problem: str | None = Field(default=None, description="why its run.json could not be read")


class RunList(_Model):
    runs: list[RunSummary] = Field(description="the latest first")
    folder: str = Field(description="the folder they are kept in: the root's, in the "
                        "server's history folder")


class Audit(_Model):
    run_id: str
    audit_md: str = Field(description="AUDIT.md: every attempt, its code, what failed, the "
                          "model calls and their cost")
    audit: str
    run_json: str
