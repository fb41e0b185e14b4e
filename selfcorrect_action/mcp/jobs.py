"""Work the MCP server does on threads of its own (a run, a script), and a queue that runs at
most N runs at once. Plain threading, no MCP: the server's async tools poll what a job
heard and hand its result back.

A job never takes the server down: an expected failure (SelfcorrectError) becomes its error
with the CLI's message and hint; anything else is a bug, reported as the CLI reports one
(crash.py: a short message on stderr, the redacted traceback in a file) and the job ends
with an internal error.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Literal, Self

from pydantic import BaseModel

from selfcorrect_action.crash import EXIT_INTERNAL, report_crash
from selfcorrect_action.errors import Interrupted, SelfcorrectError, UsageError
from selfcorrect_action.mcp.models import ErrorInfo, ProgressLine
from selfcorrect_action.runs.cancel import CancelToken

Phase = Literal["queued", "running", "finished", "cancelled"]
Work = Callable[["Job"], BaseModel]
MAX_EVENTS_KEPT = 1000  # a long run's progress lines, the oldest dropped first


class Job:
    """One piece of work from queued to finished: what it said on the way, how it ended."""

    def __init__(self, job_id: str, label: str, work: Work) -> None:
        self.id = job_id
        self.label = label
        self.token = CancelToken()  # the work's: a stop cancels it
        self._work = work
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._phase: Phase = "queued"
        self._events: collections.deque[ProgressLine] = collections.deque(maxlen=MAX_EVENTS_KEPT)
        self._heard = 0
        self._result: BaseModel | None = None
        self._error: ErrorInfo | None = None

    def on_event(self, step: str, message: str) -> None:
        """What the work says while it runs; words from a call abandoned after the job
        ended (a model call that ends late) are not its own any more."""
        with self._lock:
            if self._phase == "running":
                self._heard += 1
                self._events.append(ProgressLine(index=self._heard, step=step,
                                                 message=message))

    def run(self, *, environ: Mapping[str, str], secrets: Sequence[str]) -> None:
        """Do the work here, unless it was cancelled while it waited."""
        with self._lock:
            if self._phase != "queued":
                return
            self._phase = "running"
        try:
            self._end(result=self._work(self))
        except SelfcorrectError as exc:
            self._end(error=ErrorInfo.of(exc))
        except Interrupted as exc:  # the work let its cancel through rather than report it
            self._end(error=ErrorInfo(error=f"interrupted by {exc.described}",
                                      exit_code=exc.exit_code))
        except Exception as exc:  # a bug: this job ends, the server goes on
            report_crash(exc, secrets=secrets, environ=environ)
            self._end(error=ErrorInfo(
                error=f"selfcorrect failed with an internal error ({type(exc).__name__})",
                hint="this is a bug: the server's log names the file holding its "
                "traceback; please report it", exit_code=EXIT_INTERNAL))

    def stop(self) -> bool:
        """Cancel it: one that waits never starts; one that runs stops at once, its
        reports written. False when it had ended already."""
        with self._lock:
            if self._phase == "queued":
                self._phase = "cancelled"
                self._done.set()
                return True
            if self._phase != "running":
                return False
        self.token.cancel()
        return True

    def wait(self, timeout_s: float | None = None) -> bool:
        return self._done.wait(timeout_s)

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def result(self) -> BaseModel | None:
        return self._result

    @property
    def error(self) -> ErrorInfo | None:
        return self._error

    def events(self, after: int = 0) -> list[ProgressLine]:
        """The progress lines numbered above `after` (numbers start at 1)."""
        with self._lock:
            return [line for line in self._events if line.index > after]

    @property
    def heard(self) -> int:
        return self._heard

    def _end(self, *, result: BaseModel | None = None, error: ErrorInfo | None = None
             ) -> None:
        with self._lock:
            self._result, self._error = result, error
            self._phase = "finished"
        self._done.set()


class JobQueue:
    """Runs jobs on `workers` threads, in the order they came; at most `max_waiting` wait.
    Constructing it starts nothing; `start()` starts the workers, `close()` cancels every
    job and waits for the running ones to end (their reports written, containers gone).

    A waiting job's position is how many runs must end before it starts: the running ones
    and those queued before it, less the workers left over (issue 38: a second run said 0
    while the first ran, then waited for it all the same)."""

    def __init__(self, *, workers: int, max_waiting: int, environ: Mapping[str, str],
                 secrets: Sequence[str]) -> None:
        if workers < 1 or max_waiting < 0:
            raise ValueError("a queue needs at least one worker and a waiting room >= 0")
        self._workers = workers
        self._max_waiting = max_waiting
        self._environ = environ
        self._secrets = list(secrets)
        self._jobs: dict[str, Job] = {}
        self._waiting: collections.deque[Job] = collections.deque()
        self._active = 0  # jobs a worker has taken, until they end
        self._ready = threading.Condition()
        self._threads: list[threading.Thread] = []
        self._beside: list[tuple[Job, threading.Thread]] = []
        self._closed = False

    def start(self) -> Self:
        for number in range(self._workers):
            thread = threading.Thread(target=self._serve, name=f"selfcorrect-run-{number + 1}",
                                      daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def submit(self, job: Job) -> int:
        """Queue `job`; how many runs must end before it starts (0: a worker is free for
        it). Refused when the waiting room is full."""
        with self._ready:
            if self._closed:
                raise UsageError("the server is shutting down and takes no more runs")
            # Jobs cancelled while waiting stay in the deque until a worker drops them.
            waiting = sum(1 for queued in self._waiting if queued.phase == "queued")
            if waiting >= self._max_waiting:
                raise UsageError(
                    f"{waiting} runs are waiting already, the most this server queues",
                    hint="wait for one to finish (get_run), or cancel one (cancel_run)")
            self._jobs[job.id] = job
            self._waiting.append(job)
            self._ready.notify()
            return self._ahead(job)

    def get(self, job_id: str) -> Job | None:
        with self._ready:
            return self._jobs.get(job_id)

    def jobs(self) -> list[Job]:
        """Every job, the latest first."""
        with self._ready:
            return list(reversed(self._jobs.values()))

    def start_beside(self, job: Job) -> None:
        """Run `job` now on a thread of its own, outside the queue and its limit (a single
        script, not a run); `close()` stops it and waits for it all the same."""
        thread = threading.Thread(target=job.run, kwargs={"environ": self._environ,
                                                          "secrets": self._secrets},
                                  name=f"selfcorrect-job-{job.id}", daemon=True)
        with self._ready:
            if self._closed:
                raise UsageError("the server is shutting down and takes no more work")
            self._beside = [(other, t) for other, t in self._beside if t.is_alive()]
            self._beside.append((job, thread))
        thread.start()

    def position(self, job: Job) -> int | None:
        """How many runs must end before it starts; None when it is not waiting."""
        with self._ready:
            return self._ahead(job) if job.phase == "queued" and job in self._waiting \
                else None

    def _ahead(self, job: Job) -> int:
        """Under the lock: the runs that must end before `job` (waiting) starts."""
        before = 0
        for queued in self._waiting:
            if queued is job:
                break
            before += queued.phase == "queued"
        return max(0, self._active + before - self._workers + 1)

    def close(self, timeout_s: float) -> None:
        with self._ready:
            self._closed = True
            jobs = [*self._jobs.values(), *(job for job, _ in self._beside)]
            threads = [*self._threads, *(thread for _, thread in self._beside)]
            self._ready.notify_all()
        for job in jobs:
            job.stop()
        for thread in threads:
            thread.join(timeout_s)

    def _serve(self) -> None:
        while True:
            with self._ready:
                while not self._waiting and not self._closed:
                    self._ready.wait()
                if self._closed and not self._waiting:
                    return
                job = self._waiting.popleft()
                if job.phase != "queued":  # cancelled while it waited
                    continue
                self._active += 1
            try:
                job.run(environ=self._environ, secrets=self._secrets)
            finally:
                with self._ready:
                    self._active -= 1
