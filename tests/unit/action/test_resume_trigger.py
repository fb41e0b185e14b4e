"""`/selfcorrect resume` and checkpoints across jobs (issue 37, item 4), without Docker: an
issue's run interrupted in one job keeps its checkpoint in the stand-in's repository, a
re-label then offers to resume instead of paying again, and a resume comment in another job
goes on from it and passes (the engine played at its seam, the model replayed). Every
refusal is said on the issue: no write access, a changed issue text, nothing to resume, a
checkpoint edited after it was saved, a command it cannot read. No secret reaches the ref."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from selfcorrect_action import __version__
from selfcorrect_action.action.env import ActionEnv
from selfcorrect_action.action.handlers import dispatch
from selfcorrect_action.errors import Interrupted
from selfcorrect_action.github.checkpoint_refs import checkpoint_ref, find_checkpoint
from selfcorrect_action.github.events import (
    IssueLabeled,
    ResumeComment,
    RetryComment,
    resume_request,
)
from selfcorrect_action.github.forge import FileChange
from selfcorrect_action.runs.cancel import CancelToken
from tests.fakes.fake_engine import SPEAKS_OUR_PROTOCOL, FakeEngine, Reply
from tests.fakes.github_server import DEFAULT_REPO, FakeGitHub
from tests.fakes.replays import fenced, write_replay
from tests.unit.action.test_task_runs import IMAGE, _env, _output, _spec, _workspace
from tests.unit.github.conftest import MakeForge

PROMPT = "Print hello (issue)."
BODY = f"```yaml\n{_spec(PROMPT)}\n```\n"
CANARY = "canary-5e3c1d9a7b0f"  # a secret of the job's: it must never reach the ref
REF = checkpoint_ref("1")


class Jobs:
    """One issue and the jobs that run on it, each a fresh env on the same repository."""

    def __init__(self, tmp_path: Path, make_forge: MakeForge, fake_github: FakeGitHub):
        self.tmp, self.make_forge, self.github = tmp_path, make_forge, fake_github
        self.jobs = 0
        fake_github.add_collaborator(DEFAULT_REPO, "maria", "write")
        fake_github.add_user("visitor")
        self.number = fake_github.add_issue(DEFAULT_REPO, "Hello", BODY, labels=["selfcorrect"])
        self.said: list[tuple[str, str]] = []

    def env(self, behaviour: FakeEngine, cancel: CancelToken | None = None) -> ActionEnv:
        self.jobs += 1
        workspace = _workspace(self.tmp / f"job-{self.jobs}" / "workspace", [])
        # The model's code prints the secret; the prompt and every report redact it.
        write_replay(workspace / "replays" / "issue-1.jsonl", PROMPT,
                     [("generate", fenced(f"print('hello {CANARY}')"))] * 3)
        env = _env(workspace, self.make_forge, self.github, behaviour, self.said, cancel)
        return replace(env, secrets=[*env.secrets, CANARY])

    def label(self, env: ActionEnv) -> int:
        return dispatch(IssueLabeled(repository=DEFAULT_REPO, actor="maria",
                                     number=self.number, title="Hello", body=BODY), env)

    def comment(self, env: ActionEnv, text: str, *, by: str = "maria") -> int:
        comment_id = self.github.add_comment(DEFAULT_REPO, self.number, text, user=by)
        more = resume_request(text)
        if more is None:
            return dispatch(RetryComment(repository=DEFAULT_REPO, actor=by, number=self.number,
                                         on_pull_request=False, comment_id=comment_id,
                                         guidance=""), env)
        return dispatch(ResumeComment(repository=DEFAULT_REPO, actor=by, number=self.number,
                                      on_pull_request=False, comment_id=comment_id, **more),
                        env)

    def last_comment(self) -> str:
        """Every comment of the bot's, as they read now (each is edited in place, found
        again by its marker, so the newest word is in the comment it first made)."""
        return "\n".join(comment.body for comment in self.github.comments(DEFAULT_REPO,
                                                                          self.number)
                         if comment.user not in ("maria", "visitor")).replace("\\`", "`")

    def output(self, env: ActionEnv, name: str) -> str:
        assert env.context.output_file is not None
        return _output(env.context.output_file.read_text(), name)


def _engine(text: str, cancel: CancelToken | None = None) -> FakeEngine:
    def behave(header: dict[str, object]) -> Reply:
        if cancel is not None:
            cancel.cancel("SIGTERM")  # the job is cancelled while the script runs
        return Reply(report={"exit_code": 0, "stdout": {"text": text, "total_bytes": len(text)}})

    return FakeEngine(images={IMAGE: SPEAKS_OUR_PROTOCOL}, behaviour=behave)


@pytest.fixture
def jobs(tmp_path: Path, make_forge: MakeForge, fake_github: FakeGitHub) -> Jobs:
    return Jobs(tmp_path, make_forge, fake_github)


def _interrupted(jobs: Jobs) -> None:
    """The first job: labelled, cancelled while its first attempt runs."""
    token = CancelToken()
    with pytest.raises(Interrupted):
        jobs.label(jobs.env(_engine("bye\n", token), token))


def test_an_interrupted_run_is_offered_on_relabel_and_goes_on_after_resume(
        jobs: Jobs, fake_github: FakeGitHub, make_forge: MakeForge) -> None:
    _interrupted(jobs)
    found = find_checkpoint(make_forge(), "1")
    assert found is not None and found.note is not None
    assert found.note.version == __version__ and found.note.attempts == 1
    cancelled = jobs.last_comment()
    assert "`/selfcorrect resume`" in cancelled and REF in cancelled
    for path in ("checkpoint.json", "exchanges.jsonl"):  # the canary: redacted everywhere
        text = fake_github.git(DEFAULT_REPO, "show", f"{found.commit.sha}:{path}")
        assert CANARY not in text
    assert CANARY not in found.commit.message

    # A re-label of the same text: nothing started, the choice said, status resumable.
    relabel = jobs.env(_engine("hello\n"))
    assert jobs.label(relabel) == 0
    assert jobs.output(relabel, "status") == "resumable"
    offer = jobs.last_comment()
    assert "**selfcorrect can resume** issue #1" in offer and "1 attempt" in offer
    assert "`/selfcorrect retry`" in offer
    assert find_checkpoint(make_forge(), "1") is not None

    resume = jobs.env(_engine(f"hello {CANARY}\n"))
    assert jobs.comment(resume, "/selfcorrect resume more attempts 1") == 0
    assert jobs.output(resume, "status") == "passed"
    assert any(step == "resume" and "going on from" in message for step, message in jobs.said)
    (pull,) = fake_github.pulls(DEFAULT_REPO)
    assert "Resumed from the checkpoint" in jobs.last_comment()
    assert REF not in fake_github.refs(DEFAULT_REPO)  # a passed run drops its checkpoint
    run_json = next((resume.context.workspace / ".selfcorrect" / "runs").glob("*/run.json"))
    assert json.loads(run_json.read_text())["resumes"][0]["more_attempts"] == 1
    assert pull.head.endswith(":selfcorrect/issue-1")


def test_a_retry_starts_afresh_and_says_which_checkpoint_it_replaces(
        jobs: Jobs, make_forge: MakeForge) -> None:
    _interrupted(jobs)
    before = find_checkpoint(make_forge(), "1")
    token = CancelToken()
    with pytest.raises(Interrupted):
        jobs.comment(jobs.env(_engine("bye\n", token), token), "/selfcorrect retry")
    assert "This run starts afresh" in jobs.last_comment()
    after = find_checkpoint(make_forge(), "1")
    assert before is not None and after is not None and after.commit.sha != before.commit.sha
    assert after.note is not None and after.note.run_id != (before.note and before.note.run_id)


def test_resume_refusals_are_said_on_the_issue(jobs: Jobs, fake_github: FakeGitHub,
                                               make_forge: MakeForge) -> None:
    engine = _engine("hello\n")
    assert jobs.comment(jobs.env(engine), "/selfcorrect resume", by="visitor") == 0
    assert "write access" in jobs.last_comment()
    assert jobs.comment(jobs.env(engine), "/selfcorrect resume please") == 0
    assert "`please` is not something resume takes" in jobs.last_comment()
    # No labelled run yet: no approval to resume under.
    assert jobs.comment(jobs.env(engine), "/selfcorrect resume") == 0
    assert "has no run started by its label" in jobs.last_comment()
    _interrupted(jobs)
    # Nothing to resume: the checkpoint is gone (a passed run, a removal).
    forge = make_forge()
    kept = fake_github.refs(DEFAULT_REPO)[REF]
    forge.delete_ref(REF, kept)
    assert jobs.comment(jobs.env(engine), "/selfcorrect resume") == 0
    assert "has nothing to resume: no checkpoint is kept for it" in jobs.last_comment()
    assert "/selfcorrect retry" in jobs.last_comment()
    # Edited after it was saved: refused before anything runs.
    found_tree = fake_github.git(DEFAULT_REPO, "rev-parse", f"{kept}^{{tree}}").strip()
    message = fake_github.git(DEFAULT_REPO, "log", "-1", "--format=%B", kept)
    tree = forge.write_tree(None, [FileChange(path="checkpoint.json", content=fake_github.git(
        DEFAULT_REPO, "show", f"{found_tree}:checkpoint.json")), FileChange(
        path="exchanges.jsonl", content="{}\n")])
    assert forge.create_ref(REF, forge.write_commit(None, tree, message))
    assert jobs.comment(jobs.env(engine), "/selfcorrect resume") == 0
    assert "cannot be resumed" in jobs.last_comment()
    assert fake_github.pulls(DEFAULT_REPO) == []


def test_a_changed_issue_text_is_not_resumed(jobs: Jobs, fake_github: FakeGitHub,
                                             make_forge: MakeForge) -> None:
    _interrupted(jobs)
    fake_github.edit_issue(DEFAULT_REPO, jobs.number, body=BODY + "\nAnd more.\n")
    assert jobs.comment(jobs.env(_engine("hello\n")), "/selfcorrect resume") == 0
    assert "changed after its `selfcorrect` label was added" in jobs.last_comment()
    assert fake_github.pulls(DEFAULT_REPO) == []


def test_a_checkpoint_of_another_version_is_removed_not_resumed(
        jobs: Jobs, fake_github: FakeGitHub, make_forge: MakeForge) -> None:
    _interrupted(jobs)
    forge = make_forge()
    kept = fake_github.refs(DEFAULT_REPO)[REF]
    old = fake_github.git(DEFAULT_REPO, "log", "-1", "--format=%B", kept).replace(
        f"Version: {__version__}", "Version: 0.0.1")
    tree = fake_github.git(DEFAULT_REPO, "rev-parse", f"{kept}^{{tree}}").strip()
    forge.delete_ref(REF, kept)
    assert forge.create_ref(REF, forge.write_commit(None, tree, old))
    assert jobs.comment(jobs.env(_engine("hello\n")), "/selfcorrect resume") == 0
    assert "made by selfcorrect 0.0.1" in jobs.last_comment()
    assert REF not in fake_github.refs(DEFAULT_REPO)
