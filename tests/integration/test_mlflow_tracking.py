"""`--mlflow` fills a real tracking store, read back here (issue 23): a local SQLite database
(what `--mlflow` alone makes), MLflow's file store, and a real MLflow server started on
127.0.0.1 by the test; with `--mlflow-traces`, every model call is a trace linked to its
run. The runs go through the one pipeline with a replayed model, the container engine
played at its seam (no Docker)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mlflow
import pytest
from mlflow import MlflowClient

from selfcorrect_action.cli import main
from selfcorrect_action.loop.state import Status
from selfcorrect_action.runs import pipeline
from selfcorrect_action.runs.pipeline import Connections
from selfcorrect_action.runs.session import RunEvents
from tests.unit.runs.test_orchestration import prepared, says
from tests.unit.runs.test_pipeline import SPEC

SERVER_START_S = 120.0  # two cores shared with other suites: MLflow's server is slow to start


def tracked_run(tmp_path: Path, uri: str, **chosen: Any) -> pipeline.RunOutcome[None]:
    events: list[tuple[str, str]] = []
    outcome: pipeline.RunOutcome[None] = pipeline.run(
        prepared(tmp_path, orchestrator="plain", mlflow=uri, **chosen), environ={},
        secrets=[], reports_dir=tmp_path / "out", events=RunEvents(
            on_event=lambda *event: events.append(event)),
        connections=Connections(engine=says("goodbye\n", "hello\n")))
    assert outcome.state.status is Status.PASSED, events
    assert any(step == "mlflow" and "tracked in" in message for step, message in events), events
    return outcome


def read_back(uri: str, outcome: pipeline.RunOutcome[None], tmp_path: Path,
              experiment: str = "selfcorrect") -> str:
    """Every part of the run as the store has it; the MLflow run's id."""
    client = MlflowClient(tracking_uri=uri)
    found = client.get_experiment_by_name(experiment)
    assert found is not None
    (run,) = client.search_runs([found.experiment_id])
    state = outcome.state
    assert run.info.run_name == f"hello {state.run_id}" and run.info.status == "FINISHED"
    assert run.data.tags["selfcorrect.run_id"] == state.run_id
    params = run.data.params
    assert params["orchestrator"] == "plain" and params["model.cheap"] == state.models.cheap
    assert params["budget.patch_attempts"] == "1" and len(params["spec_sha256"]) == 16
    metrics = run.data.metrics
    assert metrics["passed"] == 1.0 and metrics["attempts"] == 2.0
    assert metrics["failures.contract"] == 1.0 and metrics["tokens"] == state.usage.tokens
    layers = client.get_metric_history(run.info.run_id, "attempt.layer")
    assert sorted((m.step, m.value) for m in layers) == [
        (a.index, float(a.progress.layer)) for a in state.attempts]
    got = Path(client.download_artifacts(run.info.run_id, "", str(tmp_path / "artifacts")))
    assert (got / "run.json").read_text() == outcome.reports.run_json
    assert (got / "AUDIT.md").read_text() == outcome.reports.audit_md
    assert (got / "script" / "hello.py").read_text() == state.attempts[-1].code
    return run.info.run_id


def traces_of(uri: str, run_id: str, experiment: str = "selfcorrect") -> list[Any]:
    found = MlflowClient(tracking_uri=uri).get_experiment_by_name(experiment)
    assert found is not None
    mlflow.set_tracking_uri(uri)
    try:
        return list(mlflow.search_traces(run_id=run_id, locations=[found.experiment_id],
                                         return_type="list"))
    finally:
        mlflow.set_tracking_uri(None)  # type: ignore[arg-type]


def test_a_run_fills_a_local_sqlite_store_with_a_trace_per_model_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    uri = f"sqlite:///{tmp_path / 'store' / 'mlflow.db'}"
    (tmp_path / "store").mkdir()
    outcome = tracked_run(tmp_path, uri, mlflow_traces=True)
    run_id = read_back(uri, outcome, tmp_path)
    # The artifacts are beside the database, not in ./mlruns wherever the run started.
    assert MlflowClient(tracking_uri=uri).get_run(run_id).info.artifact_uri.startswith(
        (tmp_path / "store" / "mlartifacts").as_uri())
    assert list(elsewhere.iterdir()) == []
    traces = traces_of(uri, run_id)
    assert sorted(t.info.tags["selfcorrect.purpose"] for t in traces) == ["generate", "repair"]
    for trace in traces:  # ours, and litellm's own span under it
        assert [span.name for span in trace.data.spans] == [
            f"selfcorrect {trace.info.tags['selfcorrect.purpose']}", "litellm-completion"]
    # What traces set process-wide is put back: the next run in this process is not tracked.
    assert "MLFLOW_TRACKING_URI" not in os.environ and "MLFLOW_EXPERIMENT_ID" not in os.environ


def test_a_run_fills_mlflows_file_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                        ) -> None:
    # MLflow 3 writes a file store only when told to (it is in maintenance mode).
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    uri = (tmp_path / "mlruns").as_uri()
    read_back(uri, tracked_run(tmp_path, uri, mlflow_experiment="mine"), tmp_path,
              experiment="mine")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


