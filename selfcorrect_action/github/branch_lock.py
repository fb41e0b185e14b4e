"""One writer per branch at a time, across workflow runs: a lock held in the repository
itself, as a ref that GitHub creates for one caller only.

Why: a `/selfcorrect retry` on a pull request and a new label on its issue write the same
branch from different concurrency groups (a comment's expression cannot know the issue's
number), so two jobs may apply their plans at once. Each apply reads the branch's head,
commits on it and fast-forwards it: interleaved, the second move is refused ("not a fast
forward") and that run's result is lost. Held around an apply, the lock makes the second
wait, then commit on top of the first.

How: `refs/selfcorrect/locks/<branch>` pointing at a commit whose message names the holder
and when the lock expires. Creating a ref that exists fails (422), so one creator wins.
A lock whose holder died (a job killed mid-apply) expires: it is taken over by
fast-forwarding the ref to a child of the expired lock commit, which GitHub refuses if
someone else took it over first; fast-forward is the only compare-and-swap REST offers on
refs. Released by deleting the ref, only while it is still ours.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from selfcorrect_action.github.forge import Forge, ForgeError

log = logging.getLogger(__name__)
LOCK_PREFIX = "refs/selfcorrect/locks/"
TTL_S = 600.0  # an apply takes seconds; a holder silent this long has died
WAIT_S = 600.0
POLL_S = 5.0
_HOLDER = re.compile(r"^Holder: (?P<holder>.+)$", re.MULTILINE)
_EXPIRES = re.compile(r"^Expires: (?P<at>\S+)$", re.MULTILINE)


@dataclass(frozen=True)
class LockNote:
    """What a lock commit says: who holds the lock, until when."""

    holder: str
    expires: datetime | None  # None: unreadable, so treated as expired

    def expired(self, now: datetime) -> bool:
        return self.expires is None or now >= self.expires


def lock_ref(branch: str) -> str:
    return LOCK_PREFIX + branch


def lock_message(branch: str, holder: str, expires: datetime) -> str:
    return (f"selfcorrect: lock on {branch}\n\nHolder: {holder}\n"
            f"Expires: {expires.astimezone(UTC).isoformat(timespec='seconds')}\n")


def read_note(message: str) -> LockNote:
    holder = _HOLDER.search(message or "")
    expires = _EXPIRES.search(message or "")
    try:
        at = datetime.fromisoformat(expires.group("at")) if expires else None
    except ValueError:
        at = None
    if at is not None and at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return LockNote(holder.group("holder") if holder else "an unknown run", at)


@dataclass(frozen=True)
class LockTiming:
    ttl_s: float = TTL_S
    wait_s: float = WAIT_S
    poll_s: float = POLL_S
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    sleep: Callable[[float], None] = time.sleep


DEFAULT_TIMING = LockTiming()


@contextmanager
def branch_lock(forge: Forge, branch: str, *, holder: str, anchor_sha: str,
                timing: LockTiming = DEFAULT_TIMING) -> Iterator[None]:
    """Hold the lock on `branch` for the body. `anchor_sha` is any commit of the repository
    (a new lock commit takes its tree); `holder` is said to whoever waits."""
    ref = lock_ref(branch)
    mine = _acquire(forge, branch, ref, holder=holder, anchor_sha=anchor_sha,
                    ttl_s=timing.ttl_s, wait_s=timing.wait_s, poll_s=timing.poll_s,
                    clock=timing.clock, sleep=timing.sleep)
    try:
        yield
    finally:
        try:
            forge.delete_ref(ref, mine)
        except ForgeError as exc:  # it expires by itself; the body's outcome stands
            log.warning("could not release the lock on %s: %s", branch, exc.message)


def _acquire(forge: Forge, branch: str, ref: str, *, holder: str, anchor_sha: str,
             ttl_s: float, wait_s: float, poll_s: float, clock: Callable[[], datetime],
             sleep: Callable[[float], None]) -> str:
    """The sha of our lock commit, once the ref points at it."""
    started = clock()
    while True:
        now = clock()
        message = lock_message(branch, holder, now + timedelta(seconds=ttl_s))
        current = forge.read_ref(ref)
        if current is None:
            anchor = forge.read_commit(anchor_sha)
            mine = forge.write_commit(anchor.sha, anchor.tree_sha, message)
            if forge.create_ref(ref, mine):
                return mine
            continue  # taken between our read and our create: look again
        note = read_note(current.message)
        if note.expired(now):
            # A child of the lock we saw: the fast-forward fails if anyone moved it since.
            mine = forge.write_commit(current.sha, current.tree_sha, message)
            if forge.advance_ref(ref, mine):
                return mine
            continue
        if (now - started).total_seconds() >= wait_s:
            raise ForgeError(
                f"{branch} is being written by another selfcorrect run ({note.holder}), which "
                f"did not finish within {wait_s:.0f} s",
                hint="re-run the job later; a lock left by a job that died expires by itself "
                f"at {note.expires:%Y-%m-%d %H:%M:%S} UTC" if note.expires else None)
        sleep(poll_s)
