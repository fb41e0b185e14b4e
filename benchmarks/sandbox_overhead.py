"""Per-execution latency of a trivial script, side by side in one run:

  (a) a bare `python3` subprocess on the host (no isolation at all: the floor)
  (b) `docker run --rm` through the docker CLI
  (c) selfcorrect's sandbox client, cold (create + attach + start per execution)
  (d) selfcorrect's sandbox client with the pre-warmed pool, the script in a fresh
      interpreter (cold start)
  (d') the same with a warm interpreter (issue 20): the pooled container's interpreter is
      already running and becomes the script (it has nothing to preload for this one)
  (f) a bare `python3 -c pass` inside the same image, timed inside one container

(b)-(f) under runc and runsc. Prints p50/p95 and each row's ratio to (a).
Targets (issue 2): pool p50 within 150 ms of (a); cold no slower than (b). Issue 20: the
pool's p50 within 25 ms of (f) under runc and 50 ms under runsc.

Then (e), what installing the runner's syscall filter costs a pooled container's start, in a
fresh container per sample and an interpreter started as the runner's (-I -S), timed inside
it from before the import to after the filter is in place: the runner's own path
(libseccomp's bindings build and load the filter) against the one it replaced (ctypes and
two prctl calls loading a hand-assembled program of the same length), alternating.
Rule (issue 15, item 4): libseccomp only if it adds at most 5 ms under runsc.

    python benchmarks/sandbox_overhead.py [--runs 20]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from selfcorrect_action.sandbox import engine
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.image import ensure_image
from selfcorrect_action.sandbox.models import ExecutionRequest, InputFile, Limits

SCRIPT = b"print('hello from the sandbox')\n"


def timed(fn: Callable[[], object], runs: int, before: Callable[[], None] = lambda: None
          ) -> list[float]:
    fn()  # warm-up: page cache, image layers, the engine's first-call costs
    samples = []
    for _ in range(runs):
        before()
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def bare_python(workdir: Path) -> Callable[[], object]:
    script = workdir / "s.py"
    script.write_bytes(SCRIPT)
    return lambda: subprocess.run(["python3", str(script)], check=True, capture_output=True)


def docker_cli(image: str, runtime: str) -> Callable[[], object]:
    argv = ["docker", "run", "--rm", "--runtime", runtime, "--network", "none", image,
            "python3", "-c", SCRIPT.decode()]
    return lambda: subprocess.run(argv, check=True, capture_output=True)


def client_run(box: Sandbox, runtime: str, workdir: Path) -> Callable[[], object]:
    request = ExecutionRequest(
        argv=["python3", "s.py"], files=[InputFile(path="s.py", data=SCRIPT)],
        runtime=runtime,  # type: ignore[arg-type]
    )
    counter = iter(range(10**6))

    def run() -> None:
        result = box.run(request, workdir / str(next(counter)))
        assert result.exit_code == 0, result
    return run


IN_IMAGE_PROBE = r"""
import subprocess, sys, time
samples = []
for _ in range(int(sys.argv[1]) + 1):
    started = time.perf_counter()
    subprocess.run(["python3", "-c", "pass"], check=True)
    samples.append((time.perf_counter() - started) * 1000)
