"""`/selfcorrect regenerate` through the action's entry point against the GitHub stand-in, up
to the point a run would start its sandbox: who may ask, forks answered with the commands to
run locally, shared branches and a checkout that is not the pull request's head refused, an
unknown spec named, specs that write one script, nothing touched, and a named spec's run
stopping at its models (none configured) with the comment saying so. The whole run, with
its commit, is tests/integration/test_regenerate.py's and tests/e2e/action's."""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.action.harness import MAINTAINER, OUTSIDER
from tests.fakes.github_server import DEFAULT_REPO, FakeGitHub
from tests.unit.action.conftest import Act

BRANCH = "feature/totals"
SPEC = json.dumps({"prompt": "Print the total.", "output": "scripts/total.py", "judge": False})
SPEC_PATH = ".selfcorrect/tasks/total.yml"


def _pull(github: FakeGitHub, files: dict[str, str] | None = None) -> int:
    github.add_branch(DEFAULT_REPO, BRANCH, files=files or {
        SPEC_PATH: SPEC, "scripts/total.py": "print(1)\n"})
    return github.add_pull(DEFAULT_REPO, BRANCH, title="totals", user=MAINTAINER)


def _regenerate(github: FakeGitHub, number: int, *, by: str = MAINTAINER,
                text: str = "/selfcorrect regenerate") -> dict[str, Any]:
    comment = github.add_comment(DEFAULT_REPO, number, text, user=by)
    return github.event("issue_comment", DEFAULT_REPO, number=number, comment_id=comment)


def _ours(github: FakeGitHub, number: int) -> str:
    return [c.body for c in github.comments(DEFAULT_REPO, number) if "selfcorrect:" in c.body][-1]


def test_a_named_spec_runs_from_its_committed_script_until_its_models_stop_it(
        act: Act, github: FakeGitHub) -> None:
    number = _pull(github)
    head = github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"]
    run = act("issue_comment", _regenerate(github, number, text=f"/selfcorrect regenerate "
                                           f"{SPEC_PATH}\nkeep it short"), ref=BRANCH)
    assert run.code == 2, run.stdout
    assert f"regenerate: {SPEC_PATH}: from its committed script" in run.stdout
    assert "regenerating 1 script" in _ours(github, number)
    assert github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"] == head  # nothing pushed


def test_someone_without_write_access_is_refused(act: Act, github: FakeGitHub) -> None:
    number = _pull(github)
    run = act("issue_comment", _regenerate(github, number, by=OUTSIDER), ref=BRANCH)
    assert (run.code, run.outputs["status"]) == (0, "refused")


def test_a_fork_gets_the_commands_to_run_locally(act: Act, github: FakeGitHub) -> None:
    github.add_repo(f"{OUTSIDER}/hello-world", fork_of=DEFAULT_REPO)
    github.add_branch(f"{OUTSIDER}/hello-world", "t", files={SPEC_PATH: SPEC})
    number = github.add_pull(DEFAULT_REPO, f"{OUTSIDER}:t", user=OUTSIDER)
    run = act("issue_comment", _regenerate(github, number))
    assert (run.code, run.outputs["status"]) == (0, "refused")
    body = _ours(github, number)
    assert "comes from a fork" in body and "selfcorrect check" in body


def test_an_issue_a_shared_branch_and_another_checkout_are_refused(
        act: Act, github: FakeGitHub) -> None:
    issue = github.add_issue(DEFAULT_REPO, "totals", "wrong")
    on_issue = act("issue_comment", _regenerate(github, issue))
    assert on_issue.outputs["status"] == "refused"
    assert "this is an issue" in _ours(github, issue)

    number = _pull(github)
    elsewhere = act("issue_comment", _regenerate(github, number), ref="main")
    assert elsewhere.outputs["status"] == "refused"
    assert f"refs/pull/{number}/head" in _ours(github, number)

    github.protect_branch(DEFAULT_REPO, BRANCH)
    shared = act("issue_comment", _regenerate(github, number), ref=BRANCH)
    assert shared.outputs["status"] == "refused"
    assert "a protected branch" in _ours(github, number)


def test_an_unknown_spec_and_two_specs_of_one_script_are_refused(
        act: Act, github: FakeGitHub) -> None:
    twin = ".selfcorrect/tasks/twin.yml"
    number = _pull(github, {SPEC_PATH: SPEC, twin: SPEC, "scripts/total.py": "print(1)\n"})
    unknown = act("issue_comment", _regenerate(github, number, text="/selfcorrect regenerate "
                                               "nope.yml"), ref=BRANCH)
    assert unknown.outputs["status"] == "refused"
    assert "nope.yml is not a task spec of this repository" in _ours(github, number)

    both = act("issue_comment", _regenerate(github, number, text=f"/selfcorrect regenerate "
                                            f"{SPEC_PATH} {twin}"), ref=BRANCH)
    assert both.code == 2
    assert "all write scripts/total.py" in _ours(github, number)


def test_a_pull_request_that_touches_no_generated_script_has_nothing_to_regenerate(
        act: Act, github: FakeGitHub) -> None:
    number = _pull(github, {"README.md": "hello\n"})
    run = act("issue_comment", _regenerate(github, number), ref=BRANCH)
    assert (run.code, run.outputs["status"]) == (0, "valid"), run.stdout
    assert "nothing to regenerate" in _ours(github, number)
