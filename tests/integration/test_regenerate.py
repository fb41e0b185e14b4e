"""`/selfcorrect regenerate` (issue 36, item 4) through the action's entry point against the
GitHub stand-in, a real git repository and the real sandbox, with a replayed model. The base
branch holds a verified script (tests/integration/test_pull_check.py's); a pull request
renames the input's `amount` column, its check fails naming it, and the comment regenerates
the script from the committed one (attempt 1, which fails the same way, then a patch),
pushing one commit on top of the pull request's head with the script, its record and the
audit trail, and a green check run for the spec on that commit."""

# ruff: noqa: F811  # the fixtures imported from the action's conftest
from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfcorrect_action.verified.checker import check_specs
from selfcorrect_action.verified.record import lock_path
from tests.e2e.action.harness import MAINTAINER, OUTSIDER
from tests.fakes.github_server import DEFAULT_REPO, IDENTITIES, FakeGitHub, Identity, fake_github  # noqa: F401
from tests.fakes.replays import fenced, write_replay
from tests.integration.test_pull_check import (
    SCRIPT,
    SCRIPT_PATH,
    SPEC,
    SPEC_PATH,
    _base,
    _event,
    _pull,
)
from tests.unit.action.conftest import Act, act, github  # noqa: F401  # fixtures
from tests.unit.github.conftest import make_forge, waits  # noqa: F401  # fixtures

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("sandbox_image")]

RENAMED = "region,revenue\nnorth,2\nsouth,3\nnorth,4\n"
PROMPT = "Sum data/sales.csv's amount per region into totals.csv."
PLAN = json.dumps({"approach": "sum the sales per region", "contract": {}})


@pytest.fixture(params=IDENTITIES[:2], ids=[identity.name for identity in IDENTITIES[:2]])
def identity(request: pytest.FixtureRequest) -> Identity:
    """GITHUB_TOKEN and a GitHub App's token (whose login is found by asking GitHub): how
    the comment finds its own, and who the commit and check runs are by."""
    chosen: Identity = request.param
    return chosen


def _replay(tmp_path: Path) -> str:
    """What the model answers: the plan, then the patch of the committed script."""
    patched = SCRIPT.replace('row["amount"]', 'row["revenue"]')
    return write_replay(tmp_path / "totals.jsonl", PROMPT,
                        [("plan", PLAN), ("repair", fenced(patched))]).read_text()


def _regenerate(github: FakeGitHub, number: int, body: str = "/selfcorrect regenerate",
                *, user: str = MAINTAINER) -> dict[str, object]:
    comment = github.add_comment(DEFAULT_REPO, number, body, user=user)
    return github.event("issue_comment", DEFAULT_REPO, number=number, comment_id=comment)


def test_a_renamed_column_fails_its_check_then_regenerate_pushes_one_passing_commit(
        act: Act, github: FakeGitHub, tmp_path: Path) -> None:
    _base(github, tmp_path)
    number = _pull(github, {"data/sales.csv": RENAMED,
                            "replays/totals.jsonl": _replay(tmp_path)})
    check = act("pull_request", _event(github, number), ref="change")
    assert (check.code, check.outputs["status"]) == (1, "failed"), check.stdout
    (comment,) = github.comments(DEFAULT_REPO, number)
    assert "comment `/selfcorrect regenerate`" in comment.body  # offered with the failure
    head = github.refs(DEFAULT_REPO)["refs/heads/change"]

    run = act("issue_comment", _regenerate(github, number), ref="change", replay="replays")

    assert run.code == 0, run.stdout
    new_head = github.refs(DEFAULT_REPO)["refs/heads/change"]
    assert github.git(DEFAULT_REPO, "rev-parse", f"{new_head}^").strip() == head  # one commit
    script = (github.read_file(DEFAULT_REPO, "change", SCRIPT_PATH) or b"").decode()
    assert 'row["revenue"]' in script and f"# selfcorrect: generated from {SPEC_PATH}" in script
    record = json.loads(github.read_file(DEFAULT_REPO, "change", lock_path(SPEC_PATH)) or b"{}")
    run_id = record["run_id"]
    changed = github.git(DEFAULT_REPO, "diff", "--name-only", head, new_head).split()
    assert sorted(changed) == sorted([SCRIPT_PATH, lock_path(SPEC_PATH),
                                      f".selfcorrect/runs/{run_id}/AUDIT.md",
                                      f".selfcorrect/runs/{run_id}/run.json"])
    audit = (github.read_file(DEFAULT_REPO, "change", f".selfcorrect/runs/{run_id}/AUDIT.md")
             or b"").decode()
    assert "(the committed script)" in audit  # attempt 1 was the committed script
    green = [c for c in github.check_runs(DEFAULT_REPO)
             if c.name == f"selfcorrect / {SPEC_PATH}" and c.head_sha == new_head]
    assert [c.conclusion for c in green] == ["success"]
    assert len(github.pulls(DEFAULT_REPO)) == 1
    said = next(c for c in github.comments(DEFAULT_REPO, number)
                if "selfcorrect:regenerate" in c.body)
    assert "regenerated 1 of 1 script" in said.body and "| passed | 2 |" in said.body

    # The pushed commit passes the pull request's own check.
    again = act("pull_request", _event(github, number), ref="change")
    assert (again.code, again.outputs["status"]) == (0, "valid"), again.stdout


