"""The MCP server's jobs and run queue, on real threads: at most N runs at once, the rest in
order; a cancel keeps a queued job from starting and stops a running one; a job's failure,
expected or a bug, ends that job only."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from selfcorrect_action.errors import SandboxUnavailable, UsageError
from selfcorrect_action.mcp.jobs import Job, JobQueue

WAIT_S = 10.0
TOKEN = "ghp_" + "a" * 36


class Done(BaseModel):
    name: str


class Gate:
    """Work that runs until let through (or cancelled), noting when it starts."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.release = threading.Event()
        self.running = threading.Semaphore(0)
        self._lock = threading.Lock()
        self.at_once = 0
        self.most_at_once = 0

    def job(self, name: str) -> Job:
        def work(job: Job) -> Done:
            with self._lock:
                self.started.append(name)
                self.at_once += 1
                self.most_at_once = max(self.most_at_once, self.at_once)
            self.running.release()
            job.on_event("execute", f"{name} running")
            with job.token.while_running(self.release.set):
                self.release.wait(WAIT_S)
            with self._lock:
                self.at_once -= 1
            return Done(name=name)
        return Job(name, name, work)


@pytest.fixture
def crash_home(tmp_path: Path) -> dict[str, str]:
    return {"XDG_CACHE_HOME": str(tmp_path / "cache")}


@pytest.fixture
def queue(crash_home: dict[str, str]) -> Iterator[JobQueue]:
    runs = JobQueue(workers=1, max_waiting=2, environ=crash_home, secrets=[]).start()
    yield runs
    runs.close(WAIT_S)


def test_one_run_at_a_time_in_the_order_they_came(crash_home: dict[str, str]) -> None:
    queue = JobQueue(workers=1, max_waiting=3, environ=crash_home, secrets=[]).start()
    gate = Gate()
    jobs = [gate.job(name) for name in ("a", "b", "c")]
    positions = [queue.submit(job) for job in jobs]
    assert gate.running.acquire(timeout=WAIT_S)
    assert positions == [0, 1, 2], "whether or not 'a' has left the queue already"
    assert [job.phase for job in jobs] == ["running", "queued", "queued"]
    assert queue.position(jobs[2]) == 2
    gate.release.set()
    assert all(job.wait(WAIT_S) for job in jobs)
    assert gate.started == ["a", "b", "c"] and gate.most_at_once == 1
    assert [job.result for job in jobs] == [Done(name=n) for n in "abc"]
    queue.close(WAIT_S)


def test_two_workers_run_two_at_once(crash_home: dict[str, str]) -> None:
    runs = JobQueue(workers=2, max_waiting=4, environ=crash_home, secrets=[]).start()
    gate = Gate()
    jobs = [gate.job(name) for name in ("a", "b", "c")]
    for job in jobs:
        runs.submit(job)
    assert gate.running.acquire(timeout=WAIT_S) and gate.running.acquire(timeout=WAIT_S)
    assert sorted(job.phase for job in jobs) == ["queued", "running", "running"]
    gate.release.set()
    assert all(job.wait(WAIT_S) for job in jobs)
    assert gate.most_at_once == 2
    runs.close(WAIT_S)


def test_waiting_before_counts_the_runs_that_must_end_first(
        crash_home: dict[str, str]) -> None:
    """Issue 38: a second start_run said `waiting_before: 0` while the first ran, and it
    waited for that one all the same. A run starts when a worker is free: it waits for
    the running runs and those queued before it, less the workers left over."""
    one = JobQueue(workers=1, max_waiting=3, environ=crash_home, secrets=[]).start()
    gate = Gate()
    first, second = gate.job("first"), gate.job("second")
    assert one.submit(first) == 0
    assert gate.running.acquire(timeout=WAIT_S)
    assert one.submit(second) == 1 and one.position(second) == 1
    assert one.position(first) is None, "running, not waiting"
    gate.release.set()
    assert second.wait(WAIT_S) and one.position(second) is None
    one.close(WAIT_S)

    two = JobQueue(workers=2, max_waiting=3, environ=crash_home, secrets=[]).start()
    gate = Gate()
    a, b, c = gate.job("a"), gate.job("b"), gate.job("c")
    assert (two.submit(a), two.submit(b)) == (0, 0), "a worker is free for each"
    assert gate.running.acquire(timeout=WAIT_S) and gate.running.acquire(timeout=WAIT_S)
    assert two.submit(c) == 1
    gate.release.set()
    assert c.wait(WAIT_S)
    two.close(WAIT_S)


def test_a_full_waiting_room_refuses_more(queue: JobQueue) -> None:
    gate = Gate()
    queue.submit(gate.job("running"))
    assert gate.running.acquire(timeout=WAIT_S)
    first = gate.job("w1")
    queue.submit(first)
    queue.submit(gate.job("w2"))
    with pytest.raises(UsageError, match="2 runs are waiting already") as refused:
        queue.submit(gate.job("w3"))
    assert "cancel_run" in (refused.value.hint or "")
    first.stop()
    assert queue.submit(gate.job("w3")) == 2, "a cancelled run no longer takes a place"
    gate.release.set()


