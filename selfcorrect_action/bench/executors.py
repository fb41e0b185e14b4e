"""Scoring many candidates with K workers, in either isolation mode.

strict: one fresh container per candidate, from a pool of K pre-started ones, as the loop
        runs every execution: the test run crosses the tests' boundary (the product's
        default) unless the candidate asks for `in-process` (the cheats' control).
batch:  K containers at a time, each running a batch of candidates one after another, each
        candidate in its own process, folder and uid (sandbox/batch.py), imported into that
        process's pytest: fast, for honest candidates only (a batch item holds no boundary,
        so the cheats always run strict).
Either way every candidate is judged by the engine's verdict on its test run, the moment its
result arrives (scoring.judge), and `on_score` hears it from a worker thread.
"""

from __future__ import annotations

import math
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from selfcorrect_action.bench.problems import Problem
from selfcorrect_action.bench.scoring import LIMITS, Score, judge, plain_tests, tests_request
from selfcorrect_action.bench.threads import in_parallel
from selfcorrect_action.choices import Runtime
from selfcorrect_action.evaluation.junit import pytest_argv
from selfcorrect_action.sandbox.batch import BatchSandbox
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.engine_api import Engine
from selfcorrect_action.sandbox.models import PLAIN_TESTS_FLAG, ExecutionRequest, ExecutionResult
from selfcorrect_action.spec import Isolation as TestIsolation

Isolation = Literal["strict", "batch"]
# A batch stays small enough that one broken container costs little, and large enough that
# its container's start is spread over many candidates.
MAX_BATCH = 96


@dataclass(frozen=True)
class Candidate:
    key: str  # the item's key in results.json
    problem: Problem
    source: str  # the whole candidate module
    # How its frozen test meets it in strict mode (a spec's `isolation`); batch mode always
    # imports it into pytest's process.
    isolation: TestIsolation = "process"


OnScore = Callable[[Candidate, Score, ExecutionResult], None]


def score_all(candidates: Sequence[Candidate], *, engine: Engine, image: str,
              isolation: Isolation, runtime: Runtime, workers: int, on_score: OnScore,
              warm: bool = True, plain: bool = True) -> None:
    """`plain`: frozen tests that need nothing of pytest's are judged without it when they
    pass, as the loop judges them; False: always under pytest."""
    if not candidates:
        return
    scratch = Path(tempfile.mkdtemp(prefix="selfcorrect-bench-"))
    try:
        if isolation == "strict":
            _strict(candidates, engine, image, runtime, workers, on_score, scratch, warm, plain)
        else:
            _batch(candidates, engine, image, runtime, workers, on_score, scratch, plain)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def preloads() -> list[str]:
    """What a batch container's zygote loads before its first candidate: pytest, warmed with
    the engine's pytest options."""
    return pytest_argv(["warm.py"])[4:-2]


def _strict(candidates: Sequence[Candidate], engine: Engine, image: str, runtime: Runtime,
            workers: int, on_score: OnScore, scratch: Path, warm: bool = True,
            plain: bool = True) -> None:
    first = _request(candidates[0], runtime, candidates[0].isolation, plain)
    # Back to back: the next container starts as one is taken, its imports beside a run.
    # The first containers' tests' interpreters import pytest only if the first run needs it.
    with Sandbox(engine, image, pool_size=workers, max_workers=workers + 2,
                 warm=warm, refill="on_take",
                 plain_tests=PLAIN_TESTS_FLAG in first.argv) as box:
        box.warm(LIMITS, runtime, boundary=first.boundary is not None)
        # Made while the first containers start.
        requests = {candidate.key: _request(candidate, runtime, candidate.isolation, plain)
                    for candidate in candidates}
        for boundary in {request.boundary is not None for request in requests.values()}:
            box.warm(LIMITS, runtime, boundary=boundary)

        def one(candidate: Candidate) -> None:
            folder = scratch / _safe(candidate.key)
            result = box.run(requests[candidate.key], folder)
            on_score(candidate, judge(candidate.problem, result), result)
            shutil.rmtree(folder, ignore_errors=True)

        in_parallel(one, candidates, workers)


def _batch(candidates: Sequence[Candidate], engine: Engine, image: str, runtime: Runtime,
           workers: int, on_score: OnScore, scratch: Path, plain: bool = True) -> None:
    size = min(MAX_BATCH, max(1, math.ceil(len(candidates) / workers)))
    chunks = [list(candidates[i:i + size]) for i in range(0, len(candidates), size)]
    # A candidate that asks for pytest's own process (the cheats' control) gets pytest.
    plainly = {candidate.key: plain and candidate.isolation == "process"
               and plain_tests(candidate.problem) for candidate in candidates}
    with BatchSandbox(engine, image, pool_size=min(workers, len(chunks)),
                      max_workers=workers + 2, preload_pytest=preloads(),
                      pytest_when_needed=any(plainly.values())) as box:
        box.warm(LIMITS, runtime)
        # Made while the containers start.
        requests = {candidate.key: _in_batch(_request(candidate, runtime, "in-process"),
                                             plainly[candidate.key])
                    for candidate in candidates}

        def one(chunk: list[Candidate]) -> None:
            folders = [scratch / _safe(candidate.key) for candidate in chunk]

            def heard(index: int, result: ExecutionResult) -> None:
                candidate = chunk[index]
                on_score(candidate, judge(candidate.problem, result), result)
                shutil.rmtree(folders[index], ignore_errors=True)

            box.run_batch([requests[c.key] for c in chunk], folders, on_result=heard)

        in_parallel(one, chunks, workers)


def _request(candidate: Candidate, runtime: Runtime, isolation: TestIsolation,
             plain: bool = True) -> ExecutionRequest:
    return tests_request(candidate.problem, candidate.source, runtime, isolation=isolation,
                         plain=plain)


def _in_batch(request: ExecutionRequest, plain: bool) -> ExecutionRequest:
    """A batch item's test run, plain when its tests need nothing of pytest's (the batch's
    runner reads PLAIN_TESTS_FLAG after `-m pytest`; a single run's pytest would not)."""
    if not plain:
        return request
    argv = request.argv
    return request.model_copy(update={"argv": [*argv[:4], PLAIN_TESTS_FLAG, *argv[4:]]})


def _safe(key: str) -> str:
    return "".join(char if char.isalnum() else "_" for char in key)
