"""Runs as folders hold them: a `selfcorrect run` output folder (run.json, AUDIT.md, the
passing script and its artifacts/), or the folders the action commits, one per run, under a
repository's .selfcorrect/runs/. A run.json read from a repository is anyone's text: read
capped, checked against the schema (any version this selfcorrect reads), and quoted escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from selfcorrect_action.errors import UsageError
from selfcorrect_action.fileio import FileProblem, read_bounded
from selfcorrect_action.history.artifacts import MAX_RUN_BYTES, KeptArtifact, keep_file
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.report.run_json import RUN_JSON, RUNS_DIR, load_run_json
from selfcorrect_action.runs.publish import ARTIFACTS_DIR

MAX_RUN_JSON_BYTES = 128 * 1024 * 1024


def run_files(root: Path) -> list[Path]:
    """The run.json files under `root`: a repository (its .selfcorrect/runs/*/run.json), a
    folder of run folders, or one run's folder."""
    for base in (root / RUNS_DIR, root):
        found = sorted(base.glob(f"*/{RUN_JSON}"))
        if found:
            return found
    single = root / RUN_JSON
    return [single] if single.is_file() else []


def read_run(path: Path) -> tuple[RunState, str]:
    """The run in the run.json at `path`, and its text; UsageError naming the file."""
    try:
        raw = read_bounded(path, MAX_RUN_JSON_BYTES)
    except FileProblem as exc:
        raise UsageError(f"{path}: {exc.problem}", hint=exc.hint) from exc
    text = raw.decode("utf-8", errors="replace")
    try:
        return load_run_json(text), text
    except UsageError as exc:
        raise UsageError(f"{path}: {exc.message}", hint=exc.hint) from exc


def folder_artifacts(folder: Path, state: RunState, *, secrets: Sequence[str]
                     ) -> tuple[KeptArtifact, ...]:
    """The pictures and tables in a `selfcorrect run` output folder: its artifacts/ hold the
    passing attempt's files (a run that did not pass left none of its own there)."""
    last = state.last
    produced = folder / ARTIFACTS_DIR
    if state.status is not Status.PASSED or last is None or last.execution is None \
            or produced.is_symlink() or not produced.is_dir():
        return ()
    kept, budget = [], MAX_RUN_BYTES
    for record in last.execution.artifacts:
        host = _inside(produced, record.path)
        if host is None:
            continue
        item = keep_file(last.index, record.path, host, budget, secrets)
        if item is not None:
            budget -= len(item.data)
            kept.append(item)
    return tuple(kept)


def _inside(folder: Path, relative: str) -> Path | None:
    """`folder/relative` when that is a regular file inside `folder`, reached through no
    link: the path comes from the run.json, which may name `../../home/me/.ssh/x`."""
    parts = PurePosixPath(relative).parts
    if not parts or relative.startswith((".", "/")) or ".." in parts or "\\" in relative:
        return None
    target = folder
    for part in parts:
        target = target / part
        if target.is_symlink():
            return None
    return target if target.is_file() else None
