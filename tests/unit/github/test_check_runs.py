"""Check runs through the real adapter against the GitHub stand-in: GitHub's batches of 50
annotations, a create or a batch GitHub applied but answered with an error made only once,
a plan applied twice leaving one run, and what a token that may not write checks is told."""

from __future__ import annotations

import pytest

from selfcorrect_action.github.check_runs import (
    CheckResult,
    check_problem,
    guarded,
    write_check_run,
)
from selfcorrect_action.github.forge import CheckAnnotation, CheckRunOutput, ForgeError
from selfcorrect_action.github.pygithub_forge import PyGithubForge
from tests.fakes.github_server import DEFAULT_REPO, READ_TOKEN, FakeGitHub
from tests.unit.github.conftest import MakeForge

RUNS = f"/repos/{DEFAULT_REPO}/check-runs"


def _output(count: int = 0, *, external_id: str = "selfcorrect run 1") -> CheckRunOutput:
    return CheckRunOutput(
        name="selfcorrect / issue #1", conclusion="failure", title="failed: stopped",
        summary="| # | strategy |", details_url="https://gh.example/runs/1",
        external_id=external_id,
        annotations=[CheckAnnotation(path="spec.yml", start_line=n, end_line=n,
                                     start_column=2, end_column=2, message=f"problem {n}")
                     for n in range(1, count + 1)])


def _main(fake_github: FakeGitHub) -> str:
    return fake_github.refs(DEFAULT_REPO)["refs/heads/main"]


def test_a_check_run_is_written_completed_with_its_output(fake_github: FakeGitHub,
                                                          forge: PyGithubForge) -> None:
    sha = _main(fake_github)
    made = write_check_run(forge, sha, _output(2))
    (stored,) = fake_github.check_runs(DEFAULT_REPO, sha)
    assert (stored.id, stored.name, stored.conclusion, stored.status) == (
        made.id, "selfcorrect / issue #1", "failure", "completed")
    assert (stored.title, stored.summary, stored.external_id, stored.details_url) == (
        "failed: stopped", "| # | strategy |", "selfcorrect run 1", "https://gh.example/runs/1")
    assert stored.completed_at is not None
    assert stored.annotations[0] == {"path": "spec.yml", "start_line": 1, "end_line": 1,
                                     "start_column": 2, "end_column": 2,
                                     "annotation_level": "failure", "message": "problem 1"}
    assert forge.find_check_run(sha, "selfcorrect / issue #1") == made
    assert forge.find_check_run(sha, "selfcorrect / issue #1", external_id="other") is None


def test_annotations_go_out_fifty_a_request(fake_github: FakeGitHub,
                                            forge: PyGithubForge) -> None:
    sha = _main(fake_github)
    made = write_check_run(forge, sha, _output(120))
    assert made.annotations_count == 120
    assert len(fake_github.requests_to("POST", RUNS)) == 1
    assert len(fake_github.requests_to("PATCH", f"{RUNS}/{made.id}")) == 2
    (stored,) = fake_github.check_runs(DEFAULT_REPO, sha)
    assert [a["start_line"] for a in stored.annotations] == list(range(1, 121))


def test_writing_the_same_output_again_updates_its_run_and_adds_no_annotation(
        fake_github: FakeGitHub, forge: PyGithubForge) -> None:
    """A publish job re-run applies the same plan again."""
    sha = _main(fake_github)
    first = write_check_run(forge, sha, _output(60))
    again = write_check_run(forge, sha, _output(60).model_copy(update={"title": "retitled"}))
    assert again.id == first.id and again.annotations_count == 60
    (stored,) = fake_github.check_runs(DEFAULT_REPO, sha)
    assert stored.title == "retitled"
    other = write_check_run(forge, sha, _output(external_id="selfcorrect run 2"))
    assert other.id != first.id  # another run's verdict is a run of its own


@pytest.mark.parametrize("fault", ["502", "hang-up"])
def test_a_create_github_applied_before_failing_is_made_once(
        fake_github: FakeGitHub, forge: PyGithubForge, fault: str) -> None:
    sha = _main(fake_github)
    if fault == "502":
        fake_github.fail("POST", RUNS, 502, after_apply=True)
    else:
        fake_github.hang_up("POST", RUNS, after_apply=True)
    made = forge.create_check_run(sha, _output(3))
    assert [r.id for r in fake_github.check_runs(DEFAULT_REPO)] == [made.id]
    assert made.annotations_count == 3 and len(fake_github.requests_to("POST", RUNS)) == 1


def test_a_batch_github_applied_before_failing_is_not_appended_twice(
        fake_github: FakeGitHub, forge: PyGithubForge) -> None:
    sha = _main(fake_github)
    made = forge.create_check_run(sha, _output(50))
    fake_github.fail("PATCH", f"{RUNS}/{made.id}", 502, after_apply=True)
    updated = forge.update_check_run(made, _output(70).model_copy(
        update={"annotations": _output(70).annotations[50:]}))
    assert updated.annotations_count == 70
    assert len(fake_github.check_runs(DEFAULT_REPO)[0].annotations) == 70


def test_a_batch_github_did_not_apply_is_sent_again(fake_github: FakeGitHub,
                                                    forge: PyGithubForge) -> None:
    sha = _main(fake_github)
    made = forge.create_check_run(sha, _output(1))
    fake_github.fail("PATCH", f"{RUNS}/{made.id}", 502)
    updated = forge.update_check_run(made, _output(2).model_copy(
        update={"annotations": _output(2).annotations[1:]}))
    assert updated.annotations_count == 2


@pytest.mark.parametrize(("token", "says"), [
    ("no-checks", "Add `checks: write` to the workflow's `permissions:`"),
    (READ_TOKEN, "a pull request from a fork gets a read-only token"),
    ("personal", "not from a personal access token"),
])
def test_a_token_that_may_not_write_checks_is_told_what_to_do(
        fake_github: FakeGitHub, make_forge: MakeForge, token: str, says: str) -> None:
    fake_github.add_token("no-checks", without={"checks"})
    fake_github.add_user("alice")
    fake_github.add_token("personal", "alice")
    forge = make_forge(token=token)
    with pytest.raises(ForgeError) as refused:
        forge.create_check_run(_main(fake_github), _output())
    assert refused.value.status == 403
    problem = check_problem(refused.value)
    assert problem.startswith("no check run: ") and says in problem
    result = guarded(lambda: CheckResult(forge.create_check_run(_main(fake_github),
                                                                _output())))
    assert result.check is None and result.problem == problem
    assert fake_github.check_runs(DEFAULT_REPO) == []
