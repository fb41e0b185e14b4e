"""A run across two jobs (issue 37, item 4): the action's container is sent SIGTERM while the
issue's run waits on its repair call, after its first attempt was kept as a checkpoint in the
stand-in's repository; a second job, started by a `/selfcorrect resume` comment, goes on
from it and passes. The model stand-in counts the calls: the second job makes only those the
first did not (the repair and the judge), never the plan and the first generation again."""

from __future__ import annotations

import json
import subprocess
import time
import uuid

import pytest

from tests.e2e.action.harness import MAINTAINER, REPLAY, RunAction, checkout, labeled, runner_inputs
from tests.e2e.action.runner import prepare
from tests.fakes.github_server import DEFAULT_REPO, IDENTITIES, FakeGitHub
from tests.fakes.openai_server import FakeOpenAIServer, Hang, Reply

pytestmark = pytest.mark.docker
REF = "refs/selfcorrect/checkpoints/1"


def _answers() -> dict[str, str]:
    """The recorded example's answer to each purpose (plan, generate, repair, judge)."""
    lines = [json.loads(line) for line in REPLAY.splitlines()[1:] if line.strip()]
    return {line["request"]["purpose"]: line["response"]["text"] for line in lines}


def _first_job(act: RunAction, github: FakeGitHub, answers: dict[str, str]) -> str:
    """Labelled, then cancelled while the repair call hangs; the job's log."""
    workspace = checkout(github, act.scratch / "first" / "workspace")
    name = f"selfcorrect-resume-{uuid.uuid4().hex[:8]}"
    with FakeOpenAIServer() as server:
        server.script(Reply(answers["plan"], prompt_tokens=None),
                      Reply(answers["generate"], prompt_tokens=None), Hang(120))
        prepared = prepare(act.image, workspace=workspace, scratch=act.scratch / "first",
                           event_name="issues", event=labeled(github),
                           inputs=runner_inputs({"model": "openai/local",
                                                 "api-base": server.api_base},
                                                token=act.identity.token),
                           repository=DEFAULT_REPO, api_url=github.api_url)
        argv = [*prepared.argv[:2], "--name", name, *prepared.argv[2:]]
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True)
        try:
            deadline = time.monotonic() + 240  # the first job builds the sandbox image
            while len(server.requests) < 3:  # the repair call is hanging
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
    assert child.returncode == 143, log
    return log


# One identity: the token's kind changes nothing here that test_cancelled.py and the issue
# tests do not cover, and each variant costs two jobs of CI time.
@pytest.mark.parametrize("act", [IDENTITIES[0]], indirect=True, ids=[IDENTITIES[0].name])
def test_a_cancelled_job_is_finished_by_a_resume_comment_paying_only_the_missing_calls(
        act: RunAction, github: FakeGitHub) -> None:
    answers = _answers()
    log = _first_job(act, github, answers)
    assert REF in github.refs(DEFAULT_REPO), log
    cancelled = github.comments(DEFAULT_REPO, 1)[-1].body
    assert "**Cancelled**" in cancelled and "/selfcorrect resume" in cancelled

    comment = github.add_comment(DEFAULT_REPO, 1, "/selfcorrect resume", user=MAINTAINER)
    with FakeOpenAIServer() as server:
        server.script(Reply(answers["repair"], prompt_tokens=None),
                      Reply(answers["judge"], prompt_tokens=None))
        run = act("issue_comment", github.event("issue_comment", DEFAULT_REPO, number=1,
                                                comment_id=comment),
                  model="openai/local", api_base=server.api_base)
        purposes = [request.body["messages"][0]["content"][:40] for request in server.requests]
    assert run.returncode == 0 and run.outputs["status"] == "passed", run.log
    assert len(purposes) == 2, purposes  # the repair and the judge: nothing paid twice
    assert "going on from refs/selfcorrect/checkpoints/1" in run.log
    (pull,) = github.pulls(DEFAULT_REPO)
    assert pull.head.endswith(":selfcorrect/issue-1")
    assert REF not in github.refs(DEFAULT_REPO)  # the passed run removed its checkpoint
    assert any("Resumed from the checkpoint" in c.body for c in github.comments(DEFAULT_REPO, 1))
