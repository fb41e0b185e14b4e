"""The loop's own cost, side by side in one run:

1. Time per attempt spent outside the LLM (sandbox, evaluation, prompt and report
   rendering), with the model's answers replayed through litellm from the bar-chart example
   recording, the sandbox pool on. Printed as p50/p95 over several runs, with cold
   interpreters and with warm ones (issue 20: the pooled container's interpreter imported
   pandas and matplotlib before the script came) side by side. A replayed answer comes
   at once, a real one takes seconds, during which the pool's next container starts and
   imports: `--think` seconds of simulated model latency per call (not counted) stand in
   for it.
2. The repair packet's size in tokens (ceil(chars/3), the conservative estimate the budget
   uses) for real failures whose raw logs are 10, 1,000 and 100,000 lines, run through the
   real sandbox, next to the raw log's own size.

Targets (issue 3): p50 under 1 s per attempt with the pool; packet under 1,500 tokens at
every log size. Issue 20: the attempt's execution p50 under 400 ms warm.

    python benchmarks/loop_overhead.py [--runs 5] [--think 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selfcorrect_action.evaluation.layers import evaluate  # noqa: E402
from selfcorrect_action.llm.base import LLM  # noqa: E402
from selfcorrect_action.llm.factory import client_for  # noqa: E402
from selfcorrect_action.llm.models import ChatRequest, ChatResponse  # noqa: E402
from selfcorrect_action.loop.budget import estimate_tokens  # noqa: E402
from selfcorrect_action.loop.deps import Deps  # noqa: E402
from selfcorrect_action.loop.feedback import build_packet, render_packet  # noqa: E402
from selfcorrect_action.loop.orchestrator import run_loop  # noqa: E402
from selfcorrect_action.loop.state import Attempt, NextStep, Strategy  # noqa: E402
from selfcorrect_action.report.writer import write_reports  # noqa: E402
from selfcorrect_action.runs.prepare import initial_state, resolve_models  # noqa: E402
from selfcorrect_action.runs.settings import RunSettings  # noqa: E402
from selfcorrect_action.sandbox import engine  # noqa: E402
from selfcorrect_action.sandbox.client import Sandbox  # noqa: E402
from selfcorrect_action.sandbox.image import ensure_image  # noqa: E402
from selfcorrect_action.sandbox.models import ExecutionRequest, InputFile, Limits  # noqa: E402
from selfcorrect_action.spec import load_spec  # noqa: E402

SPEC = ROOT / "examples" / "tasks" / "bar_chart.yml"
REPLAY = ROOT / "examples" / "replays" / "bar_chart.jsonl"
SETTINGS = RunSettings(replay=REPLAY)


class TimedLLM:
    def __init__(self, inner: LLM, think_s: float = 0.0) -> None:
        self.inner, self.seconds, self.think_s = inner, 0.0, think_s

    def complete(self, request: ChatRequest) -> ChatResponse:
        started = time.perf_counter()
        try:
            time.sleep(self.think_s)  # a real model's latency, in which the pool refills
            return self.inner.complete(request)
        finally:
            self.seconds += time.perf_counter() - started


def attempt_overhead(sandbox: Sandbox, runs: int, think_s: float = 0.0
                     ) -> tuple[list[float], list[float], list[str]]:
    """Per attempt: seconds outside the LLM, and of those the script's own run time in the
    container (pandas + matplotlib start-up and drawing, which no loop can remove)."""
    loaded = load_spec(SPEC)
    models = resolve_models(loaded, SETTINGS, {})
    inputs = [InputFile(path=p.name, data=p.read_bytes()) for p in loaded.input_paths]
    samples: list[float] = []
    scripts: list[float] = []
    starts: list[str] = []
    for _ in range(runs + 1):  # the first run pays litellm's import and warm-up: dropped
        llm = TimedLLM(client_for(models, replay=REPLAY), think_s)
        with tempfile.TemporaryDirectory() as scratch:
            sandbox.settle()
            started = time.perf_counter()
            state = run_loop(initial_state(loaded, models, SETTINGS),
                             Deps(llm=llm, sandbox=sandbox, work_root=Path(scratch),
                                  inputs=inputs))
            write_reports(state, Path(scratch) / "out", secrets=[])
            outside = time.perf_counter() - started - llm.seconds
        assert state.status.value == "passed", state.stop_reason
        samples.append(outside / len(state.attempts))
        scripts.append(statistics.mean(
            (a.execution.duration_ms if a.execution else 0) / 1000 for a in state.attempts))
        starts += [a.execution.start for a in state.attempts if a.execution]
    return samples[1:], scripts[1:], starts


def failing_script(lines: int) -> bytes:
    return (
        "import sys\n"
        f"for i in range({lines - 4}):\n"
        "    print(f'processing record {i}: value={i * 7 % 13} status=ok', file=sys.stderr)\n"
        "records = {}\n"
        "print(records['total'])\n"
    ).encode()


def packet_size(sandbox: Sandbox, lines: int, tmp: Path) -> tuple[int, int]:
    request = ExecutionRequest(argv=["python3", "task.py"],
                               files=[InputFile(path="task.py", data=failing_script(lines))],
                               limits=Limits(), timeout_s=60)
    result = sandbox.run(request, tmp / f"log-{lines}")
    loaded = load_spec(SPEC)
    state = initial_state(loaded, resolve_models(loaded, SETTINGS, {}), SETTINGS)
    state = state.model_copy(update={"output_name": "task.py"})
    code = failing_script(lines).decode()
    attempt = Attempt(index=1, strategy=Strategy.INITIAL, tier="cheap", model="m", code=code,
                      code_sha="x", execution=result,
                      verdict=evaluate(result, state.contract, script_name="task.py"))
    state = state.model_copy(update={"attempts": [attempt]})
    packet = build_packet(state, attempt, NextStep(strategy=Strategy.PATCH, tier="cheap",
                                                  base_attempt=1), max_attempts=6)
    return result.stderr.total_bytes, estimate_tokens(render_packet(packet))


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, int(len(values) * 0.95) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--think", type=float, default=3.0,
                        help="simulated seconds per model call (not counted)")
    options = parser.parse_args()
    runs = options.runs
    client = engine.connect()
    image = ensure_image(client)
    figures = {}
    for start in ("cold", "warm"):
        # As a live loop: the next container starts once an attempt is done.
        with Sandbox(client, image, pool_size=1, warm=start == "warm",
                     refill="after_run") as sandbox:
            sandbox.warm(Limits(), "runc")
            figures[start] = attempt_overhead(sandbox, runs, options.think)
    with Sandbox(client, image, pool_size=1) as sandbox, tempfile.TemporaryDirectory() as tmp:
        sizes = {n: packet_size(sandbox, n, Path(tmp)) for n in (10, 1_000, 100_000)}
    print(f"time per attempt outside the LLM ({runs} replayed runs of bar_chart, 2 attempts "
          f"each, pool on, {options.think:g} s of model latency per call), milliseconds")
    print(f"  {'':<52} {'cold p50':>9} {'p95':>6} {'warm p50':>9} {'p95':>6}")
    rows: dict[str, list[list[float]]] = {}
    for start in ("cold", "warm"):
        per_attempt, script_time, _ = figures[start]
        overhead = [total - script
                    for total, script in zip(per_attempt, script_time, strict=True)]
        for label, values in (("all of it", per_attempt),
                              ("  the script's own run in the container", script_time),
                              ("  selfcorrect's part (sandbox, evaluation, reports)",
                               overhead)):
            rows.setdefault(label, []).append(values)
    for label, (cold, warm) in rows.items():
        print(f"  {label:<52} {statistics.median(cold) * 1000:9.0f} {p95(cold) * 1000:6.0f}"
              f" {statistics.median(warm) * 1000:9.0f} {p95(warm) * 1000:6.0f}")
    warm_starts = figures["warm"][2]
    print(f"  warm starts: {warm_starts.count('warm')} of {len(warm_starts)} attempts")
    print("  (targets: all of it p50 < 1000 ms; the script's own run p50 < 400 ms warm)")
    print("repair packet size (target: < 1,500 tokens)")
    print(f"  {'raw log lines':>14} {'raw log bytes':>14} {'raw log tokens':>15} "
          f"{'packet tokens':>14}")
    for lines, (raw_bytes, tokens) in sizes.items():
        print(f"  {lines:>14,} {raw_bytes:>14,} {-(-raw_bytes // 3):>15,} {tokens:>14,}")


if __name__ == "__main__":
    main()
