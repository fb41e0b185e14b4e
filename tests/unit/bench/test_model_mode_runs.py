"""Mode model's loops are runs of the one pipeline, without Docker (the engine played at the
Engine seam): a cancel stops the benchmark the way it stops `selfcorrect run`, and nothing
of the interrupted problem is recorded as a result."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from selfcorrect_action.bench.context import BenchContext
from selfcorrect_action.bench.model_mode import oneshot_request, recording_name, run_model
from selfcorrect_action.bench.options import BenchOptions
from selfcorrect_action.bench.problems import load_problems
from selfcorrect_action.bench.results import Store
from selfcorrect_action.errors import Interrupted
from selfcorrect_action.runs.cancel import CancelToken
from tests.fakes.fake_engine import FakeEngine, Reply
from tests.fakes.replays import fenced, write_replay

IMAGE = "selfcorrect-sandbox:fake"


def test_a_cancel_stops_the_benchmark_and_records_nothing_for_its_problem(
        tmp_path: Path) -> None:
    (problem,) = load_problems(1)
    replays = tmp_path / "replays"
    replays.mkdir()
    prompt = oneshot_request(problem).messages[0].content
    write_replay(replays / recording_name(problem), prompt,
                 [("generate", fenced(problem.canonical_source))] * 3)
    token = CancelToken()

    def cancel_on_first_run(header: dict[str, object]) -> Reply:
        token.cancel("SIGTERM")  # the job is cancelled while the one-shot answer runs
        return Reply(report={"exit_code": 1})

    engine = FakeEngine(images={IMAGE: {}}, behaviour=cancel_on_first_run)
    store = Store(tmp_path / "out" / "results.json")
    ctx = BenchContext(options=BenchOptions(mode="model", replay=replays, workers=1,
                                            out=tmp_path / "out"),
                       engine=engine, image=IMAGE, store=store, problems=[problem],
                       console=Console(file=io.StringIO()), cancel=token)
    with pytest.raises(Interrupted) as raised:
        run_model(ctx)
    assert raised.value.exit_code == 143
    (run,) = store.results.runs.values()
    assert run.items == {}, "an interrupted problem is not a result"
    # Its reports were written all the same, and say how it ended.
    audit = tmp_path / "out" / "runs" / "replay" / problem.module / "AUDIT.md"
    assert "SIGTERM" in audit.read_text()
    assert engine.containers == {}


def test_a_cancel_starts_no_further_problem(tmp_path: Path) -> None:
    """Problems queued behind the cancelled one used to run one after the other into the
    set token, each leaving an empty 'interrupted' run."""
    first, second = load_problems(2)
    replays = tmp_path / "replays"
    replays.mkdir()
    for problem in (first, second):
        write_replay(replays / recording_name(problem),
                     oneshot_request(problem).messages[0].content,
                     [("generate", fenced(problem.canonical_source))] * 3)
    token = CancelToken()

    def cancel_on_first_run(header: dict[str, object]) -> Reply:
        token.cancel("SIGTERM")
        return Reply(report={"exit_code": 1})

    engine = FakeEngine(images={IMAGE: {}}, behaviour=cancel_on_first_run)
    ctx = BenchContext(options=BenchOptions(mode="model", replay=replays, workers=1,
                                            out=tmp_path / "out"),
                       engine=engine, image=IMAGE, store=Store(tmp_path / "out" / "r.json"),
                       problems=[first, second], console=Console(file=io.StringIO()),
                       cancel=token)
    with pytest.raises(Interrupted):
        run_model(ctx)
    runs = tmp_path / "out" / "runs" / "replay"
    assert (runs / first.module / "AUDIT.md").exists()
    assert not (runs / second.module).exists(), "a problem started after the cancel"


def test_each_problems_loop_is_recorded_in_the_run_history(tmp_path: Path) -> None:
    """The benchmark's runs are runs of the pipeline: the history gets them as any run's,
    from the settings `bench_humaneval` resolves (SELFCORRECT_HISTORY, else the default)."""
    from selfcorrect_action.history.store import HistoryStore
    from selfcorrect_action.runs.settings import RunSettings

    (problem,) = load_problems(1)
    replays = tmp_path / "replays"
    replays.mkdir()
    prompt = oneshot_request(problem).messages[0].content
    write_replay(replays / recording_name(problem), prompt,
                 [("generate", fenced(problem.canonical_source))] * 8)
    engine = FakeEngine(images={IMAGE: {}}, behaviour=lambda header: Reply(
        report={"exit_code": 1}))
    ctx = BenchContext(options=BenchOptions(mode="model", replay=replays, workers=1,
                                            out=tmp_path / "out"),
                       engine=engine, image=IMAGE, store=Store(tmp_path / "out" / "r.json"),
                       problems=[problem], console=Console(file=io.StringIO()),
                       run_settings=RunSettings(history=tmp_path / "history"))
    run_model(ctx)
    with HistoryStore(tmp_path / "history", create=False) as history:
        (entry,) = history.entries()
    assert entry.replayed and entry.attempts >= 1
    assert entry.location == str((tmp_path / "out" / "runs" / "replay" / problem.module)
                                 .resolve())
    # HumanEval's functions import the standard library only: the shared sandbox's first
    # container preloads nothing, not the data libraries a script's would.
    assert engine.history[0].config["command"][-2:] == ["--warm", ""]
