"""What `selfcorrect check` costs (issue 36, item 8), two figures:

1. A check of 50 specs whose records all match, as a pre-commit hook runs it: a fresh
   `selfcorrect check` process (the interpreter, its imports, 50 specs read, validated and
   digested, the engine asked which image is current and its identity read from the cache),
   and `check` called again in a warm interpreter; beside them `selfcorrect --version`, what
   any command pays before it starts. The containers each one created are
   counted from the engine's events, by the owner label the sandbox puts on every container.
   The 50 records are written as `check --update-lock` writes them, without running the 50
   scripts (setup, not measured). Target: under 2 s, no container.
2. A changed spec re-verified: the csv_report example run through the loop once with its
   recorded answers (`selfcorrect run --replay`), its passing script committed at the
   spec's output and recorded as a publishing run records it (verified/build.record_for, from
   the state its run.json holds), then its input changed and `selfcorrect check` run. Two
   figures against the run's last attempt, from its run.json: the sandbox time (how long the
   script and its tests ran in their containers: `sandbox_ms`, the executions' duration_ms),
   target within 1.3x; and the attempt from asking for a container to the verdict
   (`took_ms`, the attempt's duration_ms), which for the check includes the warm
   interpreter's imports that a run's model calls hide (a replayed run's too: its plan and
   generation come from litellm, whose start takes seconds).

    python benchmarks/check_speed.py [--runs 5] [--specs 50]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selfcorrect_action.commands.check_cmd import check  # noqa: E402
from selfcorrect_action.report.run_json import load_run_json  # noqa: E402
from selfcorrect_action.sandbox import engine  # noqa: E402
from selfcorrect_action.sandbox.config import LABEL_OWNER  # noqa: E402
from selfcorrect_action.sandbox.docker_engine import DockerEngine  # noqa: E402
from selfcorrect_action.sandbox.identity import image_identity  # noqa: E402
from selfcorrect_action.sandbox.image import ensure_image  # noqa: E402
from selfcorrect_action.spec import load_spec  # noqa: E402
from selfcorrect_action.verified.build import record_for  # noqa: E402
from selfcorrect_action.verified.fingerprint import fingerprint  # noqa: E402
from selfcorrect_action.verified.lock_update import first_record  # noqa: E402
from selfcorrect_action.verified.record import ImageRecord, save_record  # noqa: E402
from selfcorrect_action.verified.reverify import reverify_state  # noqa: E402

SELFCORRECT = [sys.executable, "-m", "selfcorrect_action"]
TARGET_VERIFIED_S = 2.0
TARGET_RATIO = 1.3
EXAMPLE_SPEC = ROOT / "examples" / "tasks" / "csv_report.yml"
EXAMPLE_REPLAY = ROOT / "examples" / "replays" / "csv_report.jsonl"
EXAMPLE_INPUT = "examples/data/orders.csv"


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    return path


def current_image(client: DockerEngine) -> ImageRecord:
    """The identity a check compares with (its package listing run once if not cached)."""
    found = image_identity(client, ensure_image(client))
    return ImageRecord(tag=found.tag, context_hash=found.context_hash,
                       packages_digest=found.packages_digest)


def verified_specs(repo: Path, count: int, image: ImageRecord) -> None:
    for i in range(count):
        (repo / "data").mkdir(exist_ok=True)
        (repo / "scripts").mkdir(exist_ok=True)
        (repo / ".selfcorrect/tasks").mkdir(parents=True, exist_ok=True)
        (repo / f"data/d{i}.csv").write_text(f"region,amount\nnorth,{i}\n")
        (repo / f"scripts/s{i}.py").write_text(f"print(open('d{i}.csv').read())\n")
        spec = repo / f".selfcorrect/tasks/t{i}.yml"
        spec.write_text(f"prompt: Print the rows of d{i}.csv\noutput: scripts/s{i}.py\n"
                        f"inputs: [data/d{i}.csv]\ncontract:\n  stdout_contains: [region]\n")
        loaded = load_spec(spec, root=repo)
        state = reverify_state(loaded, None, (repo / f"scripts/s{i}.py").read_text())
        save_record(repo, first_record(loaded, state, fingerprint(loaded), image,
                                       verified_at="2026-12-07T00:00:00+00:00"))


def created(client: DockerEngine, owner: str, since: float) -> int:
    events = client.client.events(since=since, until=time.time() + 1, decode=True, filters={
        "type": "container", "event": "create", "label": f"{LABEL_OWNER}={owner}"})
    return sum(1 for _ in events)


def quiet(repo: Path) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return check([], cwd=repo)


def cli_check(repo: Path, *flags: str) -> tuple[float, int, list[dict[str, object]]]:
    """One `selfcorrect check --json` process: its wall time, pid and results."""
    started = time.perf_counter()
    process = subprocess.Popen([*SELFCORRECT, "check", "--json", *flags], cwd=repo,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out, _ = process.communicate(timeout=600)
    return time.perf_counter() - started, process.pid, json.loads(out)


def measure_verified(client: DockerEngine, count: int, runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="check-speed-") as scratch:
        repo = git_repo(Path(scratch) / "repo")
        verified_specs(repo, count, current_image(client))
        processes, warm, bare, containers = [], [], [], 0
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run([*SELFCORRECT, "--version"], check=True, stdout=subprocess.DEVNULL)
            bare.append(time.perf_counter() - started)
            since = time.time()
            seconds, pid, results = cli_check(repo)
            assert {r["status"] for r in results} == {"verified"}, results
            containers += created(client, f"{socket.gethostname()}:{pid}", since)
            processes.append(seconds)
        quiet(repo)  # once first: the imports and caches a warm interpreter already has
        for _ in range(runs):
            since, started = time.time(), time.perf_counter()
            assert quiet(repo) == 0
            warm.append(time.perf_counter() - started)
            containers += created(client, f"{socket.gethostname()}:{os.getpid()}", since)
    print(f"check of {count} specs whose records all match (target: under "
          f"{TARGET_VERIFIED_S:g} s, no container), {runs} runs:")
    print(f"  `selfcorrect check` process  p50 {statistics.median(processes):.2f} s, "
          f"max {max(processes):.2f} s")
    print(f"  `selfcorrect --version`      p50 {statistics.median(bare):.2f} s (what any "
          "command pays first: the interpreter and the parser's imports)")
    print(f"  check() in a warm process    p50 {statistics.median(warm):.2f} s, "
          f"max {max(warm):.2f} s")
    print(f"  containers created           {containers}")


def recorded_example(repo: Path, client: DockerEngine) -> tuple[int, int]:
    """The csv_report example run once and recorded: its last attempt's sandbox time and
    duration, in ms."""
    spec = repo / ".selfcorrect/tasks/csv_report.yml"
    spec.parent.mkdir(parents=True)
    shutil.copy(EXAMPLE_SPEC, spec)
    (repo / EXAMPLE_INPUT).parent.mkdir(parents=True)
    shutil.copy(ROOT / EXAMPLE_INPUT, repo / EXAMPLE_INPUT)
    subprocess.run([*SELFCORRECT, "run", str(spec), "--replay", str(EXAMPLE_REPLAY),
                    "--out", "out/csv", "--no-history"], cwd=repo, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    state = load_run_json((repo / "out/csv/run.json").read_text())
    loaded = load_spec(spec, root=repo)
    attempt = state.last
    assert attempt is not None and loaded.spec.output is not None
    loaded.output_path.parent.mkdir(parents=True, exist_ok=True)
    loaded.output_path.write_text(attempt.code)
    save_record(repo, record_for(loaded, state, script=attempt.code,
                                 now=fingerprint(loaded), image=current_image(client),
                                 run_record="out/csv/run.json"))
    ran = sum(run.duration_ms for run in (attempt.execution, attempt.test_execution)
              if run is not None)
    return ran, attempt.duration_ms


def measure_reverified(client: DockerEngine, runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="check-speed-") as scratch:
        repo = git_repo(Path(scratch) / "repo")
        run_ran, run_took = recorded_example(repo, client)
        _, _, [result] = cli_check(repo)
        assert result["status"] == "verified", result
        with (repo / EXAMPLE_INPUT).open("a") as orders:
            orders.write("9001,north,10.00\n")  # a changed input that still passes
        ran, took, whole = [], [], []
        for _ in range(runs):
            wall, _, [result] = cli_check(repo)
            assert result["status"] == "passes", result
            ran.append(int(str(result["sandbox_ms"])))
            took.append(int(str(result["took_ms"])))
            whole.append(wall)
    print(f"a changed input re-verified, {runs} runs, against the run's last attempt "
          "(run.json):")
    print(f"  sandbox time (target: within {TARGET_RATIO:g}x)  run {run_ran} ms, "
          f"re-verification p50 {statistics.median(ran):.0f} ms (min {min(ran)}, max "
          f"{max(ran)}): {statistics.median(ran) / run_ran:.2f}x")
    print(f"  the attempt, container to verdict    run {run_took} ms, re-verification p50 "
          f"{statistics.median(took):.0f} ms (min {min(took)}, max {max(took)}): "
          f"{statistics.median(took) / run_took:.2f}x (the warm interpreter's imports "
          "included, which the run did while its model answered)")
    print(f"  the whole `selfcorrect check`        p50 {statistics.median(whole):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="measurements of each (default 5)")
    parser.add_argument("--specs", type=int, default=50, help="verified specs (default 50)")
    args = parser.parse_args()
    with contextlib.closing(engine.connect()) as client:
        measure_verified(client, args.specs, args.runs)
        measure_reverified(client, args.runs)


if __name__ == "__main__":
    main()
