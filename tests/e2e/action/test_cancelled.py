"""A cancelled job: the runner sends the action's container SIGTERM while a model call hangs.
The action must end the way `selfcorrect run` does (runs/pipeline.py): reports written into
the workspace, nothing published, no further spec started, status `cancelled`, exit 143. It
used to publish the interrupted run as if it had ended and go on with the next spec."""

from __future__ import annotations

import subprocess
import time
import uuid

import pytest

from selfcorrect_action.github.checkpoint_refs import CHECKPOINT_PREFIX
from selfcorrect_action.report import load_run_json
from tests.e2e.action.harness import MAINTAINER, SPEC, RunAction, checkout, runner_inputs
from tests.e2e.action.runner import prepare, read_outputs
from tests.fakes.github_server import DEFAULT_REPO, FakeGitHub
from tests.fakes.openai_server import FakeOpenAIServer, Hang

pytestmark = pytest.mark.docker


def test_sigterm_stops_the_action_publishes_nothing_and_exits_143(
        act: RunAction, github: FakeGitHub) -> None:
    github.commit_files(DEFAULT_REPO, "main", {".selfcorrect/tasks/second.yml": SPEC},
                        message="a second task")
    workspace = checkout(github, act.scratch / "cancelled" / "workspace")
    name = f"selfcorrect-cancel-{uuid.uuid4().hex[:8]}"
    with FakeOpenAIServer() as server:
        server.script(Hang(120), Hang(120))
        prepared = prepare(act.image, workspace=workspace, scratch=act.scratch / "cancelled",
                           event_name="workflow_dispatch",
                           event=github.event("workflow_dispatch", DEFAULT_REPO, sender=MAINTAINER),
                           inputs=runner_inputs({"model": "openai/local",
                                                 "api-base": server.api_base},
                                                token=act.identity.token),
                           repository=DEFAULT_REPO, api_url=github.api_url)
        argv = [*prepared.argv[:2], "--name", name, *prepared.argv[2:]]
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True)
        try:
            deadline = time.monotonic() + 240  # the first job builds the sandbox image
            while not server.requests:  # the first task's plan call is hanging
                assert child.poll() is None and time.monotonic() < deadline, \
                    child.stdout.read() if child.stdout else ""
                time.sleep(0.3)
            subprocess.run(["docker", "kill", "--signal", "TERM", name], check=True,
                           capture_output=True)
            log, _ = child.communicate(timeout=90)
        finally:
            if child.poll() is None:
                subprocess.run(["docker", "kill", name], capture_output=True)
                child.wait()
        requests = len(server.requests)
    assert child.returncode == 143, log
    assert requests == 1, "the second spec was started after the cancel"
    assert github.pulls(DEFAULT_REPO) == [], log
    # No branch, no lock left: only the checkpoint of the run it cancelled, which a
    # `/selfcorrect resume` goes on from (issue 37).
    refs = [ref for ref in github.refs(DEFAULT_REPO) if "selfcorrect/" in ref]
    assert [ref for ref in refs if not ref.startswith(CHECKPOINT_PREFIX)] == [], refs
    assert len(refs) == 1 and "bar_chart" in refs[0], refs
    (run_json,) = (workspace / ".selfcorrect" / "runs").glob("*/run.json")
    state = load_run_json(run_json.read_text())
    # Cancelled, not an error (issue 34): in the run's record and in the step's outputs.
    assert state.interrupted_by == "SIGTERM" and state.status.value == "cancelled"
    assert read_outputs(prepared.outputs.read_text())["status"] == "cancelled"
    assert "interrupted by SIGTERM" in log
