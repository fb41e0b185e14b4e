"""What a run logs to an experiment tracker, as data (pure, no MLflow): its parameters (what
was compared: models, budgets, the spec and the prompts it was asked with, the
orchestrator), its metrics (what came of it: attempts, tokens, cost, failures by category,
passed), a step series per attempt (the layer it reached), and its files (AUDIT.md,
run.json, the script, the charts)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from selfcorrect_action import __version__
from selfcorrect_action.history.artifacts import KeptArtifact
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.report.writer import Reports
from selfcorrect_action.resources import templates_dir
from selfcorrect_action.taxonomy import Category

# MLflow refuses a tag value past 8000 characters; a stop reason can quote a traceback.
MAX_TAG_CHARS = 2000


@dataclass(frozen=True)
class TrackedRun:
    name: str
    params: dict[str, str]
    tags: dict[str, str]
    metrics: dict[str, float]
    # name -> (step, value) per attempt: MLflow draws them as a line over the attempts
    series: dict[str, list[tuple[int, float]]]
    files: dict[str, bytes] = field(default_factory=dict)  # path among the run's artifacts


def tracked_run(state: RunState, reports: Reports, kept: tuple[KeptArtifact, ...] = (),
                *, tags: dict[str, str] | None = None) -> TrackedRun:
    return TrackedRun(name=run_name(state), params=params(state), metrics=metrics(state),
                      series=series(state), files=files(state, reports, kept),
                      tags={**run_tags(state), **(tags or {})})


def run_name(state: RunState) -> str:
    task = PurePosixPath(state.spec_source).stem or "run"
    return f"{task} {state.run_id}"


def params(state: RunState) -> dict[str, str]:
    budget, models = state.budget, state.models
    return {
        "model.cheap": models.cheap, "model.strong": models.strong,
        "model.judge": models.judge, "model.review": models.review or models.judge,
        "budget.patch_attempts": str(budget.patch_attempts),
        "budget.rethink_attempts": str(budget.rethink_attempts),
        "budget.tokens": str(budget.tokens),
        "budget.cost_usd": "none" if budget.cost_usd is None else str(budget.cost_usd),
        "spec_sha256": spec_digest(state),
        "prompts_sha256": prompts_digest(),
        "orchestrator": state.orchestrator, "kind": state.spec.kind,
        "profile": state.profile, "generation": state.generation,
        "redraws": str(state.redraws),
        "runtime": state.runtime, "replayed": str(state.replayed).lower(),
        "selfcorrect_version": __version__,
    }


def metrics(state: RunState) -> dict[str, float]:
    usage = state.usage
    failed = [a.verdict.category for a in state.attempts
              if a.verdict is not None and not a.verdict.passed and a.verdict.category]
    counted: dict[str, float] = {
        "passed": float(state.status is Status.PASSED), "attempts": float(len(state.attempts)),
        "tokens": float(usage.tokens), "llm_calls": float(usage.llm_calls),
        "patch_attempts": float(usage.patch_attempts),
        "rethink_attempts": float(usage.rethink_attempts),
        **{f"failures.{category.value}": float(failed.count(category))
           for category in Category},
    }
    if usage.cost_known:  # an unknown cost is no metric at all, not $0
        counted["cost_usd"] = usage.cost_usd
    return counted


def series(state: RunState) -> dict[str, list[tuple[int, float]]]:
    return {
        "attempt.layer": [(a.index, float(a.progress.layer)) for a in state.attempts],
        "attempt.tests_passed": [(a.index, float(a.progress.tests_passed))
                                 for a in state.attempts],
    }


def run_tags(state: RunState) -> dict[str, str]:
    return {"selfcorrect.run_id": state.run_id, "selfcorrect.status": state.status.value,
            "selfcorrect.spec": state.spec_source,
            "selfcorrect.stop_reason": state.stop_reason[:MAX_TAG_CHARS]}


def files(state: RunState, reports: Reports, kept: tuple[KeptArtifact, ...]
          ) -> dict[str, bytes]:
    out = {"AUDIT.md": reports.audit_md.encode(), "run.json": reports.run_json.encode()}
    last = state.last
    if state.status is Status.PASSED and last is not None and last.code:
        out[f"script/{state.output_name}"] = last.code.encode()
    if last is not None and last.diff:
        out["changes.diff"] = last.diff.encode()
    for artifact in kept:
        if artifact.is_image and artifact.data:
            out[f"charts/attempt-{artifact.attempt}/{artifact.path}"] = artifact.data
    return out


def spec_digest(state: RunState) -> str:
    """The task as asked (the spec, its tests): runs of the same task compare."""
    asked = {"spec": state.spec.model_dump(mode="json"), "tests": state.tests}
    return hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()[:16]


def prompts_digest() -> str:
    """The prompt templates this selfcorrect asks with: two prompt versions compare."""
    digest = hashlib.sha256()
    folder = templates_dir() / "prompts"
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]
