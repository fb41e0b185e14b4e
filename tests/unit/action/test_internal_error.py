"""A bug in selfcorrect during the action's run (an exception that is not one of ours), as
the runner starts it (`selfcorrect action`, through cli.main): the issue says so first,
with the approval kept for the retry it suggests and the crash log named; then cli.main's
last resort prints one line (no traceback in a log that is often public), writes the
redacted traceback beside the run folders, where the example workflows upload it, and
exits 3 (issue 16, items 2 and 5). In process, up to where the task would start."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfcorrect_action.action import handlers
from selfcorrect_action.cli import main
from selfcorrect_action.github.naming import approval_marker, body_digest
from tests.e2e.action.harness import checkout, labeled, runner_inputs
from tests.fakes.github_server import DEFAULT_REPO, FakeGitHub, Identity

BODY = "Say hi.\n\n```yaml\nprompt: Print hi.\n```\n"


def test_an_internal_error_in_the_action_exits_3_and_leaves_its_traceback_for_upload(
        github: FakeGitHub, identity: Identity, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    workspace = checkout(github, tmp_path / "workspace")
    event = labeled(github, body=BODY)
    (tmp_path / "event.json").write_text(json.dumps(event))
    (tmp_path / "output").write_text("")
    given = {"bot-login": identity.bot_login_input} if identity.bot_login_input else {}
    inputs = runner_inputs(given, token=identity.token)
    for name, value in {
        "GITHUB_EVENT_NAME": "issues", "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
        "GITHUB_WORKSPACE": str(workspace), "GITHUB_REPOSITORY": DEFAULT_REPO,
        "GITHUB_API_URL": github.api_url, "GITHUB_SERVER_URL": "https://gh.example",
        "GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": "1",
        "GITHUB_OUTPUT": str(tmp_path / "output"), "HOME": str(tmp_path / "home"),
        **{f"INPUT_{name.upper()}": value for name, value in inputs.items()},
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError(f"bad state with {identity.token}")

    monkeypatch.setattr(handlers, "run_task", broken)
    assert main(["action"]) == 3

    out, err = capsys.readouterr()
    (log,) = (workspace / ".selfcorrect" / "runs").glob("crash-*.log")
    assert "internal error (RuntimeError)" in err and str(log) in err
    assert "Traceback" not in out + err and identity.token not in out + err
    text = log.read_text()
    assert "Traceback" in text and "RuntimeError: bad state with" in text
    assert identity.token not in text
    assert not (tmp_path / "home").exists()  # not into a cache no later step uploads

    comment = github.comments(DEFAULT_REPO, event["issue"]["number"])[-1]
    assert comment.user == identity.login
    assert "internal error (RuntimeError)" in comment.body
    assert ".selfcorrect/runs/crash-" in comment.body and "job's log" in comment.body
    assert "with the job's log\n" not in comment.body  # which no longer holds the traceback
    # The retry the comment suggests is checked against the approval of the labelled text.
    assert approval_marker(body_digest(BODY)) in comment.body
    assert identity.token not in comment.body
