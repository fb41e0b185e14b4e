"""Publishing a finished run to a folder, beside its reports: the passing script at the
spec's output path and the artifacts it made, only when the run passed. `selfcorrect run`,
the Python API and the MCP server's runs all end this way (`run_to_folder`), a repair with
its diff and changed files."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from selfcorrect_action.errors import UsageError
from selfcorrect_action.fileio import copy_atomically, write_atomically
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.report.writer import destination
from selfcorrect_action.runs import pipeline
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.runs.repair_output import RepairOutput, write_repair_output
from selfcorrect_action.runs.session import RunEvents
from selfcorrect_action.spec import LoadedSpec

ARTIFACTS_DIR = "artifacts"


@dataclass(frozen=True)
class Output:
    script: Path | None
    # Files an earlier passing run left in the same folder, which this failed run did not
    # replace: said out loud, so nobody takes them for this run's result.
    stale: list[Path] = field(default_factory=list)


def write_output(state: RunState, loaded: LoadedSpec, out_dir: Path, work_root: Path
                 ) -> Output:
    if state.status is not Status.PASSED or state.last is None:
        return Output(None, stale=left_by_earlier_run(loaded, out_dir))
    # Through destination(): never through a link, replacing rather than writing into
    # whatever is there.
    output = destination(out_dir, str(loaded.spec.output))
    write_atomically(output, state.last.code)
    produced = work_root / f"attempt-{state.last.index}" / "run"
    for file in sorted(produced.rglob("*")) if produced.is_dir() else []:
        if file.is_file() and not file.is_symlink():
            relative = file.relative_to(produced).as_posix()
            copy_atomically(file, destination(out_dir, f"{ARTIFACTS_DIR}/{relative}"))
    return Output(output)


def left_by_earlier_run(loaded: LoadedSpec, out_dir: Path) -> list[Path]:
    """Not deleted: `--out .` is the repository itself, and the script there may be the
    user's own."""
    stale = [out_dir / str(loaded.spec.output)] if loaded.spec.output else []
    artifacts = out_dir / ARTIFACTS_DIR
    found = [path for path in stale if path.is_file()]
    if artifacts.is_dir() and any(artifacts.iterdir()):
        found.append(artifacts)
    return found


@dataclass(frozen=True)
class FolderRun:
    outcome: pipeline.RunOutcome[Output | RepairOutput]
    written: Output  # what is in the folder besides the reports, or was left there before
    # A repair's changed files and diff (runs/repair_output.py); None for a script's run.
    repair: RepairOutput | None = None

    @property
    def exit_code(self) -> int:
        """As `selfcorrect run` exits: a repair that passed but could not be applied (the
        working tree changed meanwhile) leaves the user something to do, so it is 1."""
        code = self.outcome.exit_code
        return 1 if code == 0 and self.repair is not None and self.repair.refused else code


def run_to_folder(prepared: pipeline.PreparedRun, out_dir: Path, *,
                  environ: Mapping[str, str], secrets: Sequence[str],
                  events: RunEvents | None = None, cancel: CancelToken | None = None,
                  connections: pipeline.Connections | None = None,
                  apply: bool = False) -> FolderRun:
    """Run a spec's task (`prepare`d from a LoadedSpec) with `out_dir` for its reports and
    its script; an interrupted run is in `outcome.interruption`, for the caller to raise.
    A repair writes its diff and changed files there instead, or with `apply` its changed
    files into the repository (runs/repair_output.py: never over changed work)."""
    loaded = prepared.loaded
    assert loaded is not None, "a folder run is a spec's run"
    snapshot = prepared.repository
    if apply and snapshot is None:
        raise UsageError("apply writes a repair's changed files into the repository; this "
                         f"task is kind {loaded.spec.kind}",
                         hint="leave apply out, or give a kind repair spec")

    def publish(done: pipeline.Finished) -> Output | RepairOutput:
        if snapshot is not None:
            return write_repair_output(done.state, snapshot, out_dir, apply=apply)
        return write_output(done.state, loaded, out_dir, done.work_root)

    outcome: pipeline.RunOutcome[Output | RepairOutput] = pipeline.run(
        prepared, environ=environ, secrets=secrets, events=events, cancel=cancel,
        reports_dir=out_dir, connections=connections, publish=publish)
    if snapshot is not None:
        repair = outcome.published if isinstance(outcome.published, RepairOutput) \
            else RepairOutput()
        return FolderRun(outcome, Output(None, stale=repair.stale), repair)
    written = outcome.published if isinstance(outcome.published, Output) \
        else Output(None, stale=left_by_earlier_run(loaded, out_dir))
    return FolderRun(outcome, written)
