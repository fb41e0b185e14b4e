"""Keeping a run resumable, and resuming one (issue 37): where its checkpoint folder is,
what model client records into it, and `--resume RUN|DIR` read back into the state the run
goes on from (loop/resume.py decides that, for every orchestrator).

RUN is a run id (or its start) among the history folder's checkpoints; DIR is a checkpoint
folder (the action downloads one from its ref). A run of the LangGraph orchestrator made
before checkpoint folders existed is found in LangGraph's SQLite file, without a recording.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from selfcorrect_action.errors import UsageError
from selfcorrect_action.llm.base import LLM
from selfcorrect_action.llm.models import ChatResponse
from selfcorrect_action.llm.recording import Recorder, RecordingLLM, RecordingMark
from selfcorrect_action.llm.resumed import ResumedRecording, ResumingLLM, continued
from selfcorrect_action.loop.deps import utc_now
from selfcorrect_action.loop.resume import Ended, MoreBudget, resume_state
from selfcorrect_action.loop.state import RunState, Usage
from selfcorrect_action.records import evolve
from selfcorrect_action.runs.checkpoint import (
    CHECKPOINT_FILE,
    EXCHANGES_FILE,
    RESUMABLE_DIR,
    Checkpoint,
    CheckpointError,
    CheckpointWriter,
    read_checkpoint,
    run_folder,
)
from selfcorrect_action.runs.settings import RunSettings

FINDING_RUNS = ("the run id is in the line the run printed when it started, and in "
                f"`selfcorrect history`; its checkpoint is in the history folder's "
                f"{RESUMABLE_DIR}/<run id>")


@dataclass(frozen=True)
class Keeping:
    """Where a run keeps its checkpoint, and the earlier run's recording it goes on from."""

    folder: Path
    record_exchanges: bool = True
    resumed: ResumedRecording | None = None  # a resumed run's recording, its tail to play
    approval_sha256: str | None = None

    def client(self, llm: LLM, *, secrets: Sequence[str], task_sha256: str | None,
               fit: Callable[[], dict[str, str]] | None
               ) -> tuple[LLM, Callable[[], RecordingMark] | None]:
        """`llm` recording into the folder (or going on with the earlier run's recording),
        and how far its recording is, for each checkpoint."""
        if self.resumed is not None:
            return ResumingLLM(llm, self.resumed), self.resumed.mark
        if not self.record_exchanges:
            return llm, None
        recorder = Recorder(self.folder / EXCHANGES_FILE, secrets=secrets,
                            task_sha256=task_sha256, fit=fit)
        return RecordingLLM(llm, recorder), recorder.mark

    def writer(self, *, secrets: Sequence[str],
               mark: Callable[[], RecordingMark] | None) -> CheckpointWriter:
        return CheckpointWriter(self.folder, secrets=secrets,
                                approval_sha256=self.approval_sha256, mark=mark)


@dataclass(frozen=True)
class Resumed:
    state: RunState  # the state the run starts from
    keeping: Keeping | None  # None: no checkpoint is kept (no history folder)


def resumable_base(settings: RunSettings) -> Path | None:
    """The folder of the checkpoint folders, one per run id: in the history folder, else
    beside LangGraph's SQLite file when one is kept."""
    if settings.history_dir is not None:
        return settings.history_dir
    if settings.orchestrator == "langgraph" and settings.checkpoints_file is not None:
        return settings.checkpoints_file.parent
    return None


def keeping_for(settings: RunSettings, run_id: str) -> Keeping | None:
    """Where a fresh run keeps its checkpoint: the folder a front end chose, else one in
    the history folder; None without either (the run cannot be resumed)."""
    folder = settings.checkpoint_dir
    base = resumable_base(settings)
    if folder is None and base is not None:
        folder = run_folder(base, run_id)
    if folder is None:
        return None
    return Keeping(folder, record_exchanges=settings.record_exchanges,
                   approval_sha256=settings.approval_sha256)


def start(fresh: RunState, settings: RunSettings, *, secrets: Sequence[str]) -> Resumed:
    """The state a run starts from, and where it keeps its checkpoint: `fresh` for a new
    run; with --resume, the earlier run's, from its checkpoint."""
    if settings.resume is None:
        return Resumed(fresh, keeping_for(settings, fresh.run_id))
    more = MoreBudget(settings.more_attempts, settings.more_tokens, settings.more_usd)
    checkpoint = _find(settings.resume, settings)
    if checkpoint is None:
        saved = _langgraph_state(settings.resume, settings)
        state = resume_state(saved, fresh, more=more, now=utc_now())
        return Resumed(state, keeping_for(settings, state.run_id))
    _check_approval(checkpoint, settings)
    header = checkpoint.header
    ended = (Ended(header.ended.status, header.ended.reason, header.ended.error_exit_code)
             if header.ended is not None else None)
    folder = settings.checkpoint_dir or checkpoint.folder
    state = resume_state(checkpoint.state, fresh, more=more, now=utc_now(), ended=ended)
    source, recording = checkpoint.recording_path, None
    if not settings.replaying and source.is_file():
        # The earlier run's calls its state counts, less those taken back with the attempt
        # executed again (its judge's: asked again, they are played back).
        undone = checkpoint.state.usage.llm_calls - state.usage.llm_calls
        marked = header.recording.exchanges if header.recording else \
            checkpoint.state.usage.llm_calls
        target = folder / EXCHANGES_FILE
        if target.resolve() != source.resolve():
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        recording = continued(target, header.recording, kept=marked - undone,
                              secrets=secrets)
        note = state.resumes[-1].model_copy(update={"recorded_calls": recording.recorded_tail})
        state = state.model_copy(update={"resumes": [*state.resumes[:-1], note]})
    return Resumed(state, Keeping(folder, record_exchanges=settings.record_exchanges,
                                  resumed=recording,
                                  approval_sha256=settings.approval_sha256))


