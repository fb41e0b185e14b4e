"""The tracking settings: `--mlflow [URI]`, or MLflow's own MLFLOW_TRACKING_URI, through the
one settings table."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfcorrect_action.errors import UsageError
from selfcorrect_action.runs import settings


def _cli(argv: list[str], monkeypatch: pytest.MonkeyPatch,
         environ: dict[str, str] | None = None) -> settings.Resolved:
    from selfcorrect_action import cli

    for row in settings.SETTINGS:
        if row.variable:
            monkeypatch.delenv(row.variable, raising=False)
    for name, value in (environ or {}).items():
        monkeypatch.setenv(name, value)
    resolved: settings.Resolved = cli._resolved_settings(
        cli.build_parser().parse_args(["config", *argv]))
    return resolved


def test_mlflow_alone_is_a_local_database_in_the_current_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    resolved = _cli(["--mlflow"], monkeypatch)
    assert resolved.settings.mlflow == f"sqlite:///{tmp_path.resolve() / 'mlflow.db'}"
    assert resolved.sources["mlflow"] == "--mlflow"
    assert _cli([], monkeypatch).settings.mlflow is None  # no tracking unless asked


def test_mlflows_own_variable_turns_tracking_on(monkeypatch: pytest.MonkeyPatch) -> None:
    resolved = _cli([], monkeypatch, {"MLFLOW_TRACKING_URI": "http://127.0.0.1:5000",
                                      "MLFLOW_EXPERIMENT_NAME": "prompts"})
    assert resolved.settings.mlflow == "http://127.0.0.1:5000"
    assert resolved.sources["mlflow"] == "MLFLOW_TRACKING_URI"
    assert resolved.settings.mlflow_experiment == "prompts"
    flagged = _cli(["--mlflow", "http://h:1", "--mlflow-traces"], monkeypatch,
                   {"MLFLOW_TRACKING_URI": "http://127.0.0.1:5000"})
    assert (flagged.settings.mlflow, flagged.settings.mlflow_traces) == ("http://h:1", True)


@pytest.mark.parametrize(("raw", "expected"), [
    ("http://127.0.0.1:5000", "http://127.0.0.1:5000"),
    ("sqlite:///x.db", "sqlite:///x.db"),
    ("databricks", "databricks"),
])
def test_a_tracking_uri_is_kept(raw: str, expected: str) -> None:
    assert settings.tracking_uri(raw, "--mlflow") == expected


def test_a_path_is_a_local_store(tmp_path: Path) -> None:
    assert settings.tracking_uri(str(tmp_path / "t.db"), "--mlflow") == \
        f"sqlite:///{tmp_path / 't.db'}"
    assert settings.tracking_uri(str(tmp_path / "mlruns"), "--mlflow") == \
        (tmp_path / "mlruns").as_uri()


def test_a_uri_mlflow_does_not_take_is_refused_with_examples() -> None:
    with pytest.raises(UsageError, match="MLFLOW_TRACKING_URI: 'ftp://x' is not a tracking "
                                         "URI MLflow takes") as raised:
        settings.resolve({"MLFLOW_TRACKING_URI": "ftp://x"}, {})
    assert raised.value.hint is not None and "http://127.0.0.1:5000" in raised.value.hint


def test_traces_are_a_yes_or_no() -> None:
    assert settings.resolve({"SELFCORRECT_MLFLOW_TRACES": "1"}, {}).settings.mlflow_traces
    assert not settings.resolve({"SELFCORRECT_MLFLOW_TRACES": "no"}, {}).settings.mlflow_traces
    with pytest.raises(UsageError, match="SELFCORRECT_MLFLOW_TRACES: expected yes or no"):
        settings.resolve({"SELFCORRECT_MLFLOW_TRACES": "maybe"}, {})


def test_traces_are_one_run_at_a_time(tmp_path: Path) -> None:
    """Traces use MLflow's process-wide tracking URI: the benchmark's workers and the MCP
    server's concurrent runs would trace into each other."""
    from selfcorrect_action.commands.bench_cmd import bench_humaneval
    from selfcorrect_action.commands.mcp_cmd import serve_mcp

    with pytest.raises(UsageError, match="one run at a time") as raised:
        bench_humaneval({"mode": "model", "model": "openai/x", "workers": 2,
                         "mlflow": f"sqlite:///{tmp_path / 'm.db'}", "mlflow_traces": "yes",
                         "out": tmp_path / "out"}, command=[], environ={})
    assert raised.value.hint == "add --workers 1"
    with pytest.raises(UsageError, match="one run at a time"):
        serve_mcp(root=tmp_path, settings=settings.RunSettings(mlflow_traces=True),
                  max_runs=2, environ={})
