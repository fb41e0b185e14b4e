"""What a run logs to its experiment tracker, from its state and reports (no MLflow here)."""

from __future__ import annotations

from pathlib import Path

from selfcorrect_action.history.artifacts import KeptArtifact
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.orchestrator import run_loop
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.records import evolve
from selfcorrect_action.report.writer import render_reports
from selfcorrect_action.tracking.record import prompts_digest, tracked_run
from selfcorrect_action.tracking.session import mlflow_status
from tests.fakes.scripted_llm import ScriptedLLM
from tests.unit.loop.test_orchestrator import PASS, PLAN, CannedSandbox, code, ok_if, state


def finished(tmp_path: Path) -> RunState:
    llm = ScriptedLLM([PLAN, ("generate", code("boom()")), ("repair", code("print('good')")),
                       PASS])
    return run_loop(state(), Deps(llm=llm, sandbox=CannedSandbox(ok_if("good")),
                                  work_root=tmp_path))


def test_a_run_is_logged_as_params_metrics_a_series_and_its_files(tmp_path: Path) -> None:
    final = finished(tmp_path)
    chart = KeptArtifact(attempt=2, path="chart.png", kind="png", size=3, data=b"png")
    table = KeptArtifact(attempt=2, path="t.csv", kind="csv", size=3, data=b"a,b")
    reports = render_reports(final, secrets=[])
    tracked = tracked_run(final, reports, (chart, table), tags={"selfcorrect.problem": "p/1"})

    assert tracked.params["orchestrator"] == "plain"
    assert tracked.params["model.cheap"] == final.models.cheap
    assert tracked.params["budget.patch_attempts"] == str(final.budget.patch_attempts)
    assert tracked.params["prompts_sha256"] == prompts_digest()
    assert tracked.metrics["passed"] == 1.0 and tracked.metrics["attempts"] == 2.0
    assert tracked.metrics["failures.runtime"] == 1.0 and tracked.metrics["failures.syntax"] == 0
    assert tracked.metrics["tokens"] == final.usage.tokens
    assert tracked.series["attempt.layer"] == [(1, 0.0), (2, 3.0)]
    assert tracked.files["run.json"] == reports.run_json.encode()
    assert tracked.files["AUDIT.md"] == reports.audit_md.encode()
    assert tracked.files["script/task.py"] == final.attempts[-1].code.encode()
    assert tracked.files["charts/attempt-2/chart.png"] == b"png"
    assert not any(path.endswith("t.csv") for path in tracked.files)
    assert tracked.tags["selfcorrect.run_id"] == "r"
    assert tracked.tags["selfcorrect.problem"] == "p/1"


def test_an_unknown_cost_is_no_metric_and_a_failed_run_has_no_script(tmp_path: Path) -> None:
    final = finished(tmp_path)
    unpriced = evolve(final, {"usage": evolve(final.usage, {"cost_known": False}),
                              "status": Status.EXHAUSTED})
    tracked = tracked_run(unpriced, render_reports(unpriced, secrets=[]))
    assert "cost_usd" not in tracked.metrics and tracked.metrics["passed"] == 0.0
    assert not any(path.startswith("script/") for path in tracked.files)


def test_the_spec_digest_tells_tasks_apart(tmp_path: Path) -> None:
    final = finished(tmp_path)
    other = evolve(final, {"tests": {"test_x.py": "def test_x(): pass\n"}})
    digest = tracked_run(final, render_reports(final, secrets=[])).params["spec_sha256"]
    assert digest != tracked_run(other, render_reports(other, secrets=[])).params["spec_sha256"]


def test_an_mlflow_run_ends_finished_killed_or_failed(tmp_path: Path) -> None:
    final = finished(tmp_path)
    assert mlflow_status(final) == "FINISHED"
    assert mlflow_status(evolve(final, {"status": Status.STOPPED})) == "FINISHED"
    assert mlflow_status(evolve(final, {"status": Status.ERROR})) == "FAILED"
    assert mlflow_status(evolve(final, {"status": Status.CANCELLED,
                                        "interrupted_by": "SIGINT"})) == "KILLED"