def _find(ref: str, settings: RunSettings) -> Checkpoint | None:
    """The checkpoint `ref` names: a folder, or a run id in the history's checkpoints.
    None: not there, but a LangGraph run may have it in its SQLite file."""
    path = Path(ref)
    if path.is_dir():
        return read_checkpoint(path)
    if path.is_file() and path.name == CHECKPOINT_FILE:
        return read_checkpoint(path.parent)
    history = resumable_base(settings)
    if history is not None and "/" not in ref and ref not in (".", ".."):
        base = history / RESUMABLE_DIR
        exact = base / ref
        if exact.is_dir():
            return read_checkpoint(exact)
        matches = sorted(folder for folder in base.glob(f"{ref}*") if folder.is_dir()) \
            if base.is_dir() and len(ref) >= 4 else []
        if len(matches) > 1:
            raise UsageError(f"--resume {ref}: {len(matches)} runs' ids start so "
                             f"({', '.join(folder.name for folder in matches[:5])})",
                             hint="give more of the run id")
        if matches:
            return read_checkpoint(matches[0])
    if settings.orchestrator == "langgraph" and settings.checkpoints_file is not None:
        return None  # perhaps in LangGraph's own checkpoints
    where = f" in {history / RESUMABLE_DIR}" if history is not None else ""
    raise UsageError(f"--resume {ref}: no checkpoint of that run{where}, and no such folder",
                     hint=FINDING_RUNS + "; a run that passed keeps none")


def _langgraph_state(ref: str, settings: RunSettings) -> RunState:
    from selfcorrect_action.orchestrators.checkpoints import saved_state

    path = settings.checkpoints_file
    assert path is not None
    saved = saved_state(path, ref)
    if saved is None:
        raise UsageError(f"--resume {ref}: no checkpoint of that run in the history "
                         f"folder, nor in {path}", hint=FINDING_RUNS)
    return saved


def _check_approval(checkpoint: Checkpoint, settings: RunSettings) -> None:
    saved, now = checkpoint.header.approval_sha256, settings.approval_sha256
    if saved == now:
        return
    raise CheckpointError(
        f"--resume: run {checkpoint.header.run_id}'s checkpoint was made for "
        + ("another approved task text" if saved and now else
           "an approved task text" if saved else "no approved task text")
        + " than this run's: the task it would go on with is not the one approved now",
        hint="start a fresh run (`/selfcorrect retry`), which runs the text approved now")


def with_played_back(state: RunState, answers: Sequence[ChatResponse]) -> RunState:
    """The latest resume with what its run played back of the earlier run's recording."""
    if not state.resumes:
        return state
    usage = Usage()
    for answer in answers:
        usage = evolve(usage, {
            "tokens": usage.tokens + answer.prompt_tokens + answer.completion_tokens,
            "cost_usd": usage.cost_usd + answer.cost_usd,
            "cost_known": usage.cost_known and answer.cost_known,
            "llm_calls": usage.llm_calls + 1})
    note = evolve(state.resumes[-1], {"played_back": usage})
    return evolve(state, {"resumes": [*state.resumes[:-1], note]})


def resumed_line(state: RunState) -> str:
    """What a resumed run says when it starts: what it keeps and what it does again."""
    note = state.resumes[-1]
    earlier = note.earlier
    parts = [f"going on with run {state.run_id} (it was {note.previous_status.value}): "
             f"{note.attempts_before} attempt(s) and {earlier.llm_calls} model call(s) kept "
             f"from it ({earlier.tokens:,} tokens)"]
    if note.reexecuted is not None:
        parts.append(f"attempt {note.reexecuted} is executed again (a checkpoint keeps "
                     "answers, not verdicts)")
    if note.baseline_retaken:
        parts.append("the baseline is taken again")
    if note.recorded_calls:
        parts.append(f"{note.recorded_calls} recorded answer(s) are played back while the "
                     "requests are the same")
    more = MoreBudget(note.more_attempts, note.more_tokens, note.more_usd)
    if more:
        parts.append(f"given {more.described()}")
    return "; ".join(parts)
