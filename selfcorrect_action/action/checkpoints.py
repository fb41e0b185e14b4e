"""Runs that go on across jobs (issue 37, item 4): a task's checkpoint kept in the repository
as the run goes (after the plan and every attempt, and once more when it ends unfinished),
removed when it passes, and found again by the next job: `/selfcorrect resume` downloads it
and the core goes on from it (runs/checkpoint.py); a re-label or a retry is told what it
would save.

The checkpoint folder is the core's (checkpoint.json and exchanges.jsonl, redacted there as
every report is); this module only carries it between the run's scratch folder and the ref
(github/checkpoint_refs.py reads, action/writes/checkpoints.py writes, behind the door).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from selfcorrect_action import __version__
from selfcorrect_action.action.env import ActionEnv
from selfcorrect_action.action.writes.checkpoints import CheckpointSlot
from selfcorrect_action.github.checkpoint_refs import (
    FILE_NAMES,
    CheckpointNote,
    Found,
    checkpoint_ref,
    find_checkpoint,
)
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.runs.checkpoint import CHECKPOINT_FILE, read_checkpoint

log = logging.getLogger(__name__)
Say = Callable[[str, str], None]


class CheckpointKeeper:
    """Keeps one task run's checkpoint folder (found under `root`, the run's
    `checkpoint_dir`) in the repository as the run goes."""

    def __init__(self, slot: CheckpointSlot, root: Path, *, key: str, label: str,
                 public: bool, say: Say) -> None:
        self.slot, self.root, self.key, self.label = slot, root, key, label
        self.public = public
        self._say = say
        self.saved: CheckpointNote | None = None  # the last note kept

    def on_state(self, state: RunState) -> None:
        """After the plan and every attempt, once the core saved its checkpoint folder."""
        folder = checkpoint_folder(self.root)
        if folder is None:
            return
        note = self._note(folder, state)
        files = {name: (folder / name).read_bytes() for name in FILE_NAMES
                 if (folder / name).is_file()}
        if self.slot.save(note, files):
            if self.saved is None:
                self._say("checkpoint", f"kept in {checkpoint_ref(self.key)} as the run goes"
                          + (" (a public repository: anyone can read it; secrets are "
                             "redacted from it)" if self.public else ""))
            self.saved = note

    def finish(self, state: RunState) -> None:
        """The run ended: passed, its checkpoint goes; otherwise the folder is kept once
        more (a run that ran out can be given more; an interrupted one goes on)."""
        if state.status is Status.PASSED:
            self.slot.drop()
            self.saved = None
            return
        self.on_state(state)

    def comment_note(self) -> str:
        """What the run's comment says of its checkpoint ("" when none is kept)."""
        if self.saved is None:
            return ""
        public = (" This repository is public: anyone can read the checkpoint (secrets are "
                  "redacted from it, as from every report)." if self.public else "")
        return (f"A checkpoint of this run is kept in `{checkpoint_ref(self.key)}` (after "
                f"{self.saved.saved()}). Comment `/selfcorrect resume` to go on from it, "
                "paying only for the calls not yet made, or `/selfcorrect resume more "
                "attempts N` when the budget ran out; `/selfcorrect retry` starts afresh."
                + public)

    def _note(self, folder: Path, state: RunState) -> CheckpointNote:
        header = read_checkpoint(folder).header
        return CheckpointNote(
            key=self.key, label=self.label, run_id=header.run_id,
            version=header.selfcorrect_version, spec_sha256=header.spec_sha256,
            approval_sha256=header.approval_sha256 or "", status=state.status.value,
            attempts=len(state.attempts), tokens=state.usage.tokens,
            cost_usd=state.usage.cost_usd, llm_calls=state.usage.llm_calls,
            saved_at=datetime.now(UTC))


def checkpoint_folder(root: Path) -> Path | None:
    """The folder holding checkpoint.json: `root` itself, or the one folder in it."""
    if (root / CHECKPOINT_FILE).is_file():
        return root
    found = sorted(path.parent for path in root.glob(f"*/{CHECKPOINT_FILE}"))
    return found[-1] if found else None


@dataclass(frozen=True)
class Lookup:
    """A usable checkpoint under a key (`found`), or why there is none."""

    found: Found | None
    why_not: str


def look_up(env: ActionEnv, key: str, *, approval: str | None,
            clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> Lookup:
    """The checkpoint a run of `key` could go on from. A stale one (another version, too
    old, unreadable) is removed; one made for another approved text of the issue is not
    usable (the core would refuse it too)."""
    found = find_checkpoint(env.forge, key)
    if found is None:
        return Lookup(None, f"no checkpoint is kept for it ({checkpoint_ref(key)})")
    stale = found.stale(now=clock(), version=__version__)
    if stale is not None:
        env.door.checkpoints(key).remove_stale(found, stale)
        return Lookup(None, f"its checkpoint ({found.ref}) is not usable and was removed: "
                      f"{stale}")
    assert found.note is not None  # stale() said it is readable
    if (approval or "") != found.note.approval_sha256:
        return Lookup(None, f"its checkpoint ({found.ref}) was made for another text of the "
                      "issue than the one approved now")
    if found.note.status == Status.PASSED.value:
        return Lookup(None, f"its checkpoint ({found.ref}) is of a run that passed")
    return Lookup(found, "")
