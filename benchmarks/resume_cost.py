"""What a resumed run pays (issue 37), side by side in one run: the example task
(missing_package: plan, an attempt that fails on a missing package, a patch, the judge),
its recorded answers served by the OpenAI stand-in on 127.0.0.1 as a live model (their
recorded token counts), in the real sandbox.

1. The run from the start, its checkpoint folder copied as it was after every step (what a
   run killed right then leaves: the state of that step, and the recording so far).
2. For each of those steps, the run resumed from there: the tokens and calls it paid the
   model for, against what the uninterrupted run paid after that step; its wall time; the
   one attempt it executed again; and the resume's own overhead: its wall time less the
   uninterrupted run's time after that step and the re-executed attempt's execution.

Targets: only the calls after the interruption are paid (the paid column equals the
expected one); the overhead under 2 s.

    python benchmarks/resume_cost.py [--steps N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selfcorrect_action.llm.recording import read_recording  # noqa: E402
from selfcorrect_action.loop.state import RunState, Status  # noqa: E402
from selfcorrect_action.runs import pipeline  # noqa: E402
from selfcorrect_action.runs.checkpoint import (  # noqa: E402
    CHECKPOINT_FILE,
    EXCHANGES_FILE,
    RESUMABLE_DIR,
    CheckpointWriter,
)
from selfcorrect_action.runs.settings import RunSettings  # noqa: E402
from selfcorrect_action.spec import load_spec  # noqa: E402
from tests.fakes.openai_server import FakeOpenAIServer, Reply  # noqa: E402

SPEC = ROOT / "examples" / "tasks" / "missing_package.yml"
REPLAY = ROOT / "examples" / "replays" / "missing_package.jsonl"


@dataclass(frozen=True)
class Snapshot:
    step: int
    seconds: float  # since the run started
    attempts: int
    calls: int  # calls the recording held when the step's checkpoint was saved
    checkpoint: bytes
    recording: bytes


def answers() -> list[Reply]:
    return [Reply(content=exchange.response.text,
                  prompt_tokens=exchange.response.prompt_tokens,
                  completion_tokens=exchange.response.completion_tokens)
            for exchange in read_recording(REPLAY).exchanges]


def paid(server: FakeOpenAIServer, served: list[Reply]) -> int:
    return sum((reply.prompt_tokens or 0) + reply.completion_tokens
               for reply in served[: len(server.requests)])


@contextmanager
def snapshots(taken: list[Snapshot], started: list[float]) -> Iterator[None]:
    """Every checkpoint the run saves, copied with its recording as they are then."""
    save = CheckpointWriter.save

    def saving(writer: CheckpointWriter, state: RunState) -> None:
        save(writer, state)
        recording = writer.recording_path
        taken.append(Snapshot(
            step=len(taken), seconds=time.perf_counter() - started[0],
            attempts=len(state.attempts),
            calls=writer.mark().exchanges if writer.mark is not None else 0,
            checkpoint=(writer.folder / CHECKPOINT_FILE).read_bytes(),
            recording=recording.read_bytes() if recording.exists() else b""))

    CheckpointWriter.save = saving  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        CheckpointWriter.save = save  # type: ignore[method-assign]


def settings(server: FakeOpenAIServer, history: Path, **more: object) -> RunSettings:
    return RunSettings(model="openai/recorded", api_base=server.api_base, history=history,
                       llm_retries=0, **more)  # type: ignore[arg-type]


def run_once(run_settings: RunSettings) -> tuple[RunState, float]:
    loaded = load_spec(SPEC, root=ROOT)
    started = time.perf_counter()
    prepared = pipeline.prepare(loaded, run_settings, environ={}, secrets=[])
    outcome: pipeline.RunOutcome[None] = pipeline.run(prepared, environ={}, secrets=[])
    return outcome.state, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=0,
                        help="resume from only the first N steps (default every step)")
    args = parser.parse_args()
    served = answers()
    with tempfile.TemporaryDirectory(prefix="selfcorrect-resume-bench-") as scratch:
        base = Path(scratch)
        taken: list[Snapshot] = []
        with FakeOpenAIServer() as server:
            server.script(*served)
            started = [time.perf_counter()]
            with snapshots(taken, started):
                whole, whole_s = run_once(settings(server, base / "whole"))
            whole_tokens = paid(server, served)
        assert whole.status is Status.PASSED, whole.stop_reason
        print(f"from the start: {whole.status.value}, {len(whole.attempts)} attempts, "
              f"{len(served)} calls, {whole_tokens:,} tokens paid, {whole_s:.2f} s, "
              f"{len(taken)} steps saved")
        print()
        print(f"{'after step':>10} {'attempts':>8} {'calls':>5} {'expected':>9} {'paid':>7} "
              f"{'live':>4} {'resume s':>8} {'re-exec s':>9} {'overhead s':>10}  status")
        rows = taken[: args.steps] if args.steps else taken[:-1]  # the last one ended it
        worst = 0.0
        for shot in rows:
            history = base / f"resume-{shot.step}"
            folder = history / RESUMABLE_DIR / whole.run_id
            folder.mkdir(parents=True)
            (folder / CHECKPOINT_FILE).write_bytes(shot.checkpoint)
            if shot.recording:
                (folder / EXCHANGES_FILE).write_bytes(shot.recording)
            # The calls the earlier run had made are not served again: the stand-in only
            # has the ones after them (one more would be an overrun, counted).
            rest = served[shot.calls:]
            with FakeOpenAIServer() as server:
                server.script(*rest)
                state, seconds = run_once(settings(server, history, resume=whole.run_id))
                tokens, live = paid(server, rest), len(server.requests)
                overruns = server.overruns
            expected = sum((reply.prompt_tokens or 0) + reply.completion_tokens
                           for reply in rest)
            note = state.resumes[-1]
            again = next((a for a in state.attempts if a.index == note.reexecuted), None)
            reexec_s = (again.execution.duration_ms / 1000
                        if again is not None and again.execution is not None else 0.0)
            overhead = seconds - (whole_s - shot.seconds) - reexec_s
            worst = max(worst, overhead)
            flag = "" if tokens == expected and not overruns else "  <- paid again!"
            print(f"{shot.step:>10} {shot.attempts:>8} {shot.calls:>5} {expected:>9,} "
                  f"{tokens:>7,} {live:>4} {seconds:>8.2f} {reexec_s:>9.2f} {overhead:>10.2f}  "
                  f"{state.status.value}{flag}")
            shutil.rmtree(history, ignore_errors=True)
        print()
        print(f"target: paid == expected on every row; overhead under 2 s "
              f"(worst {worst:.2f} s)")
        print(json.dumps({"whole_tokens": whole_tokens, "whole_s": round(whole_s, 2),
                          "worst_overhead_s": round(worst, 2)}))


if __name__ == "__main__":
    main()
