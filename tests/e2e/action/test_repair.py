"""Repair mode through the action's image end to end: the example repository
(examples/repair/calc) in the GitHub stand-in, its recorded answers replayed, real sibling
sandboxes running the repository's own pytest suite. An issue with a repair spec gets a
pull request that changes the repository's file; `/selfcorrect fix` on a pull request gets
the fix as a new commit on that pull request's branch. Like every action scenario, each runs
with GITHUB_TOKEN and with a GitHub App's installation token (the `act` fixture): who the
action is decides which comment is its own and whose name is on what it writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.action.harness import MAINTAINER, RunAction, labeled
from tests.fakes.github_server import DEFAULT_REPO, FakeGitHub

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "repair" / "calc"
SPEC = (EXAMPLE / ".selfcorrect" / "tasks" / "fix_mean.yml").read_text()
REPLAY = (ROOT / "examples" / "replays" / "repair_calc.jsonl").read_text()
CORE = "src/calc/core.py"
FIXED_LINE = b"return total(values) / len(values)\n"


def repository_files() -> dict[str, str]:
    return {path.relative_to(EXAMPLE).as_posix(): path.read_text()
            for path in EXAMPLE.rglob("*") if path.is_file()
            and ".selfcorrect" not in path.relative_to(EXAMPLE).parts}


def test_an_issue_with_a_repair_spec_gets_a_pull_request_changing_the_file(
        act: RunAction, github: FakeGitHub) -> None:
    github.commit_files(DEFAULT_REPO, "main", {**repository_files(),
                                               "replays/issue-1.jsonl": REPLAY},
                        message="the calc package, with its bug")
    body = f"mean is wrong.\n\n```yaml\n{SPEC}```\n"

    run = act("issues", labeled(github, body=body), replay="replays")

    assert run.returncode == 0, run.log
    (pull,) = github.pulls(DEFAULT_REPO)
    assert pull.user == act.identity.login
    branch = "selfcorrect/issue-1"
    fixed = github.read_file(DEFAULT_REPO, branch, CORE)
    assert fixed is not None and FIXED_LINE in fixed
    assert github.read_file(DEFAULT_REPO, branch, "tests/test_core.py") == \
        github.read_file(DEFAULT_REPO, "main", "tests/test_core.py")  # the tests untouched
    assert "The change to `src/calc/core.py` passed" in (pull.body or "")
    assert "Closes #1" in (pull.body or "")
    (check,) = github.check_runs(DEFAULT_REPO)
    assert (check.head_sha, check.conclusion) == (pull.head_sha, "success")
    assert "Baseline: 6 passed, 2 failed" in (check.summary or "")
    assert run.outputs["status"] == "passed"
    assert json.loads(run.outputs["results"])[0]["attempts"] == 3


def test_a_fix_comment_pushes_the_fix_onto_the_pull_requests_branch(
        act: RunAction, github: FakeGitHub) -> None:
    # The recording on main, which the pull request's branch starts from.
    github.commit_files(DEFAULT_REPO, "main", {"replays/pull-1.jsonl": REPLAY},
                        message="the recording")
    github.add_branch(DEFAULT_REPO, "feature/stats", files={
        **repository_files(), ".selfcorrect/repair.yml": SPEC}, message="add calc")
    number = github.add_pull(DEFAULT_REPO, "feature/stats", title="stats", user=MAINTAINER)
    head = github.refs(DEFAULT_REPO)["refs/heads/feature/stats"]
    comment = github.add_comment(DEFAULT_REPO, number, "/selfcorrect fix", user=MAINTAINER)
    event = github.event("issue_comment", DEFAULT_REPO, number=number, comment_id=comment)

    run = act("issue_comment", event, ref="feature/stats", replay="replays")

    assert run.returncode == 0, run.log
    new_head = github.refs(DEFAULT_REPO)["refs/heads/feature/stats"]
    assert new_head != head
    assert github.git(DEFAULT_REPO, "rev-parse", f"{new_head}^").strip() == head  # on top
    fixed = github.read_file(DEFAULT_REPO, "feature/stats", CORE)
    assert fixed is not None and FIXED_LINE in fixed
    assert len(github.pulls(DEFAULT_REPO)) == 1  # the fix went onto the same pull request
    (check,) = github.check_runs(DEFAULT_REPO)
    assert (check.head_sha, check.conclusion) == (new_head, "success")
    report = github.comments(DEFAULT_REPO, number)[-1]
    assert "passed" in report.body and report.user == act.identity.login
