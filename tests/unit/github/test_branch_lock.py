"""The lock that keeps two runs from writing one branch at once, through the real adapter
against the GitHub stand-in: two applies at the same time (threads, each its own client),
a lock left by a job that died, one held too long, and the lock commit's note."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

import pytest

from selfcorrect_action.action.writes.apply import Applied, apply_plan
from selfcorrect_action.github.branch_lock import (
    LockTiming,
    lock_message,
    lock_ref,
    read_note,
)
from selfcorrect_action.github.forge import ForgeError
from tests.fakes.github_server import DEFAULT_REPO, FakeGitHub
from tests.unit.action.writes.test_apply import BRANCH, plan
from tests.unit.github.conftest import MakeForge

REPO_PATH = f"/repos/{DEFAULT_REPO}"
QUICK = LockTiming(poll_s=0.05, wait_s=20)


def _lock_commit(github: FakeGitHub, message: str) -> str:
    """A lock commit as another run would have left it."""
    sha = github.commit_files(DEFAULT_REPO, "lock-scratch", {"x": "x"}, message=message)
    github.git(DEFAULT_REPO, "update-ref", lock_ref(BRANCH), sha)
    github.git(DEFAULT_REPO, "update-ref", "-d", "refs/heads/lock-scratch")
    return sha


def test_two_runs_writing_one_branch_at_once_commit_one_after_the_other(
    fake_github: FakeGitHub, make_forge: MakeForge
) -> None:
    """A retry on the pull request and a new label on its issue, applying together: the
    second waits for the first, then commits on top of it. Without the lock the second
    branch move was refused as not a fast-forward and that run's result was lost."""
    fake_github.add_issue(DEFAULT_REPO, "x", "body")
    fake_github.delay("POST", f"{REPO_PATH}/git/trees", 1.0)  # the first holds the lock a while
    results: dict[str, Applied | BaseException] = {}

    def run(name: str, content: str) -> None:
        try:
            results[name] = apply_plan(plan(content), make_forge(), lock_timing=QUICK)
        except BaseException as exc:  # reported below, in the test's thread
            results[name] = exc

    first = threading.Thread(target=run, args=("first", "print('first')\n"))
    first.start()
    deadline = time.monotonic() + 10
    while not fake_github.requests_to("POST", f"{REPO_PATH}/git/trees"):
        assert time.monotonic() < deadline, "the first run never started its commit"
        time.sleep(0.01)
    second = threading.Thread(target=run, args=("second", "print('second')\n"))
    second.start()
    first.join(timeout=30)
    second.join(timeout=30)
    one, two = results["first"], results["second"]
    assert isinstance(one, Applied) and isinstance(two, Applied), results
    assert one.commit_sha and two.commit_sha and not one.held_back and not two.held_back
    assert fake_github.git(DEFAULT_REPO, "rev-parse", f"{two.commit_sha}^").strip() == (
        one.commit_sha)
    assert fake_github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"] == two.commit_sha
    assert fake_github.read_file(DEFAULT_REPO, BRANCH, "scripts/x.py") == b"print('second')\n"
    assert len(fake_github.pulls(DEFAULT_REPO)) == 1
    assert lock_ref(BRANCH) not in fake_github.refs(DEFAULT_REPO)  # released


def test_a_lock_left_by_a_job_that_died_is_taken_over_once_expired(
    fake_github: FakeGitHub, make_forge: MakeForge
) -> None:
    fake_github.add_issue(DEFAULT_REPO, "x", "body")
    dead = _lock_commit(fake_github, lock_message(
        BRANCH, "issue #1, run dead", datetime.now(UTC) - timedelta(seconds=1)))
    applied = apply_plan(plan(), make_forge(), lock_timing=QUICK)
    assert applied.commit_sha is not None
    assert lock_ref(BRANCH) not in fake_github.refs(DEFAULT_REPO)
    # Taken over by fast-forwarding to a child of the dead lock: a compare-and-swap.
    patches = fake_github.requests_to("PATCH", f"{REPO_PATH}/git/{lock_ref(BRANCH)}")
    assert [r.status for r in patches] == [200] and patches[0].body["force"] is False
    taken = patches[0].body["sha"]
    assert fake_github.git(DEFAULT_REPO, "rev-parse", f"{taken}^").strip() == dead


def test_a_lock_held_longer_than_the_wait_is_a_clear_error_and_nothing_is_written(
    fake_github: FakeGitHub, make_forge: MakeForge
) -> None:
    fake_github.add_issue(DEFAULT_REPO, "x", "body")
    held = _lock_commit(fake_github, lock_message(
        BRANCH, "issue #1, run 77", datetime.now(UTC) + timedelta(minutes=5)))
    with pytest.raises(ForgeError) as caught:
        apply_plan(plan(), make_forge(), lock_timing=LockTiming(poll_s=0.05, wait_s=0.3))
    assert "being written by another selfcorrect run (issue #1, run 77)" in caught.value.message
    assert caught.value.hint and "expires by itself" in caught.value.hint
    assert f"refs/heads/{BRANCH}" not in fake_github.refs(DEFAULT_REPO)
    assert fake_github.refs(DEFAULT_REPO)[lock_ref(BRANCH)] == held  # not ours to remove


def test_the_lock_is_released_when_the_write_fails(fake_github: FakeGitHub,
                                                   make_forge: MakeForge) -> None:
    fake_github.add_issue(DEFAULT_REPO, "x", "body")
    fake_github.fail("POST", f"{REPO_PATH}/pulls", 500, times=None)
    with pytest.raises(ForgeError):
        apply_plan(plan(), make_forge(), lock_timing=QUICK)
    assert lock_ref(BRANCH) not in fake_github.refs(DEFAULT_REPO)


def test_a_lock_note_reads_back_and_an_unreadable_one_counts_as_expired() -> None:
    now = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
    note = read_note(lock_message("selfcorrect/issue-1", "issue #1, run 9",
                                  now + timedelta(minutes=10)))
    assert note.holder == "issue #1, run 9" and not note.expired(now)
    assert note.expired(now + timedelta(minutes=10))
    garbled = read_note("selfcorrect: lock\n\nExpires: soon\n")
    assert garbled.holder == "an unknown run" and garbled.expired(now)