def test_a_cancelled_job_that_waits_never_starts(queue: JobQueue) -> None:
    gate = Gate()
    running, waiting = gate.job("running"), gate.job("waiting")
    queue.submit(running)
    queue.submit(waiting)
    assert gate.running.acquire(timeout=WAIT_S)
    assert waiting.stop() and waiting.phase == "cancelled" and waiting.wait(0)
    assert queue.position(waiting) is None
    gate.release.set()
    assert running.wait(WAIT_S)
    assert gate.started == ["running"]


def test_a_cancelled_running_job_is_stopped_through_its_token(queue: JobQueue) -> None:
    gate = Gate()
    job = gate.job("long")
    queue.submit(job)
    assert gate.running.acquire(timeout=WAIT_S)
    assert job.stop()
    assert job.wait(WAIT_S) and job.token.cancelled
    assert job.phase == "finished" and not job.stop(), "an ended job cannot be stopped"


def test_progress_lines_are_numbered_and_none_come_after_the_end(queue: JobQueue) -> None:
    def work(job: Job) -> Done:
        for step in ("plan", "generate", "execute"):
            job.on_event(step, f"{step} done")
        return Done(name="x")

    job = Job("x", "x", work)
    job.on_event("early", "before it runs: not its own")
    queue.submit(job)
    assert job.wait(WAIT_S)
    job.on_event("llm", "a model call that ended late")
    assert [(line.index, line.step) for line in job.events()] == [
        (1, "plan"), (2, "generate"), (3, "execute")]
    assert [line.step for line in job.events(after=2)] == ["execute"]
    assert job.heard == 3


def test_an_expected_failure_is_the_jobs_error_with_the_clis_words(queue: JobQueue) -> None:
    def work(job: Job) -> Done:
        raise SandboxUnavailable("no Docker engine answers", hint="start a Docker engine")

    job = Job("x", "x", work)
    queue.submit(job)
    assert job.wait(WAIT_S)
    assert job.error is not None and job.result is None
    assert (job.error.error, job.error.hint, job.error.exit_code) == (
        "no Docker engine answers", "start a Docker engine", 3)


def test_a_bug_ends_its_job_only(queue: JobQueue, crash_home: dict[str, str],
                                 capsys: pytest.CaptureFixture[str]) -> None:
    def work(job: Job) -> Done:
        raise RuntimeError(f"a bug with the token {TOKEN}")

    broken, next_one = Job("broken", "broken", work), Job("next", "next",
                                                           lambda job: Done(name="next"))
    queue.submit(broken)
    queue.submit(next_one)
    assert broken.wait(WAIT_S) and next_one.wait(WAIT_S)
    assert broken.error is not None and broken.error.exit_code == 3
    assert "internal error (RuntimeError)" in broken.error.error
    assert TOKEN not in broken.error.error, "the bug's own text stays in the crash log"
    assert next_one.result == Done(name="next"), "the queue went on"
    logs = list((Path(crash_home["XDG_CACHE_HOME"]) / "selfcorrect").glob("crash-*.log"))
    assert len(logs) == 1 and "RuntimeError" in logs[0].read_text()
    assert TOKEN not in logs[0].read_text(), "the traceback is redacted"
    assert "RuntimeError" in capsys.readouterr().err


def test_closing_cancels_every_job_and_waits_for_the_running_ones(
        crash_home: dict[str, str]) -> None:
    runs = JobQueue(workers=1, max_waiting=2, environ=crash_home, secrets=[]).start()
    gate = Gate()
    running, waiting = gate.job("running"), gate.job("waiting")
    runs.submit(running)
    runs.submit(waiting)
    assert gate.running.acquire(timeout=WAIT_S)
    runs.close(WAIT_S)
    assert running.phase == "finished" and running.token.cancelled
    assert waiting.phase == "cancelled" and gate.started == ["running"]
    with pytest.raises(UsageError, match="shutting down"):
        runs.submit(gate.job("late"))


def test_a_job_beside_the_queue_runs_at_once_and_is_stopped_on_close(
        crash_home: dict[str, str]) -> None:
    runs = JobQueue(workers=1, max_waiting=2, environ=crash_home, secrets=[]).start()
    gate = Gate()
    run, script = gate.job("run"), gate.job("script")
    runs.submit(run)
    assert gate.running.acquire(timeout=WAIT_S)
    runs.start_beside(script)  # the one worker is busy: it runs all the same
    assert gate.running.acquire(timeout=WAIT_S) and gate.most_at_once == 2
    assert runs.get("script") is None and runs.jobs() == [run], "not one of the runs"
    runs.close(WAIT_S)
    assert script.phase == "finished" and script.token.cancelled
    with pytest.raises(UsageError, match="shutting down"):
        runs.start_beside(gate.job("late"))
