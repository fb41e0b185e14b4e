"""What the tests' boundary costs, side by side in one run (issue 14, item 7):

  (a) a frozen test run with the candidate imported into pytest's process (`in-process`)
  (b) the same run across the boundary (the default): pytest and a fresh interpreter for
      the candidate under two uids, every call a request over a socket

for a HumanEval-sized test (a check() of a few asserts, no third-party import), and per call
(the same test calling the candidate CALLS times, minus a run that calls it once). Both
from a warm pool whose container waited IDLE_S first, as in the loop (a model call comes
before each run), so container start-up and the candidate's interpreter, started while it
waits, are off the path in either, under runc and runsc,
runs alternated so that machine load falls on both alike. Prints p50 / mean per row and
the difference (b) - (a). Targets: under 50 ms (runc) and 100 ms (runsc) added per run.

    python benchmarks/boundary_overhead.py [--runs 15] [--calls 2000] [--runtime runc]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from selfcorrect_action.choices import Runtime
from selfcorrect_action.evaluation.junit import (
    PYTEST_JUNIT_PATH,
    boundary_pytest_argv,
    pytest_argv,
)
from selfcorrect_action.evaluation.spec_tests import judge_test_run
from selfcorrect_action.sandbox import engine
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.image import ensure_image
from selfcorrect_action.sandbox.models import (
    Boundary,
    ExecutionRequest,
    InputFile,
    Limits,
)

CANDIDATE = b'''
def below_zero(operations):
    balance = 0
    for op in operations:
        balance += op
        if balance < 0:
            return True
    return False
'''
TESTS = '''
from candidate import below_zero


def check(candidate):
    assert candidate([]) == False
    assert candidate([1, 2, -3, 1, 2, -3]) == False
    assert candidate([1, 2, -4, 5, 6]) == True
    assert candidate([1, -1, 2, -2, 5, -5, 4, -4]) == False
    assert candidate([1, -1, 2, -2, 5, -5, 4, -5]) == True
    assert candidate([1, -2, 2, -2, 5, -5, 4, -4]) == True


def test_below_zero():
    for _ in range({repeat}):
        check(below_zero)
'''


# How long a pooled container waits before it is used (in the loop, a model call's time).
IDLE_S = 0.5


def request(isolated: bool, runtime: Runtime, repeat: int) -> ExecutionRequest:
    tests = TESTS.format(repeat=repeat).encode()
    files = [InputFile(path="candidate.py", data=CANDIDATE),
             InputFile(path="test_candidate.py", data=tests)]
    if not isolated:
        return ExecutionRequest(argv=pytest_argv(["test_candidate.py"]), files=files,
                                timeout_s=120, runtime=runtime)
    return ExecutionRequest(
        argv=boundary_pytest_argv(["test_candidate.py"]), files=files, timeout_s=120,
        runtime=runtime,
        boundary=Boundary(candidate="candidate.py", module="candidate",
                          tests=["test_candidate.py"]),
        artifact_paths=[PYTEST_JUNIT_PATH])


def one(box: Sandbox, made: ExecutionRequest) -> float:
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        result = box.run(made, Path(folder))
        elapsed = (time.perf_counter() - started) * 1000
        verdict = judge_test_run(result, candidate="candidate.py")
        if not verdict.passed:
            raise SystemExit(f"the benchmark's own test failed: {verdict.evidence}")
    return elapsed


def measure(box: Sandbox, runtime: Runtime, runs: int, calls: int) -> dict[str, list[float]]:
    """Alternating samples of each kind, after one warm-up run of each."""
    kinds = {f"{where} x{n}": request(where == "boundary", runtime, n)
             for where in ("in-process", "boundary") for n in (1, calls // 6)}
    for made in kinds.values():
        box.warm(made.limits, runtime, boundary=made.boundary is not None)
        one(box, made)
        box.settle()
    samples: dict[str, list[float]] = {name: [] for name in kinds}
    for _ in range(runs):
        for name, made in kinds.items():
            box.settle()  # the pool holds a started container of this kind again
            # ...which has waited a moment, as it does in the loop (a model call comes first).
            time.sleep(IDLE_S)
            samples[name].append(one(box, made))
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--calls", type=int, default=2000,
                        help="calls in the per-call run (rounded to a multiple of 6)")
    parser.add_argument("--runtime", choices=["runc", "runsc", "both"], default="both")
    args = parser.parse_args()
    connected = engine.connect()
    image = ensure_image(connected)
    runtimes: list[Runtime] = ["runc", "runsc"] if args.runtime == "both" else [args.runtime]
    calls = max(6, args.calls // 6 * 6)
    targets = {"runc": 50.0, "runsc": 100.0}
    print(f"frozen test run of a HumanEval-sized check(), {args.runs} runs each, warm pool")
    with Sandbox(connected, image, pool_size=1) as box:
        box.warm(Limits(), "runc")
        for runtime in runtimes:
            samples = measure(box, runtime, args.runs, calls)
            p50 = {name: statistics.median(values) for name, values in samples.items()}
            mean = {name: statistics.fmean(values) for name, values in samples.items()}
            print(f"\n{runtime}:")
            for name in samples:
                print(f"  {name:<22} p50 {p50[name]:7.1f} ms   mean {mean[name]:7.1f} ms")
            added = p50["boundary x1"] - p50["in-process x1"]
            per_call = ((p50[f"boundary x{calls // 6}"] - p50["boundary x1"])
                        - (p50[f"in-process x{calls // 6}"] - p50["in-process x1"])
                        ) / (calls - 6) * 1000
            verdict = "met" if added < targets[runtime] else "NOT met"
            print(f"  added per run (p50): {added:+.1f} ms (target under "
                  f"{targets[runtime]:.0f} ms: {verdict}); ratio "
                  f"{p50['boundary x1'] / p50['in-process x1']:.2f}x")
            print(f"  added per call: {per_call:.0f} us")


if __name__ == "__main__":
    main()
