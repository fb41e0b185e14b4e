"""Where the MCP server keeps its runs: in the history folder (where `selfcorrect history`,
`show` and `view` find runs), under `mcp-runs/<root's name>-<digest of its path>/<run-id>/`,
each with its run.json, AUDIT.md and, when it passed, its script at the spec's output path
and the artifacts beside it (as `selfcorrect run --out` writes them). `list_runs` and
`get_audit` read them back, from this server or an earlier one on the same root.

Never under the root (issue 38): the runs went to `<root>/.selfcorrect/mcp-runs/`, inside
the user's repository, left there untracked. One folder per root keeps a client's
`list_runs` to its own project's runs.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from selfcorrect_action.errors import UsageError
from selfcorrect_action.fileio import FileProblem, read_bounded
from selfcorrect_action.mcp.models import RunSummary
from selfcorrect_action.report.run_json import RUN_JSON, load_run_json
from selfcorrect_action.report.writer import AUDIT_MD
from selfcorrect_action.templating import shorten

RUNS_DIR = "mcp-runs"  # in the history folder
RUN_ID = re.compile(r"[0-9a-f]{12}")  # runs/prepare.py's: uuid4().hex[:12]
MAX_REPORT_BYTES = 16 * 1024 * 1024
NAME_CHARS = 40


def runs_folder(history: Path, root: Path) -> Path:
    """The folder of the runs of a server on `root` (resolved: the one folder whatever
    path or link named it)."""
    real = root.resolve()
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", real.name).strip("._")[:NAME_CHARS] or "root"
    digest = hashlib.sha256(str(real).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return history / RUNS_DIR / f"{name}-{digest}"


def run_folder(runs: Path, run_id: str) -> Path:
    """The folder of run `run_id`; an id that is not one is refused (it names a path)."""
    if not RUN_ID.fullmatch(run_id):
        raise UsageError(f"run_id {run_id!r}: not a run id",
                         hint="a run id is 12 hexadecimal digits, as list_runs shows them")
    return runs / run_id


def summaries(runs: Path, *, limit: int) -> list[RunSummary]:
    """The runs with a run.json, the latest first."""
    found = [path for path in runs.glob(f"*/{RUN_JSON}")
             if RUN_ID.fullmatch(path.parent.name)] if runs.is_dir() else []
    found.sort(key=lambda path: path.stat().st_mtime, reverse=True)
    return [summary(path) for path in found[:limit]]


def summary(path: Path) -> RunSummary:
    run_id = path.parent.name
    audit = path.parent / AUDIT_MD
    try:
        state = load_run_json(read_report(path))
    except UsageError as exc:
        return RunSummary(run_id=run_id, status="unreadable", task="", run_json=str(path),
                          problem=exc.message)
    usage = state.usage
    return RunSummary(
        run_id=run_id, status=state.status.value, task=task_label(state.spec_source,
                                                                  state.spec.prompt),
        started_at=state.started_at, finished_at=state.finished_at,
        attempts=len(state.attempts), tokens=usage.tokens,
        cost_usd=round(usage.cost_usd, 6) if usage.cost_known else None,
        run_json=str(path), audit=str(audit) if audit.is_file() else None)


def task_label(source: str, prompt: str) -> str:
    """How a run's task is named in lists: its spec's source and its prompt's first line."""
    first_line = prompt.strip().splitlines()[0] if prompt.strip() else ""
    return f"{source}: {shorten(first_line, 120)}"


def read_report(path: Path) -> str:
    try:
        return read_bounded(path, MAX_REPORT_BYTES).decode("utf-8", errors="replace")
    except FileProblem as exc:
        raise UsageError(f"{path}: {exc.problem}", hint=exc.hint) from exc
