"""`/selfcorrect fix` through the action's entry point against the GitHub stand-in, up to
the point a repair would start its sandbox: who may ask, forks answered with the command to
run locally, a checkout that is not the pull request's head refused, the spec (the
repository's repair.yml, else the Python files the pull request changes). The whole run,
with its commit on the pull request's branch, is tests/e2e/action/test_repair.py's."""

from __future__ import annotations

from typing import Any

from tests.e2e.action.harness import MAINTAINER, OUTSIDER
from tests.fakes.github_server import DEFAULT_REPO, FakeGitHub
from tests.unit.action.conftest import Act

BRANCH = "feature/mean"
CORE = "def mean(values):\n    return sum(values) / (len(values) + 1)\n"
TEST = "from pkg.core import mean\n\n\ndef test_mean():\n    assert mean([2, 4]) == 3\n"


def _pull(github: FakeGitHub, files: dict[str, str] | None = None) -> int:
    github.add_branch(DEFAULT_REPO, BRANCH, files=files or {
        "pkg/__init__.py": "", "pkg/core.py": CORE, "tests/test_core.py": TEST})
    return github.add_pull(DEFAULT_REPO, BRANCH, title="mean", user=MAINTAINER)


def _fix(github: FakeGitHub, number: int, *, by: str = MAINTAINER,
         text: str = "/selfcorrect fix") -> dict[str, Any]:
    comment = github.add_comment(DEFAULT_REPO, number, text, user=by)
    return github.event("issue_comment", DEFAULT_REPO, number=number, comment_id=comment)


def _last_comment(github: FakeGitHub, number: int) -> str:
    return github.comments(DEFAULT_REPO, number)[-1].body


def test_a_fix_on_the_pull_requests_head_runs_a_repair_of_its_python_files(
        act: Act, github: FakeGitHub) -> None:
    number = _pull(github)
    run = act("issue_comment", _fix(github, number), ref=BRANCH)
    # No model configured: it stops at the models, after the task was made.
    assert (run.code, run.outputs["status"]) == (2, "error"), run.stdout
    assert f"task: pull request #{number} -> {BRANCH}" in run.stdout
    assert github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"] == github.pulls(
        DEFAULT_REPO)[0].head_sha  # nothing pushed


def test_a_fix_asked_by_someone_without_write_access_is_refused(
        act: Act, github: FakeGitHub) -> None:
    number = _pull(github)
    run = act("issue_comment", _fix(github, number, by=OUTSIDER), ref=BRANCH)
    assert (run.code, run.outputs["status"]) == (0, "refused")
    assert "/selfcorrect fix" in _last_comment(github, number)


def test_a_fix_on_a_fork_is_answered_with_the_command_to_run_locally(
        act: Act, github: FakeGitHub) -> None:
    github.add_repo(f"{OUTSIDER}/hello-world", fork_of=DEFAULT_REPO)
    github.add_branch(f"{OUTSIDER}/hello-world", "mean", files={"pkg/core.py": CORE})
    number = github.add_pull(DEFAULT_REPO, f"{OUTSIDER}:mean", user=OUTSIDER)
    run = act("issue_comment", _fix(github, number))
    assert (run.code, run.outputs["status"]) == (0, "refused")
    body = _last_comment(github, number)
    assert f"comes from a fork (`{OUTSIDER}/hello-world`)" in body
    assert "selfcorrect run .selfcorrect/repair.yml --model <provider/model> --apply" in body
    assert github.refs(DEFAULT_REPO, "refs/heads/selfcorrect/") == {}


def test_a_checkout_that_is_not_the_pull_requests_head_is_refused(
        act: Act, github: FakeGitHub) -> None:
    number = _pull(github)
    run = act("issue_comment", _fix(github, number), ref="main")
    assert (run.code, run.outputs["status"]) == (0, "refused")
    body = _last_comment(github, number)
    assert "not the pull request's head" in body and f"refs/pull/{number}/head" in body


def test_a_fix_on_an_issue_says_it_is_for_pull_requests(act: Act, github: FakeGitHub) -> None:
    number = github.add_issue(DEFAULT_REPO, "mean is wrong", "it is")
    run = act("issue_comment", _fix(github, number))
    assert run.code == 0
    assert "repairs a pull request's code, and this is an issue" in _last_comment(github,
                                                                                  number)


def test_a_pull_request_changing_no_python_source_needs_a_repair_spec(
        act: Act, github: FakeGitHub) -> None:
    number = _pull(github, {"tests/test_core.py": TEST, "README.md": "more\n"})
    act("issue_comment", _fix(github, number), ref=BRANCH)
    body = _last_comment(github, number)
    assert "changes no Python source file a repair may rewrite" in body
    assert ".selfcorrect/repair.yml" in body


def test_the_repositorys_repair_spec_must_be_a_repair(act: Act, github: FakeGitHub) -> None:
    number = _pull(github, {"pkg/core.py": CORE, ".selfcorrect/repair.yml": "prompt: x\n"})
    run = act("issue_comment", _fix(github, number), ref=BRANCH)
    assert run.outputs["status"] == "invalid-spec"
    assert "runs a repair spec; this one is kind script" in _last_comment(github, number)


def test_a_fix_never_pushes_to_the_default_branch(act: Act, github: FakeGitHub) -> None:
    """A red team's: a pull request from main into a release branch made `/selfcorrect fix`
    push straight onto main."""
    github.add_branch(DEFAULT_REPO, "release")
    github.commit_files(DEFAULT_REPO, "main", {"pkg/__init__.py": "", "pkg/core.py": CORE})
    number = github.add_pull(DEFAULT_REPO, "main", base="release", user=MAINTAINER)
    before = github.refs(DEFAULT_REPO)["refs/heads/main"]
    run = act("issue_comment", _fix(github, number), ref="main")
    assert (run.code, run.outputs["status"]) == (0, "refused"), run.stdout
    assert "this repository's default branch" in _last_comment(github, number)
    assert github.refs(DEFAULT_REPO)["refs/heads/main"] == before


def test_a_fix_never_pushes_to_a_protected_branch(act: Act, github: FakeGitHub) -> None:
    """develop or release/*: a shared branch, like the default one."""
    number = _pull(github)
    github.protect_branch(DEFAULT_REPO, BRANCH)
    before = github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"]
    run = act("issue_comment", _fix(github, number), ref=BRANCH)
    assert (run.code, run.outputs["status"]) == (0, "refused"), run.stdout
    assert f"{BRANCH}, a protected branch" in _last_comment(github, number)
    assert github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"] == before
