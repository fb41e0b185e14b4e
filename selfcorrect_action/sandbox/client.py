"""The sandbox as the rest of selfcorrect sees it: `Sandbox.run(request, artifact_dir)`.

Constructing a Sandbox does no I/O; `start()` connects, reaps orphans left by crashed runs,
and `close()` waits for background removals. Use it as a context manager.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Literal

from selfcorrect_action.errors import SandboxError
from selfcorrect_action.sandbox import lifecycle, preload
from selfcorrect_action.sandbox.config import PLAIN_TESTS_PRELOAD, PYTEST_PRELOAD, PoolKey
from selfcorrect_action.sandbox.egress.policy import EgressSettings
from selfcorrect_action.sandbox.engine_api import Engine
from selfcorrect_action.sandbox.execution import execute
from selfcorrect_action.sandbox.host import ContainerHost
from selfcorrect_action.sandbox.lifecycle import Prepared
from selfcorrect_action.sandbox.models import PLAIN_TESTS_FLAG, ExecutionRequest, ExecutionResult

# How long a pre-started container waits for its request before its runner gives up.
POOL_IDLE_TIMEOUT_S = 300.0
# A container that runs one execution right away only waits out the request transfer.
COLD_IDLE_TIMEOUT_S = 60.0

# When the pool starts the container after the one a run takes:
# "on_take": as it is taken, so its start overlaps the script's run (back-to-back executions:
#   tests, benchmarks, API users, a replayed loop);
# "after_run": once the script has run (a live loop's, where a model call comes between
#   executions and the next container's imports must not take this script's CPU);
# "never": the caller fills the pool itself with `warm()` (one container per run, nothing
#   left over to start and remove unused).
Refill = Literal["on_take", "after_run", "never"]


class Sandbox(ContainerHost):
    """`run(request, artifact_dir)`: one execution in a container of its own. `stop()`,
    from another thread, ends the executions in progress and refuses the ones to come."""

    def __init__(self, engine: Engine, image: str, *, pool_size: int = 0,
                 max_workers: int = 4, egress: EgressSettings | None = None,
                 warm: bool = True, preload_set: tuple[str, ...] | None = None,
                 preload_guess: tuple[str, ...] | None = None,
                 refill: Refill = "on_take", plain_tests: bool = False) -> None:
        super().__init__(engine, image, pool_size=pool_size, max_workers=max_workers)
        # How the egress proxy resolves names and where credentials' secrets are read.
        self.egress = egress or EgressSettings()
        self._running: set[str] = set()  # ids of the containers executing a request now
        self._running_lock = threading.Lock()
        self._stopped = False
        # What the next pooled containers' warm interpreters import (sandbox/preload.py):
        # the latest script's imports; before the first, `preload_guess` (what the task
        # names), else the data libraries. `preload_set` fixes the set instead (a
        # benchmark's, a test's).
        self._preload: tuple[str, ...] = (
            () if not warm else preload_set if preload_set is not None
            else preload_guess if preload_guess is not None else preload.DEFAULT_PRELOAD)
        self._fixed = preload_set is not None
        self._warm = warm
        self._refill: Refill = refill
        # Whether the next boundary containers' warm interpreters leave pytest out: the
        # latest test run's launcher said its tests need none (evaluation/plain_tests.py);
        # before the first, `plain_tests`. A guess either way costs time, never a verdict.
        self._plain_tests = plain_tests

    def run(self, request: ExecutionRequest, artifact_dir: Path) -> ExecutionResult:
        if not self._warm:
            request = request.model_copy(update={"warm": False})
        if request.boundary is not None:
            self._plain_tests = PLAIN_TESTS_FLAG in request.argv
        following = preload.next_preload(request)
        if following is not None and self._warm and not self._fixed:
            self._preload = following  # before acquiring: the refill it starts uses it
        result = self._run_once(request, artifact_dir)
        source = preload.script_source(request)
        # A result without the runner's report may have been a warm start too.
        reportless = result.sandbox_note is not None and result.exit_code is None
        maybe_warm = result.start == "warm" or reportless
        if not maybe_warm or source is None or not (
                result.oom_killed or result.timed_out or reportless):
            return result
        unused = preload.unused(result.preloaded, source)
        with self._running_lock:
            stopped = self._stopped  # its runner was killed by stop(): nothing to decide
        if not unused or stopped:
            return result
        # The preloaded modules the script never imports held memory (and their import
        # time is not the script's): this verdict could differ from a cold start's, so a
        # cold start decides. Never the other way: a cold verdict stands as it is. A runner
        # that ended without its report counts too: gVisor ends the whole sandbox when it
        # runs out of memory, and Docker does not always flag that container OOMKilled
        # (seen: exit status 137, OOMKilled false).
        cold = self._run_once(request.model_copy(update={"warm": False}),
                              artifact_dir.with_name(artifact_dir.name + "-cold"))
        what = ("ran out of memory" if result.oom_killed else "timed out" if result.timed_out
                else "ended without its runner's report")
        return cold.model_copy(update={
            "start_note": f"run again cold: the warm start {what} with "
                          f"{', '.join(unused[:4])} preloaded, which the script does not import"})

    def _run_once(self, request: ExecutionRequest, artifact_dir: Path) -> ExecutionResult:
        self._refuse_if_stopped()
        self._require_runtime(request.runtime)
        key = self.key(request.limits, request.runtime, boundary=request.boundary is not None)
        prepared = self._acquire(key, refill=self._refill == "on_take")
        try:
            with self._running_lock:
                self._running.add(prepared.container_id)
            # A stop that came while the container was being made found nothing to kill.
            self._refuse_if_stopped()
            # A preload set this sandbox guessed (the data libraries, or the last script's
            # imports) is not waited for when the script uses none of it; a set its caller
            # fixed (a test's, a benchmark's) is honoured.
            preloaded = prepared.preload or ()
            if request.warm and not self._fixed and not preload.worth_waiting_for(
                    preloaded, preload.script_source(request)):
                result = execute(prepared, request.model_copy(update={"warm": False}),
                                 artifact_dir, self.egress)
                return result.model_copy(update={"start_note": (
                    f"the script imports none of {', '.join(preloaded[:4])}, which its "
                    "container preloaded: a fresh interpreter starts sooner")})
            return execute(prepared, request, artifact_dir, self.egress)
        finally:
            with self._running_lock:
                self._running.discard(prepared.container_id)
            self._teardown(prepared)
            if self._refill == "after_run":
                self._refill_pool(key)

    def stop(self) -> None:
        """SIGKILL the containers whose scripts are running now (a cancelled run must not
        wait out a script's timeout), and refuse every later execution: each `run` in
        progress returns early with what its killed runner left (its container removed as
        always), each later one raises SandboxError."""
        with self._running_lock:
            self._stopped = True
            running = list(self._running)
        for container_id in running:
            self._engine.kill(container_id)

    def _refuse_if_stopped(self) -> None:
        with self._running_lock:
            if self._stopped:
                raise SandboxError("the sandbox was stopped: it runs no more scripts",
                                   hint="a stopped sandbox belongs to a cancelled run")

    def _make_cold(self, key: PoolKey) -> Prepared:
        return lifecycle.prepare(self._engine, key, session=self.session, owner=self.owner,
                                 idle_timeout_s=COLD_IDLE_TIMEOUT_S)

    def _make_pooled(self, key: PoolKey) -> Prepared:
        return lifecycle.prepare(self._engine, key, session=self.session, owner=self.owner,
                                 idle_timeout_s=POOL_IDLE_TIMEOUT_S,
                                 preload=self._preload_for(key))

    def _preload_for(self, key: PoolKey) -> tuple[str, ...] | None:
        if not self._warm:
            return None
        if key.boundary:
            return PLAIN_TESTS_PRELOAD if self._plain_tests else PYTEST_PRELOAD
        return preload.for_limits(self._preload, key.limits)
