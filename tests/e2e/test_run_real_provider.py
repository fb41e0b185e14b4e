"""`selfcorrect run` against a local server speaking the OpenAI chat API: the real provider
path end to end (record, then replay offline to the same outcome), and an API outage that
ends the run as a clean `error` with its reports written."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from selfcorrect_action.cli import main
from selfcorrect_action.llm.recording import read_recording
from selfcorrect_action.report.run_json import load_run_json
from tests.fakes.openai_server import FakeOpenAIServer, Hang, Reply, Status

ROOT = Path(__file__).parents[2]


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-local-server-only")
    monkeypatch.chdir(ROOT)


@pytest.mark.usefixtures("sandbox_image", "api_key")
def test_record_against_the_api_then_replay_offline(tmp_path: Path) -> None:
    answers = YAML(typ="safe").load((ROOT / "examples/scripted/missing_package.yml").read_text())
    recording = tmp_path / "run.jsonl"
    with FakeOpenAIServer() as server:
        server.script(*(Reply(content=a["answer"], prompt_tokens=None) for a in answers))
        code = main(["run", "examples/tasks/missing_package.yml", "--api-base", server.api_base,
                     "--record", str(recording), "--out", str(tmp_path / "live")])
        assert server.pending == 0 and server.overruns == 0
        sent = server.requests
    assert code == 0
    assert all(r.headers["authorization"] == "Bearer sk-test-local-server-only" for r in sent)
    assert [e.request.purpose for e in read_recording(recording).exchanges] == \
        [a["purpose"] for a in answers]
    live = load_run_json((tmp_path / "live" / "run.json").read_text())
    assert not live.replayed
    assert "sk-test-local-server-only" not in (tmp_path / "live" / "run.json").read_text()

    code = main(["run", "examples/tasks/missing_package.yml", "--replay", str(recording),
                 "--out", str(tmp_path / "replayed")])
    replayed = load_run_json((tmp_path / "replayed" / "run.json").read_text())
    assert code == 0 and replayed.replayed
    assert [a.code for a in replayed.attempts] == [a.code for a in live.attempts]
    assert replayed.usage.tokens == live.usage.tokens


@pytest.mark.usefixtures("sandbox_image", "api_key")
def test_an_api_outage_ends_as_error_with_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAIServer() as server:
        server.script(*[Status(503, retry_after="0")] * 10)
        code = main(["run", "examples/tasks/bar_chart.yml", "--api-base", server.api_base,
                     "--out", str(tmp_path)])
        attempts_made = len(server.requests)
    out = capsys.readouterr().out
    assert code == 3
    assert 1 < attempts_made <= 10  # retried, then gave up
    state = load_run_json((tmp_path / "run.json").read_text())
    assert state.status.value == "error"
    assert "503" in state.stop_reason or "unavailable" in state.stop_reason.lower()
    assert "ERROR" in out
    assert (tmp_path / "AUDIT.md").read_text().count("error") >= 1


@pytest.mark.usefixtures("sandbox_image", "api_key")
def test_secrets_in_api_errors_never_reach_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error body that quotes a token (token-shaped, or the value of a secret variable
    of this process) is redacted on the terminal too, not only in the reports; and a
    Retry-After of NaN is no reason to crash."""
    shaped = "ghp_" + "Z" * 36
    monkeypatch.setenv("DEPLOY_PASSWORD", "hunter2-but-longer")
    message = f"bad request from {shaped} with hunter2-but-longer"
    with FakeOpenAIServer() as server:
        server.script(Status(429, retry_after="nan"), *[Status(400, message=message)] * 5)
        code = main(["run", "examples/tasks/bar_chart.yml", "--api-base", server.api_base,
                     "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 3, err
    for text in (out, err, (tmp_path / "run.json").read_text()):
        assert shaped not in text and "hunter2-but-longer" not in text
    assert "REDACTED" in out + err


@pytest.mark.usefixtures("sandbox_image", "api_key")
def test_sigterm_ends_the_run_like_ctrl_c(tmp_path: Path, docker_client,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """CI cancels with SIGTERM: the reports are still written, they name the signal, the
    exit code is the shell's 143, and none of this run's containers stays. Only the child's
    own containers are counted (by their owner label): another run on the same engine must
    not make this test fail (it did once, counting every sandbox container). The run is
    cancelled, not an error (issue 34): in run.json, `--json` and the history."""
    import json
    import os
    import signal
    import socket
    import subprocess
    import sys
    import time

    from selfcorrect_action.sandbox.config import LABEL_OWNER

    with FakeOpenAIServer() as server:
        server.script(Hang(120))
        child = subprocess.Popen(
            [sys.executable, "-m", "selfcorrect_action", "run", "examples/tasks/bar_chart.yml",
             "--api-base", server.api_base, "--out", str(tmp_path / "out"), "--json",
             "--history", str(tmp_path / "history")],
            cwd=ROOT, env=os.environ.copy(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 90
        while not server.requests:  # the plan call is hanging: the pool container is up
            assert time.monotonic() < deadline and child.poll() is None, child.stderr
            time.sleep(0.2)
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=60)
    assert child.returncode == 143, err.decode()
    assert "interrupted by SIGTERM" in err.decode()
    state = load_run_json((tmp_path / "out" / "run.json").read_text())
    assert state.status.value == "cancelled" and state.interrupted_by == "SIGTERM"
    assert state.stop_reason.startswith("interrupted by SIGTERM")
    assert json.loads(out)["status"] == "cancelled"
    assert main(["history", "--history", str(tmp_path / "history"), "--status", "cancelled",
                 "--json"]) == 0
    assert [run["run_id"] for run in json.loads(capsys.readouterr().out)["runs"]] == [
        state.run_id]
    owner = f"{LABEL_OWNER}={socket.gethostname()}:{child.pid}"
    deadline = time.monotonic() + 30  # the last removals run in the child's own shutdown
    while docker_client.containers.list(all=True, filters={"label": owner}, ignore_removed=True):
        assert time.monotonic() < deadline, "the run left containers behind"
        time.sleep(0.5)
