"""A run's checkpoint (issue 37): a folder holding `checkpoint.json`, the run's state after
its last finished step with a header saying what it is bound to, and `exchanges.jsonl`, the
recording of every model exchange (llm/recording.py). Both are redacted like every report.

The state is rewritten after every step, atomically (a new file renamed over the old, its
data and the folder fsync'ed), so a run killed at any moment leaves the last whole one. A
run that ends says how in the header and keeps the state of its last step: a cancel or an
error stopped it between steps, and what it spent in a step it did not finish is in the
recording. A run that passed removes its folder: there is nothing left to resume.

The CLI keeps checkpoints in the history folder, one folder per run id (`resumable/<id>`);
the action keeps them in a ref of the repository (action/).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from selfcorrect_action import __version__
from selfcorrect_action.errors import UsageError
from selfcorrect_action.fileio import FileProblem, read_bounded
from selfcorrect_action.llm.recording import RecordingMark
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.report.run_json import load_run_json, run_json
from selfcorrect_action.spec import TaskSpec

CHECKPOINT_FILE = "checkpoint.json"
EXCHANGES_FILE = "exchanges.jsonl"
FORMAT_VERSION = 1
RESUMABLE_DIR = "resumable"  # in the history folder
MAX_CHECKPOINT_BYTES = 64 * 1024 * 1024
# Checkpoints of runs nobody resumed are removed when a new run starts after this long.
KEEP_DAYS = 30


class CheckpointError(UsageError):
    """A checkpoint that cannot be read, or cannot be resumed by this selfcorrect."""


class EndNote(BaseModel):
    """How the run ended, when it lived to say so."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: Status
    reason: str = ""
    error_exit_code: int | None = None


