"""Writing a run's checkpoint into the repository (issue 37, item 4): the door's writes of
`refs/selfcorrect/checkpoints/<key>` (github/checkpoint_refs.py has the format and reads).

Each save is a commit holding the checkpoint folder's two files, made through the Git Data
API (blobs, a tree, a commit, then the ref). The commits of one run are chained: each
save's parent is the one before, so moving the ref is a fast-forward, the only
compare-and-swap GitHub's REST API has on refs (branch_lock.py relies on it too): a job
that finds the ref moved by another run stops keeping its own instead of writing over the
other's. Chaining costs little room: each save's recording is the last one plus the new
exchanges, which git stores as a delta, and the chain ends when the run does (a passed run
deletes the ref; a fresh run starts a new chain without a parent). A parentless commit per
save would keep less history but could only be moved by a forced update, with no check of
what it overwrites.

Over the size cap a save is skipped and said once: the checkpoint already kept (an earlier
step's, complete and consistent) stays, which still saves the calls up to that step,
whereas a state without its recording would save none (the resumed run would pay every
call again).

A save that fails is logged and never ends the run: a checkpoint is insurance, the run is
what was paid for. In `mode: plan` nothing is kept (the token is read-only): NoCheckpoints.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol

from selfcorrect_action.github.checkpoint_refs import (
    CHECKPOINT_PREFIX,
    MAX_CHECKPOINT_BYTES,
    CheckpointNote,
    Found,
    checkpoint_ref,
    describe_files,
    parse_note,
    render_note,
)
from selfcorrect_action.github.forge import FileChange, Forge, ForgeError

log = logging.getLogger(__name__)
Say = Callable[[str], None]
# Stale checkpoints of other keys looked at (and removed) per job: a sweep costs one request
# each, and every job that keeps a checkpoint sweeps a few more.
SWEEP_LIMIT = 10


class CheckpointSlot(Protocol):
    """Where one task's checkpoint goes, as the door gives it."""

    @property
    def keeps(self) -> bool:
        """Whether saves are kept at all (False in mode plan)."""
        ...

    def save(self, note: CheckpointNote, files: dict[str, bytes]) -> bool:
        """Keep these files as the key's checkpoint; whether they are kept now."""
        ...

    def drop(self) -> None:
        """The task passed: its checkpoint, whoever wrote it, is removed."""
        ...

    def remove_stale(self, found: Found, why: str) -> None:
        """An unusable checkpoint found under a key is removed, and said why."""
        ...


