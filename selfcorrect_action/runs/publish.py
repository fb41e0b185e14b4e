"""Publishing a finished run to a folder, beside its reports: the passing script at the
spec's output path and the artifacts it made, only when the run passed. `selfcorrect run`,
the Python API and the MCP server's runs all end this way (`run_to_folder`), a repair with
its diff and changed files. With `apply`, a repair's changed files go into the repository
(runs/repair_output.py), and so do a script, its header in, and its verification record
(runs/script_apply.py), the artifacts staying in the folder."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from selfcorrect_action.fileio import copy_atomically, write_atomically
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.report.writer import destination
from selfcorrect_action.runs import pipeline
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.runs.repair_output import RepairOutput, write_repair_output
from selfcorrect_action.runs.script_apply import apply_script, apply_target, output_now
from selfcorrect_action.runs.session import RunEvents
from selfcorrect_action.spec import LoadedSpec

ARTIFACTS_DIR = "artifacts"


@dataclass(frozen=True)
class Output:
    script: Path | None
    # Files an earlier passing run left in the same folder, which this failed run did not
    # replace: said out loud, so nobody takes them for this run's result.
    stale: list[Path] = field(default_factory=list)
    # apply: the verification record written beside the script, and whether both went into
    # the repository or (refused, saying why) into the folder.
    record: Path | None = None
    applied: bool = False
    refused: str = ""


def write_output(state: RunState, loaded: LoadedSpec, out_dir: Path, work_root: Path
                 ) -> Output:
    if state.status is not Status.PASSED or state.last is None:
        return Output(None, stale=left_by_earlier_run(loaded, out_dir))
    # Through destination(): never through a link, replacing rather than writing into
    # whatever is there.
    output = destination(out_dir, str(loaded.spec.output))
    write_atomically(output, state.last.code)
    write_artifacts(state, out_dir, work_root)
    return Output(output)


def write_applied(done: pipeline.Finished, loaded: LoadedSpec, out_dir: Path, *,
                  before: bytes | None) -> Output:
    """apply: the script and its record into the repository, or the folder when refused;
    nothing when the run, or the final check of the script with its header, failed."""
    state, verified = done.state, done.verified
    if state.status is not Status.PASSED or verified is None:
        return Output(None, stale=left_by_earlier_run(loaded, out_dir))
    applied = apply_script(verified, loaded, out_dir, before=before)
    write_artifacts(state, out_dir, done.work_root)
    return Output(applied.script, record=applied.record, applied=not applied.refused,
                  refused=applied.refused)


def write_artifacts(state: RunState, out_dir: Path, work_root: Path) -> None:
    """What the passing attempt's script made, under the folder's artifacts/."""
    assert state.last is not None
    produced = work_root / f"attempt-{state.last.index}" / "run"
    for file in sorted(produced.rglob("*")) if produced.is_dir() else []:
        if file.is_file() and not file.is_symlink():
            relative = file.relative_to(produced).as_posix()
            copy_atomically(file, destination(out_dir, f"{ARTIFACTS_DIR}/{relative}"))


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
        """As `selfcorrect run` exits: a repair or a script that passed but could not be
        applied (the working tree changed meanwhile) leaves the user something to do, so
        it is 1."""
        code = self.outcome.exit_code
        refused = self.repair.refused if self.repair is not None else self.written.refused
        return 1 if code == 0 and refused else code


def run_to_folder(prepared: pipeline.PreparedRun, out_dir: Path, *,
                  environ: Mapping[str, str], secrets: Sequence[str],
                  events: RunEvents | None = None, cancel: CancelToken | None = None,
                  connections: pipeline.Connections | None = None,
                  apply: bool = False) -> FolderRun:
    """Run a spec's task (`prepare`d from a LoadedSpec) with `out_dir` for its reports and
    its script; an interrupted run is in `outcome.interruption`, for the caller to raise.
    A repair writes its diff and changed files there instead, or with `apply` its changed
    files into the repository (runs/repair_output.py: never over changed work); a script
    with `apply` goes into the repository with its header and record
    (runs/script_apply.py: never over changed work either)."""
    loaded = prepared.loaded
    assert loaded is not None, "a folder run is a spec's run"
    snapshot = prepared.repository
    target = apply_target(loaded) if apply and snapshot is None else None
    before = output_now(loaded) if target is not None else None

    def publish(done: pipeline.Finished) -> Output | RepairOutput:
        if snapshot is not None:
            return write_repair_output(done.state, snapshot, out_dir, apply=apply)
        if target is not None:
            return write_applied(done, loaded, out_dir, before=before)
        return write_output(done.state, loaded, out_dir, done.work_root)

    outcome: pipeline.RunOutcome[Output | RepairOutput] = pipeline.run(
        prepared, environ=environ, secrets=secrets, events=events, cancel=cancel,
        reports_dir=out_dir, connections=connections, publish=publish, record=target)
    if snapshot is not None:
        repair = outcome.published if isinstance(outcome.published, RepairOutput) \
            else RepairOutput()
        return FolderRun(outcome, Output(None, stale=repair.stale), repair)
    written = outcome.published if isinstance(outcome.published, Output) \
        else Output(None, stale=left_by_earlier_run(loaded, out_dir))
    return FolderRun(outcome, written)