print(" ".join(f"{sample:.2f}" for sample in samples[1:]))
"""


def in_image_python(image: str, runtime: str, runs: int) -> list[float]:
    """(f): `python3 -c pass` started and reaped inside one container of the image."""
    argv = ["docker", "run", "--rm", "--runtime", runtime, "--network", "none", image,
            "python3", "-c", IN_IMAGE_PROBE, str(runs)]
    done = subprocess.run(argv, check=True, capture_output=True, text=True)
    return [float(value) for value in done.stdout.split()]


def settled_and_started(box: Sandbox) -> Callable[[], None]:
    """As settled, and a moment for the warm interpreter to start in the container (the
    loop's model call gives it seconds)."""
    def wait() -> None:
        box.settle()
        time.sleep(0.5)
    return wait


def settled(box: Sandbox) -> Callable[[], None]:
    """The loop spends seconds in the LLM between executions: the previous container's
    removal (and, with a pool, the refill) finishes meanwhile. Wait for that here, outside
    the timing, so each sample measures what the loop sees. `docker run --rm` removes its
    container inside its own timing: that is the cost our client moves off the critical path."""
    return box.settle


FILTER_PROBE = r"""
import sys, time
sys.path.insert(0, "/opt/selfcorrect")
import runner  # built-in modules only, loaded before the filter in both paths
started = time.perf_counter()
if sys.argv[1] == "libseccomp":
    problem = runner._install_syscall_filter(runner.syscall_filter)
else:
    import _struct, ctypes
    code = b"".join(_struct.pack("=HBBI", 0x15, 60 - i, 0, 1000 + i) for i in range(60))
    code = _struct.pack("=HBBI", 0x20, 0, 0, 0) + code + _struct.pack("=HBBI", 6, 0, 0, 0x7FFF0000)
    code += _struct.pack("=HBBI", 6, 0, 0, 0x50001)
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl.restype, prctl.argtypes = ctypes.c_int, (ctypes.c_int, *(ctypes.c_ulong,) * 4)
    buffer = ctypes.create_string_buffer(code, len(code))
    fprog = _struct.pack("@HP", len(code) // 8, ctypes.addressof(buffer))
    fprog = ctypes.create_string_buffer(fprog)
    problem = prctl(38, 1, 0, 0, 0) or prctl(22, 2, ctypes.addressof(fprog), 0, 0) or None
assert problem is None, problem
print((time.perf_counter() - started) * 1000)
"""
FILTER_PATHS = ("ctypes + hand-built BPF", "libseccomp")


def filter_install(image: str, runtime: str, runs: int) -> dict[str, list[float]]:
    """Milliseconds per path, from alternating fresh containers."""
    samples: dict[str, list[float]] = {path: [] for path in FILTER_PATHS}
    for _ in range(runs):
        for path in FILTER_PATHS:
            argv = ["docker", "run", "--rm", "--runtime", runtime, "--network", "none",
                    "--cap-drop", "ALL", "--security-opt", "no-new-privileges", image,
                    "python3", "-I", "-S", "-c", FILTER_PROBE, path.split()[0]]
            done = subprocess.run(argv, check=True, capture_output=True, text=True)
            samples[path].append(float(done.stdout))
    return samples


def row(name: str, samples: list[float], floor: float | None) -> str:
    p50 = statistics.median(samples)
    p95 = sorted(samples)[max(0, int(len(samples) * 0.95) - 1)]
    ratio = f"{p50 / floor:6.1f}x" if floor else "   1.0x"
    extra = f"  ({p50 - floor:+.0f} ms)" if floor else ""
    return f"{name:<42} {p50:8.0f} {p95:8.0f}  {ratio}{extra}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    client = engine.connect()
    image = ensure_image(client)
    lines = []
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        floor_samples = timed(bare_python(work), runs)
        floor = statistics.median(floor_samples)
        lines.append(row("(a) bare python3 subprocess", floor_samples, None))
        for runtime in ("runc", "runsc"):
            lines.append(row(f"(b) docker run --rm [{runtime}]",
                             timed(docker_cli(image, runtime), runs), floor))
            with Sandbox(client, image) as cold:
                lines.append(row(f"(c) client, cold [{runtime}]",
                                 timed(client_run(cold, runtime, work / f"c-{runtime}"), runs,
                                       before=settled(cold)), floor))
            with Sandbox(client, image, pool_size=2, warm=False) as pooled:
                pooled.warm(Limits(), runtime)
                lines.append(row(f"(d) client, pool [{runtime}]",
                                 timed(client_run(pooled, runtime, work / f"d-{runtime}"),
                                       runs, before=settled(pooled)), floor))
            with Sandbox(client, image, pool_size=2) as warm:
                warm.warm(Limits(), runtime)
                lines.append(row(f"(d') client, pool, warm [{runtime}]",
                                 timed(client_run(warm, runtime, work / f"w-{runtime}"), runs,
                                       before=settled_and_started(warm)), floor))
            lines.append(row(f"(f) python3 -c pass in the image [{runtime}]",
                             in_image_python(image, runtime, runs), floor))
    print(f"sandbox overhead: {runs} runs each, trivial script, milliseconds")
    print(f"{'':<42} {'p50':>8} {'p95':>8}  vs (a)")
    for line in lines:
        print(line)
    print_filter_install(image, runs)


def print_filter_install(image: str, runs: int) -> None:
    print(f"\n(e) installing the syscall filter, in the runner's interpreter: {runs} fresh "
          "containers each, milliseconds")
    print(f"{'':<34} {'p50':>8} {'p95':>8}  vs ctypes")
    for runtime in ("runc", "runsc"):
        samples = filter_install(image, runtime, runs)
        floor = statistics.median(samples[FILTER_PATHS[0]])
        for path in FILTER_PATHS:
            print(row(f"{path} [{runtime}]", samples[path], floor if path != FILTER_PATHS[0]
                      else None))


if __name__ == "__main__":
    main()
