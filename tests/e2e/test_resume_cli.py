"""`selfcorrect run` killed in its second attempt and finished by `--resume` (issue 37), in
the real sandbox, against the OpenAI stand-in on 127.0.0.1, which counts every request:
the resumed run makes only the calls the killed one had not had answered.

- SIGTERM while the repair's answer is awaited: the run ends cancelled (exit 143), its
  reports written; the resumed run executes attempt 1 again and asks for the repair the
  killed one never got (the very same request), then the judge.
- SIGKILL while the judge's answer is awaited: nothing is written after the kill; the
  resumed run executes attempt 2 again (a checkpoint carries answers, not verdicts) and
  asks only the judge.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import docker
import pytest
from ruamel.yaml import YAML

from selfcorrect_action.cli import main
from selfcorrect_action.loop.state import Status
from selfcorrect_action.report.run_json import load_run_json
from selfcorrect_action.runs.checkpoint import RESUMABLE_DIR, read_checkpoint
from selfcorrect_action.sandbox.config import LABEL_OWNER
from tests.fakes.openai_server import Delayed, FakeOpenAIServer, Reply
from tests.fakes.replays import fenced

ROOT = Path(__file__).parents[2]
SPEC = {
    "prompt": "Print hello.", "output": "hello.py",
    "budget": {"patch_attempts": 2, "rethink_attempts": 0},
    "contract": {"artifacts": [], "stdout_contains": ["hello"], "timeout_s": 30,
                 "memory_mb": 256, "success_criteria": ["it says hello"]},
}
GOODBYE = Reply(fenced("print('goodbye')"), prompt_tokens=None)
HELLO = Reply(fenced("print('hello')"), prompt_tokens=None)
PASS = Reply('{"verdict": "pass", "reasoning": "it says hello"}', prompt_tokens=None)
NEVER = 120.0  # an answer the killed run waits for and never gets


@pytest.fixture
def task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-local-server-only")
    path = tmp_path / "hello.yml"
    with path.open("w") as stream:
        YAML().dump(SPEC, stream)
    return path


def argv(task: Path, server: FakeOpenAIServer, out: Path, *more: str) -> list[str]:
    return ["run", str(task), "--model", "openai/m", "--api-base", server.api_base,
            "--history", str(task.parent / "history"), "--out", str(out), *more]


def killed(task: Path, server: FakeOpenAIServer, *, when_requests: int, sig: int,
           client: docker.DockerClient) -> tuple[str, int, str]:
    """The run in its own process, sent `sig` once the model stand-in has received
    `when_requests` requests: its run id, exit code and what it said."""
    command = [sys.executable, "-u", "-m", "selfcorrect_action",
               *argv(task, server, task.parent / "killed")]
    with subprocess.Popen(command, cwd=task.parent, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True) as child:
        try:
            deadline = time.monotonic() + 240
            while len(server.requests) < when_requests and child.poll() is None:
                assert time.monotonic() < deadline, "the run never got that far"
                time.sleep(0.05)
            child.send_signal(sig)
            _, said = child.communicate(timeout=120)
        finally:
            child.kill()
            child.wait(timeout=60)
            _remove_containers_of(child.pid, client)
    (folder,) = (task.parent / "history" / RESUMABLE_DIR).iterdir()
    return folder.name, child.returncode, said


def _remove_containers_of(pid: int, client: docker.DockerClient) -> None:
    owner = f"{socket.gethostname()}:{pid}"
    for container in client.containers.list(
            all=True, filters={"label": f"{LABEL_OWNER}={owner}"}, ignore_removed=True):
        with contextlib.suppress(docker.errors.NotFound):
            container.remove(force=True)


@pytest.mark.usefixtures("sandbox_image")
def test_a_run_stopped_by_sigterm_in_attempt_2_is_finished_by_resume(
        task: Path, docker_client: docker.DockerClient,
        capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAIServer() as server:
        server.script(GOODBYE, Delayed(NEVER, HELLO))
        run_id, code, said = killed(task, server, when_requests=2, sig=signal.SIGTERM,
                                    client=docker_client)
        assert code == 143, said
        assert f"--resume {run_id}" in said
        cancelled = load_run_json((task.parent / "killed" / "run.json").read_text())
        assert cancelled.status is Status.CANCELLED and len(cancelled.attempts) == 1
        checkpoint = read_checkpoint(task.parent / "history" / RESUMABLE_DIR / run_id)
        assert checkpoint.header.ended is not None

        server.script(HELLO, PASS)
        code = main(argv(task, server, task.parent / "resumed", "--resume", run_id))
        err = capsys.readouterr().err
        requests = server.requests
    assert code == 0, err
    assert len(requests) == 4 and server.overruns == 0
    # The resumed run asked for the repair the killed one never got: the same request.
    assert requests[2].body == requests[1].body
    resumed = load_run_json((task.parent / "resumed" / "run.json").read_text())
    assert resumed.run_id == run_id and resumed.status is Status.PASSED
    (note,) = resumed.resumes
    assert (note.attempts_before, note.reexecuted) == (1, 1)
    assert note.previous_status is Status.CANCELLED
    assert "attempt 1 is executed again" in err
    assert "## Resumed" in (task.parent / "resumed" / "AUDIT.md").read_text()


@pytest.mark.usefixtures("sandbox_image")
def test_a_run_killed_by_sigkill_in_attempt_2_is_finished_by_resume(
        task: Path, docker_client: docker.DockerClient,
        capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAIServer() as server:
        server.script(GOODBYE, HELLO, Delayed(NEVER, PASS))
        run_id, code, said = killed(task, server, when_requests=3, sig=signal.SIGKILL,
                                    client=docker_client)
        assert code == -signal.SIGKILL, said
        assert not (task.parent / "killed" / "run.json").exists()  # nothing after the kill

        server.script(PASS)
        code = main(argv(task, server, task.parent / "resumed", "--resume", run_id[:8]))
        err = capsys.readouterr().err
        requests = server.requests
    assert code == 0, err
    # Only the judge again: attempt 2 was generated, and saved, before the kill.
    assert len(requests) == 4 and server.overruns == 0
    assert requests[3].body == requests[2].body
    resumed = load_run_json((task.parent / "resumed" / "run.json").read_text())
    assert resumed.status is Status.PASSED and len(resumed.attempts) == 2
    (note,) = resumed.resumes
    assert note.previous_status is Status.RUNNING and note.reexecuted == 2
    assert not (task.parent / "history" / RESUMABLE_DIR / run_id).exists()
    assert os.path.isdir(task.parent / "history")
