"""A real model's HumanEval benchmark replayed: `bench humaneval --mode model` as it ran live
against SmolLM2-135M-Instruct on llama-cpp-python's server (the README's "A tiny local
model" table), its recordings played back through the real loop and the real sandbox.

The recordings (tests/fixtures/real_model/bench/, HumanEval/10-19 of the measured run) say
how their run asked for code (the small profile, chat generation): a replay asks the same
way, makes the same decisions and reaches the same verdicts, problem by problem, so the
figures the README reports (pass rates, the share of attempts that failed as `syntax`)
come out of the replay as they came out of the live run.

Renew them from a new measured run: copy `<out>/recordings/<model>/humaneval_N.jsonl` for the
problems kept, and their items of `<out>/results.json` (without `seconds`) into
expected.json.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from selfcorrect_action.bench.context import BenchContext
from selfcorrect_action.bench.model_mode import recording_name, run_model
from selfcorrect_action.bench.options import BenchOptions
from selfcorrect_action.bench.problems import load_problems
from selfcorrect_action.bench.results import RunRecord, Store
from selfcorrect_action.bench.summary import model_run
from selfcorrect_action.llm.recording import read_recording
from selfcorrect_action.sandbox.docker_engine import DockerEngine

FIXTURES = Path(__file__).parents[1] / "fixtures" / "real_model" / "bench"
EXPECTED: dict[str, dict[str, Any]] = json.loads((FIXTURES / "expected.json").read_text())
# What a replay must reproduce of each problem's record (not its seconds: this machine's).
ONESHOT_KEYS = ("passed", "category", "tokens")
LOOP_KEYS = ("passed", "status", "attempts", "tokens", "categories", "final_category")


def test_every_recording_says_how_its_run_asked_for_code() -> None:
    problems = {p.task_id: p for p in load_problems()}
    for task_id in EXPECTED:
        header = read_recording(FIXTURES / recording_name(problems[task_id])).header
        assert (header.profile, header.generation) == ("small", "chat"), task_id
    assert len(list(FIXTURES.glob("*.jsonl"))) == len(EXPECTED)


@pytest.mark.usefixtures("sandbox_image")
def test_the_measured_run_replays_to_the_same_verdicts(
        tmp_path: Path, docker_engine: DockerEngine, sandbox_image: str) -> None:
    chosen = [p for p in load_problems() if p.task_id in EXPECTED]
    store = Store(tmp_path / "out" / "results.json")
    ctx = BenchContext(options=BenchOptions(mode="model", replay=FIXTURES, workers=2,
                                            out=tmp_path / "out"),
                       engine=docker_engine, image=sandbox_image, store=store,
                       problems=chosen, console=Console(file=io.StringIO()))

    key = run_model(ctx)

    run = store.results.runs[key]
    for task_id, expected in EXPECTED.items():
        got = run.items[task_id]
        assert {k: got["oneshot"].get(k) for k in ONESHOT_KEYS} == \
            {k: expected["oneshot"].get(k) for k in ONESHOT_KEYS}, task_id
        assert {k: got["loop"].get(k) for k in LOOP_KEYS} == \
            {k: expected["loop"].get(k) for k in LOOP_KEYS}, task_id
    figures = model_run(run, list(EXPECTED))
    recorded = model_run(RunRecord(mode="model", items=EXPECTED), list(EXPECTED))
    assert figures.replayed and figures.done == len(EXPECTED)
    assert (figures.oneshot_passed, figures.loop_passed, figures.loop_attempts,
            figures.syntax_attempts) == (recorded.oneshot_passed, recorded.loop_passed,
                                         recorded.loop_attempts, recorded.syntax_attempts)
