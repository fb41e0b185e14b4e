"""What the API hands back, as pydantic models: the same shapes `selfcorrect run --json`,
`selfcorrect exec --json` and `selfcorrect validate` show, and the MCP tools' output schemas
(generated from these models). Every string in them is redacted."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from selfcorrect_action.evaluation.sniff import detect_kind
from selfcorrect_action.loop.state import Status
from selfcorrect_action.redact import redact_data
from selfcorrect_action.report.view import cautions
from selfcorrect_action.runs.publish import FolderRun
from selfcorrect_action.sandbox.egress.records import NetworkLog
from selfcorrect_action.sandbox.models import ArtifactRecord, ExecutionResult
from selfcorrect_action.taxonomy import Category, Check, Layer, Verdict

RunStatus = Literal["passed", "exhausted", "stopped", "cancelled", "error"]
# The keys `selfcorrect run --json` prints (the CLI leaves out the code and the summary).
RUN_JSON_KEYS = ("status", "stop_reason", "attempts", "tokens", "cost_usd", "replayed",
                 "output", "run_json", "audit", "stale", "cautions", "run_id", "history",
                 "applied", "not_applied", "record")


class _Result(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RunResult(_Result):
    """How a run ended and where its record is."""

    run_id: str
    status: RunStatus = Field(description="passed, exhausted (a budget ran out), stopped (no "
                              "progress), cancelled (a cancel, SIGINT or SIGTERM stopped it: "
                              "interrupted_by says which) or error (infrastructure)")
    stop_reason: str
    exit_code: int = Field(description="what `selfcorrect run` exits with: 0 passed, 1 failed, "
                           "2 bad input, 3 infrastructure, 130 cancelled (143 by SIGTERM)")
    interrupted_by: str | None = Field(default=None, description="'cancelled', 'SIGINT' or "
                                       "'SIGTERM' when the run's status is cancelled")
    attempts: int
    tokens: int
    cost_usd: float | None = Field(description="None when a model's price is unknown")
    replayed: bool
    code: str | None = Field(description="the passing script, None unless passed")
    output: str | None = Field(description="where the passing script was written")
    run_json: str | None
    audit: str | None = Field(description="the AUDIT.md path")
    summary_md: str = Field(description="the short Markdown summary (as in a pull request)")
    stale: list[str] = Field(default_factory=list, description="files an earlier passing run "
                             "left in the output folder, which this run did not replace")
    cautions: list[str] = Field(default_factory=list)
    history: str | None = Field(default=None, description="the run history the run was "
                                "recorded in (`selfcorrect view RUN_ID` shows it), if any")
    # kind repair: what the fix changed, and where it went.
    changed_files: list[str] = Field(default_factory=list, description="a passing repair's "
                                     "changed files as written: in the output folder at their "
                                     "repository paths, or in the repository when applied")
    diff: str | None = Field(default=None, description="a passing repair's unified diff "
                             "against the repository as it was")
    diff_path: str | None = Field(default=None, description="where that diff was written")
    applied: bool = Field(default=False, description="the repair, or the script with its "
                          "header and record, was written into the repository (apply)")
    not_applied: str | None = Field(default=None, description="why apply wrote nothing into "
                                    "the repository (work there changed since the run read "
                                    "it); the files are in the output folder instead")
    record: str | None = Field(default=None, description="apply, a script: where its "
                               "verification record was written (.selfcorrect/lock/...)")


def run_result(done: FolderRun, *, secrets: Sequence[str]) -> RunResult:
    state, paths, written = done.outcome.state, done.outcome.report_paths, done.written
    usage = state.usage
    passed = state.status is Status.PASSED and written.script is not None
    repair = done.repair
    fixed = repair is not None and repair.diff is not None and state.last is not None
    data = {
        "run_id": state.run_id, "status": state.status.value,
        "stop_reason": state.stop_reason, "exit_code": done.exit_code,
        "interrupted_by": state.interrupted_by, "attempts": len(state.attempts),
        "tokens": usage.tokens,
        "cost_usd": round(usage.cost_usd, 6) if usage.cost_known else None,
        "replayed": state.replayed,
        "code": state.last.code if passed and state.last is not None else None,
        "output": str(written.script) if written.script else None,
        "run_json": str(paths.run_json) if paths else None,
        "audit": str(paths.audit_md) if paths else None,
        "summary_md": done.outcome.reports.summary_md,
        "stale": [str(path) for path in written.stale], "cautions": cautions(state),
        "history": str(done.outcome.history) if done.outcome.history else None,
        "changed_files": [str(path) for path in repair.files] if repair else [],
        "diff": state.last.diff if fixed and state.last is not None else None,
        "diff_path": str(repair.diff) if repair and repair.diff else None,
        "applied": repair.applied if repair else written.applied,
        "not_applied": (repair.refused if repair else written.refused) or None,
        "record": str(written.record) if written.record else None,
    }
    return RunResult.model_validate(redact_data(data, secrets=secrets, keep=_STATUS_WORDS))


_STATUS_WORDS = frozenset(status.value for status in Status)


class ArtifactInfo(_Result):
    path: str
    size: int
    kind: str | None = Field(description="what the file's bytes say it is (png, json, csv...)")
    rejected: str | None = Field(description="why it was not copied out, if it was not")


class ExecResult(_Result):
    """One script's run in the sandbox, judged by evaluation layers 1 (it ran cleanly) and
    2 (the contract): the object `selfcorrect exec --json` prints."""

    passed: bool
    failed_layer: Layer | None
    category: Category | None
    evidence: str
    exit_code: int | None
    signal: int | None
    timed_out: bool
    oom_killed: bool
    duration_ms: int
    runtime: str
    stdout: str
    stderr: str
    stdout_bytes: int
    stderr_bytes: int
    artifacts: list[ArtifactInfo]
    checks: list[Check]
    sandbox_note: str | None
    artifact_note: str | None
    # The egress proxy's connection log (issue 19); None when the contract had no network.
    network: NetworkLog | None = None


def exec_result(result: ExecutionResult, verdict: Verdict, *, secrets: Sequence[str]
                ) -> ExecResult:
    category = verdict.category.value if verdict.category else None
    data: dict[str, object] = {
        "passed": verdict.passed,
        "failed_layer": verdict.failed_layer,
        "category": category,
        "evidence": verdict.evidence,
        "exit_code": result.exit_code,
        "signal": result.signal,
        "timed_out": result.timed_out,
        "oom_killed": result.oom_killed,
        "duration_ms": result.duration_ms,
        "runtime": result.runtime,
        "stdout": result.stdout.text,
        "stderr": result.stderr.text,
        "stdout_bytes": result.stdout.total_bytes,
        "stderr_bytes": result.stderr.total_bytes,
        "artifacts": [_artifact(record) for record in result.artifacts],
        "checks": [check.model_dump() for check in verdict.checks],
        "sandbox_note": result.sandbox_note,
        "artifact_note": result.artifact_note,
        "network": result.network.model_dump(mode="json") if result.network else None,
    }
    keep = {verdict.failed_layer or "", category or ""}
    return ExecResult.model_validate(redact_data(data, secrets=secrets, keep=keep))


def _artifact(record: ArtifactRecord) -> dict[str, object]:
    kind = detect_kind(record.host_path) if record.host_path else None
    return {"path": record.path, "size": record.size, "kind": kind, "rejected": record.rejected}


class Problem(_Result):
    """One problem of a task spec, located."""

    line: int
    column: int
    field: str = Field(description="the dotted path of the field, '' for the whole file")
    message: str
    hint: str = ""
    text: str = Field(description="as `selfcorrect validate` prints it")


class ValidationResult(_Result):
    valid: bool
    problems: list[Problem]