class RefCheckpoints:
    """`mode: run`: the checkpoint of one key, kept as a ref. `start_from`: the commit a
    resumed run was downloaded from (its saves chain on it); None for a fresh run, whose
    first save replaces whatever the key held."""

    keeps = True

    def __init__(self, forge: Forge, key: str, *, start_from: str | None, warn: Say,
                 version: str, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
                 ) -> None:
        self.forge, self.key, self.ref = forge, key, checkpoint_ref(key)
        self._head = start_from
        self._started = False
        self._lost = False
        self._too_big = False
        self._last: tuple[object, ...] = ()
        self._warn, self._version, self._clock = warn, version, clock

    def save(self, note: CheckpointNote, files: dict[str, bytes]) -> bool:
        if self._lost:
            return False
        stored = describe_files(files)
        if sum(f.size for f in stored) > MAX_CHECKPOINT_BYTES:
            self._say_too_big(note, sum(f.size for f in stored))
            return False
        if stored == self._last:
            return True  # nothing new since the last save (a run's end after its last step)
        note = note.model_copy(update={"files": stored, "saved_at": self._clock()})
        try:
            kept = self._write(note, files)
        except ForgeError as exc:
            then = ("this run keeps no checkpoint from now on" if self._lost
                    else "the next step tries again")
            self._warn(f"could not save the checkpoint of {note.label} ({self.ref}): "
                       f"{exc.message}; the run goes on, and {then}")
            return False
        if kept:
            self._last = stored
        return kept

    def drop(self) -> None:
        try:
            current = self.forge.read_ref(self.ref)
            if current is not None:
                self.forge.delete_ref(self.ref, current.sha)
        except ForgeError as exc:
            self._warn(f"could not remove the checkpoint {self.ref}: {exc.message}")

    def remove_stale(self, found: Found, why: str) -> None:
        log.info("removing the checkpoint %s: %s", found.ref, why)
        try:
            self.forge.delete_ref(found.ref, found.commit.sha)
        except ForgeError as exc:
            log.warning("could not remove the stale checkpoint %s: %s", found.ref, exc.message)

    def _write(self, note: CheckpointNote, files: dict[str, bytes]) -> bool:
        create = self._claim() if not self._started else False
        tree = self.forge.write_tree(None, [FileChange(path=name, content=data.decode())
                                            for name, data in sorted(files.items())])
        commit = self.forge.write_commit(self._head, tree, render_note(note))
        moved = (self.forge.create_ref(self.ref, commit) if create
                 else self.forge.advance_ref(self.ref, commit))
        if not moved:
            self._lost = True
            self._warn(f"the checkpoint {self.ref} was written by another run meanwhile: "
                       "this run keeps no checkpoint of its own from now on")
            return False
        self._head = commit
        if not self._started:
            self._started = True
            self._sweep()
        return True

    def _claim(self) -> bool:
        """Before the first save: whether the ref is to be created (else moved on from the
        commit the run was resumed from). A fresh run replaces an earlier run's checkpoint
        (the run that replaces it was asked for instead: a label, a retry)."""
        current = self.forge.read_ref(self.ref)
        if current is None:
            return True
        if current.sha == self._head:
            return False
        if self._head is not None:  # resumed from a commit that is no longer the ref's
            self._lost = True
            raise ForgeError(f"{self.ref} moved since this run was resumed from it")
        if not self.forge.delete_ref(self.ref, current.sha):
            self._lost = True
            raise ForgeError(f"{self.ref} moved while this run replaced it")
        return True

    def _sweep(self) -> None:
        """Checkpoints of other keys that are stale (another version, older than the
        limit, unreadable) are removed, a few per job."""
        try:
            refs = self.forge.list_refs(CHECKPOINT_PREFIX)
            for ref, sha in sorted(refs.items())[:SWEEP_LIMIT + 1]:
                if ref == self.ref:
                    continue
                commit = self.forge.read_commit(sha)
                found = Found(ref.removeprefix(CHECKPOINT_PREFIX), ref, commit,
                              parse_note(commit.message))
                why = found.stale(now=self._clock(), version=self._version)
                if why is not None:
                    self.remove_stale(found, why)
        except ForgeError as exc:  # a courtesy: the next job sweeps again
            log.warning("could not look for stale checkpoints: %s", exc.message)

    def _say_too_big(self, note: CheckpointNote, size: int) -> None:
        if self._too_big:
            return
        self._too_big = True
        kept = ("the one kept is from an earlier step" if self._head
                else "none is kept for this run")
        self._warn(f"the checkpoint of {note.label} after attempt {note.attempts} is not saved: "
                   f"its state and recording are {size / 2**20:.1f} MiB, over the cap of "
                   f"{MAX_CHECKPOINT_BYTES // 2**20} MiB; {kept}")


class NoCheckpoints:
    """`mode: plan`: a read-only token keeps no checkpoint; said once."""

    keeps = False

    def __init__(self, say: Say) -> None:
        self._say = say
        self._said = False

    def save(self, note: CheckpointNote, files: dict[str, bytes]) -> bool:
        if not self._said:
            self._said = True
            self._say("mode plan keeps no checkpoint (its token is read-only): an "
                      "interrupted run of this job cannot be resumed")
        return False

    def drop(self) -> None:
        return None

    def remove_stale(self, found: Found, why: str) -> None:
        log.info("the stale checkpoint %s stays: mode plan writes nothing (%s)", found.ref, why)
