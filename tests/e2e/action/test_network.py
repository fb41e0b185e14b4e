"""Network by allowlist through the action's own image (issue 19), run as GitHub's runner
runs a Docker action: the action in its container talks to the runner's Docker socket, its
sandboxes are sibling containers with no network interface, and their only way out is the
egress tunnel over the attach stream to the proxy in the action's process. No iptables, no
privileged container, no change to the daemon.

The stand-in API listens on this machine's 127.0.0.1 (the action's container shares the
host's network, as the harness's stand-in for the job network); its name reaches the proxy
through the test-only SELFCORRECT_TEST_LOOPBACK_HOSTS. The refused host is refused by the
allow list before any lookup: no traffic leaves loopback. One scenario, run as every action
scenario is, with GITHUB_TOKEN and with a GitHub App's installation token (`act`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from selfcorrect_action.sandbox.egress.policy import TEST_LOOPBACK_HOSTS
from tests.e2e.action.harness import RunAction, labeled
from tests.fakes.github_server import DEFAULT_REPO, FakeGitHub
from tests.fakes.replays import fenced, write_replay
from tests.fakes.upstream import Upstreams, upstreams

pytestmark = pytest.mark.docker
API = "api.stand-in.test"
SCRIPT = """\
import json
import requests

answer = requests.get("http://{api}:{port}/data", timeout=10).text
try:
    requests.get("https://evil.example.com/", timeout=10)
except requests.exceptions.ProxyError:
    print("evil.example.com was refused, as it should be")
with open("answer.json", "w") as handle:
    json.dump({{"value": answer}}, handle)
print("done")
"""


def spec(port: int) -> str:
    return f"""prompt: Fetch /data from the stand-in API and save its answer in answer.json.
kind: script
output: scripts/fetch_answer.py
judge: false
contract:
  artifacts:
    - path: answer.json
      kind: json
      required_keys: [value]
  stdout_contains: ["done"]
  network:
    allow: [{API}]
    ports: [{port}]
  timeout_s: 30
  memory_mb: 256
  success_criteria: ["answer.json holds the API's answer"]
"""


@pytest.fixture
def stand_in(tmp_path: Path) -> Iterator[Upstreams]:
    with upstreams(API, tmp_path) as found:
        yield found


def test_an_allowlisted_task_reaches_its_api_and_nothing_else_from_the_actions_container(
        act: RunAction, github: FakeGitHub, stand_in: Upstreams, tmp_path: Path) -> None:
    task = spec(stand_in.http_port)
    replay = write_replay(tmp_path / "issue-1.jsonl", task.split("\n")[0].split(": ", 1)[1], [
        ("generate", fenced(SCRIPT.format(api=API, port=stand_in.http_port)))])
    github.commit_files(DEFAULT_REPO, "main", {"replays/issue-1.jsonl": replay.read_text()},
                        message="the recorded answer")

    run = act("issues", labeled(github, body=f"Fetch it.\n\n```yaml\n{task}```\n"),
              replay="replays", env={TEST_LOOPBACK_HOSTS: API})

    assert run.returncode == 0, run.log
    assert run.outputs["status"] == "passed", run.log
    assert stand_in.seen.requests == [(f"{API}:{stand_in.http_port}", "GET", "/data")]
    branch = "selfcorrect/issue-1"
    run_id = json.loads(run.outputs["results"])[0]["audit_path"].split("/")[2]
    audit = (github.read_file(DEFAULT_REPO, branch, f".selfcorrect/runs/{run_id}/AUDIT.md")
             or b"").decode()
    assert "2 connections through the egress proxy" in audit
    assert f"| {API} | {stand_in.http_port} | http | allowed |" in audit
    assert "| evil.example.com | 443 | https | refused |" in audit
    # Published with its header and record, but not run a second time: that would have
    # reached the API again (issue 36).
    recorded = json.loads(github.read_file(DEFAULT_REPO, branch,
                                           f".selfcorrect/runs/{run_id}/run.json") or b"{}")
    assert "contract opens the network" in recorded["final_check"]["skipped"]
    assert github.read_file(DEFAULT_REPO, branch, ".selfcorrect/lock/issue-1.json")
    # The comment names the refused host with the one line to add.
    (comment,) = github.comments(DEFAULT_REPO, 1)
    assert comment.user == act.identity.login
    assert "**Network refused:** `evil.example.com`" in comment.body
    assert "      - evil.example.com" in comment.body