def test_nothing_failing_is_said_and_nothing_is_pushed(
        act: Act, github: FakeGitHub, tmp_path: Path) -> None:
    _base(github, tmp_path)
    number = _pull(github, {"data/sales.csv": "region,amount\nwest,1\n"})
    head = github.refs(DEFAULT_REPO)["refs/heads/change"]

    run = act("issue_comment", _regenerate(github, number), ref="change")

    assert (run.code, run.outputs["status"]) == (0, "valid"), run.stdout
    assert github.refs(DEFAULT_REPO)["refs/heads/change"] == head
    (comment,) = [c for c in github.comments(DEFAULT_REPO, number) if "selfcorrect:" in c.body]
    assert "nothing to regenerate" in comment.body


def test_an_unknown_spec_and_a_commenter_without_write_access_are_refused(
        act: Act, github: FakeGitHub, tmp_path: Path) -> None:
    _base(github, tmp_path)
    number = _pull(github, {"data/sales.csv": RENAMED})
    head = github.refs(DEFAULT_REPO)["refs/heads/change"]

    unknown = act("issue_comment", _regenerate(github, number, "/selfcorrect regenerate "
                                               "tasks/nope.yml"), ref="change")
    outsider = act("issue_comment", _regenerate(github, number, user=OUTSIDER), ref="change")

    assert unknown.outputs["status"] == outsider.outputs["status"] == "refused"
    assert github.refs(DEFAULT_REPO)["refs/heads/change"] == head
    bodies = [c.body for c in github.comments(DEFAULT_REPO, number) if "selfcorrect:" in c.body]
    assert any("tasks/nope.yml is not a task spec of this repository" in b for b in bodies)
    assert any(SPEC_PATH in b for b in bodies)  # the specs it could have named


def test_a_fork_gets_the_commands_to_run_locally(
        act: Act, github: FakeGitHub, tmp_path: Path) -> None:
    _base(github, tmp_path)
    github.add_repo(f"{OUTSIDER}/hello-world", fork_of=DEFAULT_REPO)
    number = _pull(github, {"data/sales.csv": RENAMED}, repo=f"{OUTSIDER}/hello-world",
                   head="fork-head")

    run = act("issue_comment", _regenerate(github, number, f"/selfcorrect regenerate "
                                           f"{SPEC_PATH}"), ref="fork-head")

    assert run.outputs["status"] == "refused", run.stdout
    (comment,) = [c for c in github.comments(DEFAULT_REPO, number) if "selfcorrect:" in c.body]
    assert "comes from a fork" in comment.body
    assert f"selfcorrect run {SPEC_PATH} --model <provider/model> --apply" in comment.body
    assert not [c for c in github.check_runs(DEFAULT_REPO)]


def test_the_pushed_commit_carries_the_other_touched_specs_checks(
        act: Act, github: FakeGitHub, tmp_path: Path) -> None:
    """The pull request touches a second spec that still passes: only the broken one is
    regenerated, and the pushed commit (which starts no workflow) carries both checks."""
    _base(github, tmp_path)
    other = ".selfcorrect/tasks/other.yml"
    other_spec = (SPEC.replace(SCRIPT_PATH, "scripts/other.py")
                  .replace("data/sales.csv", "data/other.csv"))
    script = SCRIPT.replace('"sales.csv"', '"other.csv"')
    root = tmp_path / "other"
    for path, text in {other: other_spec, "scripts/other.py": script,
                       "data/other.csv": "region,amount\nwest,1\n"}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    (recorded,) = check_specs(root, [other], update_lock=True, environ={})
    assert recorded.lock == "written", recorded
    github.commit_files(DEFAULT_REPO, "main", {
        other: other_spec, "scripts/other.py": script,
        "data/other.csv": "region,amount\nwest,1\n",
        lock_path(other): (root / lock_path(other)).read_text()},
        message="a second script", author=MAINTAINER)
    number = _pull(github, {"data/sales.csv": RENAMED, "data/other.csv":
                            "region,amount\neast,5\n", "replays/totals.jsonl": _replay(tmp_path)})

    run = act("issue_comment", _regenerate(github, number), ref="change", replay="replays")

    assert run.code == 0, run.stdout
    new_head = github.refs(DEFAULT_REPO)["refs/heads/change"]
    marks = {c.name: c.conclusion for c in github.check_runs(DEFAULT_REPO)
             if c.head_sha == new_head}
    assert marks == {f"selfcorrect / {SPEC_PATH}": "success", f"selfcorrect / {other}": "success"}
    assert github.read_file(DEFAULT_REPO, "change", "scripts/other.py") == script.encode()
