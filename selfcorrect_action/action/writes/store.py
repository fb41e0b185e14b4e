"""Saving a WritePlan in one job and loading it in another (the hardened recipe: the job
that runs the model's code has a read-only token; a later job with write access applies
what it planned). The plan is validated again when loaded: whatever made the file, the
publishing job only writes what a plan may write (our branches, nothing under .github/)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import ValidationError

from selfcorrect_action.action.writes.plan import WritePlan
from selfcorrect_action.errors import UsageError
from selfcorrect_action.fileio import FileProblem, read_bounded, write_atomically

MAX_PLAN_BYTES = 32 * 1024 * 1024


def save_plan(plan: WritePlan, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    name = plan.commit.branch if plan.commit else plan.task
    if plan.runs:
        # A batch: the jobs of a matrix save one each for the same branch, and the
        # publishing job downloads them all into one folder.
        tasks = "\n".join(sorted(run.task for run in plan.runs)).encode()
        name = f"{name}__{hashlib.sha256(tasks).hexdigest()[:12]}"
    path = folder / (name.replace("/", "__").replace(" ", "_").replace("#", "") + ".json")
    write_atomically(path, plan.model_dump_json(indent=2) + "\n")
    return path


def load_plans(folder: Path) -> list[tuple[Path, WritePlan]]:
    if not folder.is_dir():
        raise UsageError(f"plan-dir {folder}: no such folder",
                         hint="download the plan artifact the run job uploaded into it first")
    plans = []
    for path in sorted(folder.glob("*.json")):
        try:
            plans.append((path, WritePlan.model_validate_json(read_bounded(path,
                                                                          MAX_PLAN_BYTES))))
        except FileProblem as exc:
            raise UsageError(f"{path}: {exc.problem}", hint=exc.hint) from exc
        except ValidationError as exc:
            raise UsageError(f"{path}: not a selfcorrect write plan, or one that writes "
                             f"where a plan may not: {exc.errors()[0]['msg']}",
                             hint="apply only plans that `mode: plan` wrote") from exc
    if not plans:
        raise UsageError(f"plan-dir {folder}: holds no *.json write plan",
                         hint="check that the run job (mode: plan) uploaded its plan-dir")
    return plans
