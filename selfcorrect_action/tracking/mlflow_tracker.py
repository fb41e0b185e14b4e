"""The one module that imports MLflow: a run logged to a tracking store (a local database, a
file store or a tracking server) through MlflowClient, which holds no global state, so a
benchmark's runs on several threads each log to their own MLflow run.

With traces, every model call is an MLflow trace through MLflow's litellm integration
(`mlflow.litellm.autolog`): each call runs inside a span of ours that names the run and
links the trace to its MLflow run, and litellm's own span nests under it. Traces need
MLflow's process-wide tracking URI and experiment, which are set for the run and put back
after it: one traced run at a time in a process (the benchmark and `selfcorrect mcp` refuse
traces with more than one worker).
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import mlflow
from mlflow import MlflowClient
from mlflow.entities import Metric, Param, RunTag
from mlflow.exceptions import MlflowException

from selfcorrect_action.errors import SelfcorrectError
from selfcorrect_action.llm._litellm import load as load_litellm
from selfcorrect_action.llm.base import LLM
from selfcorrect_action.llm.models import ChatRequest, ChatResponse
from selfcorrect_action.tracking.record import TrackedRun

# The ways a tracking store fails that are not our bugs: MLflow's own, a server that does
# not answer (requests' errors are OSErrors), a folder that cannot be written.
FAILURES = (MlflowException, OSError)
SQLITE = "sqlite:///"
SOURCE_RUN = "mlflow.sourceRun"  # the trace metadata MLflow links a trace to its run by
# What MLflow sets process-wide (for its subprocesses) when traces need a tracking URI and an
# experiment: put back afterwards, or every later run in the process (an MCP server's, an API
# caller's) would be tracked without asking.
PROCESS_WIDE = ("MLFLOW_TRACKING_URI", "MLFLOW_EXPERIMENT_ID")


class TrackingError(SelfcorrectError):
    """The tracking store refused or did not answer; the run itself is not affected."""


class MlflowTracker:
    """One run's MLflow run. Constructing it does no I/O; `start` creates the run."""

    def __init__(self, uri: str, experiment: str, *, traces: bool) -> None:
        self.uri = uri
        self.experiment = experiment
        self.traces = traces
        self.run_id = ""
        self._client: MlflowClient | None = None
        self._before: dict[str, str | None] = {}

    def start(self, name: str, tags: dict[str, str]) -> None:
        # "Creating initial MLflow database tables..." is MLflow's news, not the run's.
        logging.getLogger("mlflow").setLevel(logging.WARNING)
        with _translated(f"start a run in {self.uri}"):
            self._client = MlflowClient(tracking_uri=self.uri)
            found = self._client.get_experiment_by_name(self.experiment)
            experiment_id = (found.experiment_id if found is not None
                             else self._client.create_experiment(
                                 self.experiment, artifact_location=artifacts_beside(self.uri)))
            self.run_id = self._client.create_run(experiment_id, run_name=name,
                                                  tags=tags).info.run_id
            if self.traces:
                self._before = {name: os.environ.get(name) for name in PROCESS_WIDE}
                mlflow.set_tracking_uri(self.uri)
                mlflow.set_experiment(experiment_id=experiment_id)
                # After litellm's set-up, which clears every callback (llm/_litellm.py):
                # this one is asked for.
                load_litellm()
                mlflow.litellm.autolog(silent=True)

    def traced(self, llm: LLM, run_id: str) -> LLM:
        return TracedLLM(llm, self.run_id, run_id) if self.traces else llm

    def finish(self, tracked: TrackedRun, *, status: str) -> None:
        client = self._opened()
        now = int(time.time() * 1000)
        metrics = [Metric(key, value, now, 0) for key, value in tracked.metrics.items()]
        metrics += [Metric(key, value, now, step) for key, points in tracked.series.items()
                    for step, value in points]
        with _translated(f"log the run to {self.uri}"):
            client.log_batch(self.run_id, metrics=metrics,
                             params=[Param(k, v) for k, v in tracked.params.items()],
                             tags=[RunTag(k, v) for k, v in tracked.tags.items()])
            with tempfile.TemporaryDirectory(prefix="selfcorrect-mlflow-") as scratch:
                for path, data in tracked.files.items():
                    target = Path(scratch) / path
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data)
                client.log_artifacts(self.run_id, scratch)
            client.set_terminated(self.run_id, status=status)

    def close(self) -> None:
        if not self._before:
            return
        mlflow.litellm.autolog(disable=True, silent=True)
        mlflow.flush_trace_async_logging()
        # None unsets it again (typed str | Path, but None is what MLflow itself resets with)
        mlflow.set_tracking_uri(self._before["MLFLOW_TRACKING_URI"])  # type: ignore[arg-type]
        experiment = self._before["MLFLOW_EXPERIMENT_ID"]
        if experiment is None:
            os.environ.pop("MLFLOW_EXPERIMENT_ID", None)
        else:
            os.environ["MLFLOW_EXPERIMENT_ID"] = experiment
        self._before = {}

    def _opened(self) -> MlflowClient:
        if self._client is None:
            raise RuntimeError("the MLflow run was not started")
        return self._client


def artifacts_beside(uri: str) -> str | None:
    """Where a new experiment of a local SQLite store keeps its artifacts: in mlartifacts/
    beside the database (as `mlflow server` does). MLflow's own default is ./mlruns in
    whatever folder the run happened to start in. Other stores decide for themselves."""
    if not uri.startswith(SQLITE):
        return None
    return (Path(uri[len(SQLITE):]).resolve().parent / "mlartifacts").as_uri()


class TracedLLM:
    """Each model call inside a span of ours, on the thread that makes it (litellm's MLflow
    callback runs there too, and nests its span under ours)."""

    def __init__(self, inner: LLM, mlflow_run_id: str, run_id: str) -> None:
        self._inner = inner
        self._mlflow_run_id = mlflow_run_id
        self._run_id = run_id

    def complete(self, request: ChatRequest) -> ChatResponse:
        with mlflow.start_span(name=f"selfcorrect {request.purpose}") as span:
            mlflow.update_current_trace(
                tags={"selfcorrect.run_id": self._run_id, "selfcorrect.purpose": request.purpose},
                metadata={SOURCE_RUN: self._mlflow_run_id})
            span.set_inputs({"purpose": request.purpose, "target": request.target})
            response = self._inner.complete(request)
            span.set_outputs({"model": response.model, "tokens": response.total_tokens})
            return response


class _translated:
    """MLflow's and the network's failures as a TrackingError naming what was tried."""

    def __init__(self, doing: str) -> None:
        self._doing = doing

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: Any) -> None:
        if isinstance(error, FAILURES):
            message = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise TrackingError(f"could not {self._doing}: {message}") from error
