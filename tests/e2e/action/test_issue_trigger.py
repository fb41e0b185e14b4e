"""The issue-label trigger end to end: the action's image run as the runner runs it, the
bar-chart example replayed as the model, real sibling sandboxes, and the GitHub stand-in's
state (pull request, branch, files, comments, labels) and the outputs file asserted."""

from __future__ import annotations

import hashlib
import json

import pytest

from selfcorrect_action.verified.record import parse_record
from tests.e2e.action.harness import OUTSIDER, RunAction, labeled
from tests.fakes.github_server import DEFAULT_REPO, FakeGitHub

pytestmark = pytest.mark.docker
def test_a_labelled_issue_gets_a_pull_request_with_script_and_audit(
    act: RunAction, github: FakeGitHub
) -> None:
    run = act("issues", labeled(github), replay="replays")
    assert run.returncode == 0, run.log
    (pull,) = github.pulls(DEFAULT_REPO)
    assert pull.head == f"{DEFAULT_REPO.split('/')[0]}:selfcorrect/issue-1"
    assert pull.user == act.identity.login and not pull.draft and pull.state == "open"
    assert "Closes #1" in (pull.body or "") and "replay" in (pull.body or "").lower()
    branch = "selfcorrect/issue-1"
    script = github.read_file(DEFAULT_REPO, branch, "scripts/sales_chart.py")
    assert script and b"chart.png" in script
    run_id = json.loads(run.outputs["results"])[0]["audit_path"].split("/")[2]
    audit = github.read_file(DEFAULT_REPO, branch, f".selfcorrect/runs/{run_id}/AUDIT.md")
    state = github.read_file(DEFAULT_REPO, branch, f".selfcorrect/runs/{run_id}/run.json")
    assert audit and b"passed" in audit and state and b'"status": "passed"' in state
    # What was verified (issue 36): the script as committed, its header naming the issue,
    # and the record named after it, pointing at the committed run.json (the issue's spec).
    assert script.startswith(b"# selfcorrect: generated from issue #1; what was verified "
                             b"is in .selfcorrect/lock/issue-1.json\n")
    committed = github.read_file(DEFAULT_REPO, branch, ".selfcorrect/lock/issue-1.json")
    assert committed is not None
    record = parse_record(committed.decode(), "r")
    assert (record.spec, record.run_id) == ("issue #1", run_id)
    assert record.run_record == f".selfcorrect/runs/{run_id}/run.json"
    assert record.script.sha256 == hashlib.sha256(script).hexdigest()
    assert record.image.packages_digest, "the action's run listed the image's packages"
    recorded = json.loads(state)
    assert recorded["final_check"]["passed"] and recorded["selfcorrect_version"]
    comments = github.comments(DEFAULT_REPO, 1)
    assert len(comments) == 1, [c.body for c in comments]
    assert "passed" in comments[0].body and "/pull/" in comments[0].body
    assert "selfcorrect:passed" in github.labels(DEFAULT_REPO, 1)
    assert "selfcorrect:running" not in github.labels(DEFAULT_REPO, 1)
    assert run.outputs["status"] == "passed" and run.outputs["pr-url"].endswith(
        f"/pull/{pull.number}")
    assert int(run.outputs["attempts"]) == 2 and int(run.outputs["tokens"]) > 0
    assert "selfcorrect: passed" in run.summary
    # The attempt viewer, in the workspace for the workflow's upload step.
    page = act.last_workspace / run.outputs["viewer-path"]
    assert page.parent.name == run_id and page.name.startswith("selfcorrect-issue-1-")
    html = page.read_text()
    assert html.count("data:image/png;base64,") >= 2 and "Content-Security-Policy" in html
    assert run.outputs["viewer-path"] in run.summary
    assert "ghs_" not in run.log + run.summary + comments[0].body
    (check,) = github.check_runs(DEFAULT_REPO)
    assert (check.head_sha, check.conclusion) == (pull.head_sha, "success")


def test_a_labeler_without_write_access_is_refused_and_told_why(
    act: RunAction, github: FakeGitHub
) -> None:
    run = act("issues", labeled(github, by=OUTSIDER), replay="replays")
    assert run.returncode == 0, run.log
    assert github.pulls(DEFAULT_REPO) == []
    (comment,) = github.comments(DEFAULT_REPO, 1)
    assert "did not run" in comment.body and "write" in comment.body
    assert "selfcorrect" not in github.labels(DEFAULT_REPO, 1)  # removed, to be re-added
    assert run.outputs["status"] == "refused"


def test_a_malformed_issue_body_is_answered_with_located_problems(
    act: RunAction, github: FakeGitHub
) -> None:
    body = "```yaml\nprompt: draw it\ncontract:\n  timeout_s: -3\n  colour: red\n```\n"
    run = act("issues", labeled(github, body=body), replay="replays")
    assert run.returncode == 1, run.log
    (comment,) = github.comments(DEFAULT_REPO, 1)
    assert "could not read the task" in comment.body
    assert ":3:" in comment.body and ":4:" in comment.body  # lines within the block
    assert github.pulls(DEFAULT_REPO) == []
    assert run.outputs["status"] == "invalid-spec"