class CheckpointHeader(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["selfcorrect.checkpoint"] = "selfcorrect.checkpoint"
    format_version: int = FORMAT_VERSION
    selfcorrect_version: str = __version__
    run_id: str
    saved_at: str
    # What the checkpoint is bound to: the task spec (as the run read it), and on GitHub the
    # approved issue body the task came from.
    spec_sha256: str
    approval_sha256: str | None = None
    recording: RecordingMark | None = None  # None: the run recorded no exchanges
    ended: EndNote | None = None


class Checkpoint(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    header: CheckpointHeader
    state: RunState
    folder: Path

    @property
    def recording_path(self) -> Path:
        return self.folder / EXCHANGES_FILE


def spec_digest(spec: TaskSpec) -> str:
    return hashlib.sha256(spec.model_dump_json().encode()).hexdigest()


def run_folder(history: Path, run_id: str) -> Path:
    return history / RESUMABLE_DIR / run_id


class CheckpointWriter:
    """Saves a run's state into `folder` after every step (`save`), and how it ended
    (`end`). `mark` says how far the run's recording is, for the header."""

    def __init__(self, folder: Path, *, secrets: Sequence[str] = (),
                 approval_sha256: str | None = None,
                 mark: Callable[[], RecordingMark] | None = None,
                 now: Callable[[], str] | None = None) -> None:
        self.folder = folder
        self._secrets = list(secrets)
        self._approval = approval_sha256
        self.mark = mark
        self._now = now or _utc_now
        self._last: tuple[CheckpointHeader, dict[str, Any]] | None = None

    @property
    def recording_path(self) -> Path:
        return self.folder / EXCHANGES_FILE

    def open(self) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"the run's checkpoint folder {self.folder} cannot be made "
                             f"({exc.strerror})", hint="check the history folder's "
                             "permissions, or pass --history DIR") from exc

    def save(self, state: RunState) -> None:
        header = CheckpointHeader(
            run_id=state.run_id, saved_at=self._now(), spec_sha256=spec_digest(state.spec),
            approval_sha256=self._approval, recording=self.mark() if self.mark else None)
        data = json.loads(run_json(state, secrets=self._secrets))
        self._last = (header, data)
        self._write(header, data)

    def end(self, state: RunState) -> None:
        """The run ended with `state`: a pass removes the folder; any other end is said in
        the header beside the last step's state (a cancel or an error came between steps)."""
        if state.status is Status.PASSED:
            shutil.rmtree(self.folder, ignore_errors=True)
            return
        if self._last is None:
            return
        header, data = self._last
        if data.get("status") != Status.RUNNING.value:
            return  # the last step ended the run (a budget, a stall): its state says how
        ended = EndNote(status=state.status, reason=state.stop_reason,
                        error_exit_code=state.error_exit_code)
        self._write(header.model_copy(update={"ended": ended}), data)

    def _write(self, header: CheckpointHeader, state: dict[str, Any]) -> None:
        payload = {**header.model_dump(mode="json", exclude_none=True), "state": state}
        atomic_write(self.folder / CHECKPOINT_FILE,
                     json.dumps(payload, ensure_ascii=False, separators=(",", ":")))


def atomic_write(path: Path, text: str) -> None:
    """`text` in `path`, whole or not at all, on disk before returning."""
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    with contextlib.suppress(OSError):  # the rename itself, durable
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def read_checkpoint(folder: Path) -> Checkpoint:
    """The checkpoint in `folder`; CheckpointError says what is wrong and what to do."""
    path = folder / CHECKPOINT_FILE
    try:
        raw = read_bounded(path, MAX_CHECKPOINT_BYTES)
    except FileProblem as exc:
        raise CheckpointError(f"{path}: {exc.problem}",
                              hint="name a run's checkpoint folder (it holds "
                              f"{CHECKPOINT_FILE}), or the run's id") from exc
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{path}: not a checkpoint ({exc})",
                              hint="it was cut off or edited: start a fresh run") from exc
    if not isinstance(data, dict) or data.get("kind") != "selfcorrect.checkpoint":
        raise CheckpointError(f"{path}: not a selfcorrect checkpoint",
                              hint="name a run's checkpoint folder, or the run's id")
    if data.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(
            f"{path}: checkpoint format {data.get('format_version')!r}; this selfcorrect "
            f"reads {FORMAT_VERSION}", hint="resume it with the selfcorrect that wrote it, "
            "or start a fresh run")
    version = data.get("selfcorrect_version")
    if version != __version__:
        raise CheckpointError(
            f"{path}: the run was made by selfcorrect {version}, this is {__version__}: its "
            "steps and prompts may differ", hint=f"resume it with selfcorrect {version}, or "
            "start a fresh run")
    state_data = data.pop("state", None)
    try:
        header = CheckpointHeader.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise CheckpointError(f"{path}: {where}: {first['msg']}",
                              hint="it was edited: start a fresh run") from exc
    if not isinstance(state_data, dict):
        raise CheckpointError(f"{path}: the checkpoint holds no run state",
                              hint="start a fresh run")
    try:
        state = load_run_json(json.dumps(state_data))
    except UsageError as exc:
        raise CheckpointError(f"{path}: {exc.message}", hint=exc.hint) from exc
    if state.run_id != header.run_id or spec_digest(state.spec) != header.spec_sha256:
        raise CheckpointError(f"{path}: the state is not the one its header describes",
                              hint="it was edited: start a fresh run")
    return Checkpoint(header=header, state=state, folder=folder)


def prune(history: Path, *, keep_days: float = KEEP_DAYS,
          clock: Callable[[], float] = time.time) -> None:
    """Remove the checkpoints of runs last saved more than `keep_days` ago."""
    base = history / RESUMABLE_DIR
    if not base.is_dir():
        return
    limit = clock() - keep_days * 86400
    for folder in base.iterdir():
        marker = folder / CHECKPOINT_FILE
        with contextlib.suppress(OSError):
            seen = marker.stat().st_mtime if marker.exists() else folder.stat().st_mtime
            if folder.is_dir() and not folder.is_symlink() and seen < limit:
                shutil.rmtree(folder, ignore_errors=True)


def _utc_now() -> str:
    from selfcorrect_action.loop.deps import utc_now

    return utc_now()