@pytest.fixture(scope="module")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`mlflow server` on 127.0.0.1, its store and artifacts in a temporary folder. Under
    CI=true a server that does not start fails the tests; elsewhere they are skipped,
    saying why."""
    folder = tmp_path_factory.mktemp("mlflow-server")
    url = f"http://127.0.0.1:{_free_port()}"
    argv = [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1",
            "--port", url.rsplit(":", 1)[1], "--workers", "1",
            "--backend-store-uri", f"sqlite:///{folder / 'store.db'}",
            "--artifacts-destination", str(folder / "artifacts")]
    # The server imports litellm too: offline, its price-table fetch only costs retries.
    environ = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    with (folder / "server.log").open("w") as log, subprocess.Popen(
            argv, stdout=log, stderr=subprocess.STDOUT, env=environ,
            start_new_session=True) as server:
        try:
            deadline = time.monotonic() + SERVER_START_S
            while not _answers(url) and server.poll() is None and time.monotonic() < deadline:
                time.sleep(0.5)
            if not _answers(url):
                reason = (f"the MLflow server did not start: "
                          f"{(folder / 'server.log').read_text()[-2000:]}")
                if os.environ.get("CI", "").lower() == "true":
                    pytest.fail(f"CI=true but {reason}", pytrace=False)
                pytest.skip(reason)
            yield url
        finally:
            os.killpg(server.pid, signal.SIGTERM)  # its uvicorn worker is in its group
            server.wait(timeout=30)


def test_a_run_fills_a_tracking_server(mlflow_server: str, tmp_path: Path) -> None:
    outcome = tracked_run(tmp_path, mlflow_server, mlflow_traces=True)
    run_id = read_back(mlflow_server, outcome, tmp_path)
    assert len(traces_of(mlflow_server, run_id)) == 2


def test_a_store_that_does_not_answer_costs_the_run_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    events: list[tuple[str, str]] = []
    outcome: pipeline.RunOutcome[None] = pipeline.run(
        prepared(tmp_path, orchestrator="plain", mlflow=f"http://127.0.0.1:{_free_port()}"),
        environ={}, secrets=[], reports_dir=tmp_path / "out",
        events=RunEvents(on_event=lambda *event: events.append(event)),
        connections=Connections(engine=says("goodbye\n", "hello\n")))
    assert outcome.state.status is Status.PASSED and (tmp_path / "out" / "run.json").exists()
    said = [message for step, message in events if step == "mlflow"]
    assert len(said) == 1 and said[0].startswith("this run is not tracked: could not start")


def test_without_the_extra_mlflow_says_how_to_install_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "mlflow", None)  # as if not installed
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # a missing key is refused first
    spec = tmp_path / "hello.yml"
    spec.write_text(json.dumps(SPEC))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'm.db'}")
    code = main(["run", str(spec), "--model", "openai/x", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert "--mlflow (or MLFLOW_TRACKING_URI) needs the mlflow extra" in err
    assert "pip install 'selfcorrect-action[mlflow]'" in err


def test_the_benchmarks_model_mode_logs_one_run_per_problem_under_one_experiment(
        tmp_path: Path) -> None:
    import io

    from rich.console import Console

    from selfcorrect_action.bench.context import BenchContext
    from selfcorrect_action.bench.model_mode import oneshot_request, recording_name, run_model
    from selfcorrect_action.bench.options import BenchOptions
    from selfcorrect_action.bench.problems import load_problems
    from selfcorrect_action.bench.results import Store
    from selfcorrect_action.runs.settings import RunSettings
    from tests.fakes.fake_engine import FakeEngine, Reply
    from tests.fakes.replays import fenced, write_replay

    problems = load_problems(2)
    replays = tmp_path / "replays"
    replays.mkdir()
    for problem in problems:
        write_replay(replays / recording_name(problem), oneshot_request(problem).messages[0]
                     .content, [("generate", fenced(problem.canonical_source))] * 8)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    image = "selfcorrect-sandbox:fake"
    ctx = BenchContext(
        options=BenchOptions(mode="model", replay=replays, workers=1, out=tmp_path / "out"),
        engine=FakeEngine(images={image: {}}, behaviour=lambda header: Reply(
            report={"exit_code": 1})),
        image=image, store=Store(tmp_path / "out" / "r.json"), problems=problems,
        console=Console(file=io.StringIO()), run_settings=RunSettings(mlflow=uri))
    key = run_model(ctx)

    client = MlflowClient(tracking_uri=uri)
    found = client.get_experiment_by_name("selfcorrect-bench")
    assert found is not None
    runs = client.search_runs([found.experiment_id])
    assert sorted(run.data.tags["selfcorrect.problem"] for run in runs) == sorted(
        problem.task_id for problem in problems)
    assert {run.data.tags["selfcorrect.bench_run"] for run in runs} == {key}
    assert len({run.data.params["prompts_sha256"] for run in runs}) == 1
