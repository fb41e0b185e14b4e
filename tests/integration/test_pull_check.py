"""Generated scripts re-verified on every pull request (issue 36, item 3): the action's entry
point on a pull_request event against the GitHub stand-in, a real git repository and the real
sandbox. The base branch holds a spec, its script, input, test and record (written by
`selfcorrect check --update-lock`); pull requests then drop a column from the input, forge
the record together with a new script, or come from a fork."""

# ruff: noqa: F811  # the fixtures imported from the action's conftest
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.loop.state import Status
from selfcorrect_action.records import evolve
from selfcorrect_action.report.run_json import run_json
from selfcorrect_action.spec import load_repo_spec
from selfcorrect_action.verified.checker import check_specs
from selfcorrect_action.verified.fingerprint import fingerprint
from selfcorrect_action.verified.record import lock_path
from selfcorrect_action.verified.reverify import reverify_state
from tests.e2e.action.harness import MAINTAINER, OUTSIDER
from tests.fakes.github_server import DEFAULT_REPO, FakeGitHub, fake_github  # noqa: F401
from tests.unit.action.conftest import (  # noqa: F401  # fixtures
    Act,
    InProcessRun,
    act,
    github,
    identity,
)
from tests.unit.github.conftest import make_forge, waits  # noqa: F401  # fixtures

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("sandbox_image")]

SPEC_PATH = ".selfcorrect/tasks/totals.yml"
SCRIPT_PATH = "scripts/totals.py"
SPEC = f"""\
prompt: Sum data/sales.csv's amount per region into totals.csv.
output: {SCRIPT_PATH}
inputs: [data/sales.csv]
judge: false
contract:
  artifacts:
    - {{path: totals.csv, kind: csv, columns: [region, total]}}
"""
SCRIPT = """\
import csv

with open("sales.csv", newline="") as handle:
    rows = list(csv.DictReader(handle))
totals = {}
for row in rows:
    totals[row["region"]] = totals.get(row["region"], 0) + int(row["amount"])
with open("totals.csv", "w", newline="") as out:
    writer = csv.writer(out)
    writer.writerow(["region", "total"])
    for region, total in sorted(totals.items()):
        writer.writerow([region, total])
"""
SALES = "region,amount\nnorth,2\nsouth,2\n"


def _base(github: FakeGitHub, scratch: Path) -> None:
    """main: the spec, its script and input, and the record a check wrote for them."""
    files = {SPEC_PATH: SPEC, SCRIPT_PATH: SCRIPT, "data/sales.csv": SALES}
    root = scratch / "base"
    (root / ".git").mkdir(parents=True)
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    (result,) = check_specs(root, [SPEC_PATH], update_lock=True, environ={})
    assert result.lock == "written", result
    record = lock_path(SPEC_PATH)
    github.commit_files(DEFAULT_REPO, "main", {**files, record: (root / record).read_text()},
                        message="a verified script", author=MAINTAINER)


def _pull(github: FakeGitHub, files: dict[str, str], *, repo: str = DEFAULT_REPO,
          head: str = "change") -> int:
    if repo == DEFAULT_REPO:
        github.add_branch(DEFAULT_REPO, head)
        github.commit_files(DEFAULT_REPO, head, files, message="change", author=MAINTAINER)
        return github.add_pull(DEFAULT_REPO, head, title="a change")
    github.commit_files(repo, "main", files, message="change")
    number = github.add_pull(DEFAULT_REPO, f"{OUTSIDER}:main", title="fork", user=OUTSIDER)
    github.git(DEFAULT_REPO, "branch", "-f", head,
               github.refs(DEFAULT_REPO)[f"refs/pull/{number}/head"])
    return number


def _event(github: FakeGitHub, number: int) -> dict[str, Any]:
    return github.event("pull_request", DEFAULT_REPO, number=number, action="opened")


def test_a_dropped_column_fails_its_check_run_on_the_script_s_line(
        act: Act, github: FakeGitHub, tmp_path: Path) -> None:
    _base(github, tmp_path)
    number = _pull(github, {"data/sales.csv": "region\nnorth\nsouth\n"})

    run = act("pull_request", _event(github, number), ref="change")

    assert (run.code, run.outputs["status"]) == (1, "failed"), run.stdout
    (check,) = [c for c in github.check_runs(DEFAULT_REPO) if c.name.endswith(SPEC_PATH)]
    assert check.conclusion == "failure"
    assert check.head_sha == github.pulls(DEFAULT_REPO)[0].head_sha
    assert "input data/sales.csv (changed)" in (check.summary or "")
    assert "'amount'" in (check.title or "")
    (mark,) = check.annotations
    assert (mark["path"], mark["start_line"]) == (SCRIPT_PATH, 7)
    (comment,) = github.comments(DEFAULT_REPO, number)
    assert "no longer verified" in comment.body and SPEC_PATH in comment.body
    assert f"::error file={SCRIPT_PATH},line=7" in run.stdout

    # The fix pushed: the same comment says all pass again; the check goes green.
    github.commit_files(DEFAULT_REPO, "change", {"data/sales.csv": "region,amount\nwest,1\n"},
                        message="fix", author=MAINTAINER)
    again = act("pull_request", _event(github, number), ref="change")
    assert (again.code, again.outputs["status"]) == (0, "valid"), again.stdout
    (comment,) = github.comments(DEFAULT_REPO, number)
    assert "verified again" in comment.body
    green = [c for c in github.check_runs(DEFAULT_REPO)
             if c.name.endswith(SPEC_PATH) and c.conclusion == "success"]
    assert len(green) == 1 and "re-verified" in (green[0].title or "")


def test_a_record_changed_with_its_script_is_not_trusted(
        act: Act, github: FakeGitHub, tmp_path: Path) -> None:
    """The pull request rewrites the script and its record to match: the base branch's
    record is the one compared with, and the script is re-verified all the same."""
    _base(github, tmp_path)
    record_path = lock_path(SPEC_PATH)
    record = json.loads(github.read_file(DEFAULT_REPO, "main", record_path) or b"{}")
    broken = SCRIPT.replace('int(row["amount"])', 'int(row["amounts"])')
    record["script"]["sha256"] = hashlib.sha256(broken.encode()).hexdigest()
    number = _pull(github, {SCRIPT_PATH: broken, record_path: json.dumps(record, indent=2)})

    run = act("pull_request", _event(github, number), ref="change")

    assert (run.code, run.outputs["status"]) == (1, "failed"), run.stdout
    (check,) = [c for c in github.check_runs(DEFAULT_REPO) if c.name.endswith(SPEC_PATH)]
    assert check.conclusion == "failure"
    assert f"script {SCRIPT_PATH} (changed)" in (check.summary or "")


def test_a_fork_gets_annotations_and_the_summary_only(
        act: Act, github: FakeGitHub, tmp_path: Path) -> None:
    _base(github, tmp_path)
    github.add_repo(f"{OUTSIDER}/hello-world", fork_of=DEFAULT_REPO)
    number = _pull(github, {"data/sales.csv": "region\nnorth\n"}, repo=f"{OUTSIDER}/hello-world",
                   head="fork-head")

    run = act("pull_request", _event(github, number), token=act.identity.read_token,
              ref="fork-head")

    assert run.code == 1
    assert f"::error file={SCRIPT_PATH},line=7" in run.stdout
    assert [c for c in github.check_runs(DEFAULT_REPO) if c.name.endswith(SPEC_PATH)] == []
    assert github.comments(DEFAULT_REPO, number) == []
    assert "comes from a fork" in run.summary and SPEC_PATH in run.summary


def test_a_push_to_the_default_branch_is_re_verified_against_the_records_before_it(
        act: Act, github: FakeGitHub, tmp_path: Path) -> None:
    """Issue 36, item 3: a push that drops the column, straight to main: a red check run on
    the pushed commit, the failure on the script's line; no comment (there is no pull
    request). A push that touches nothing generated writes nothing."""
    _base(github, tmp_path)
    before = github.refs(DEFAULT_REPO)["refs/heads/main"]
    after = github.commit_files(DEFAULT_REPO, "main", {"data/sales.csv": "region\nnorth\n"},
                                message="drop the amounts", author=MAINTAINER)

    run = act("push", github.event("push", DEFAULT_REPO, before=before, after=after))

    assert (run.code, run.outputs["status"]) == (1, "failed"), run.stdout
    (check,) = [c for c in github.check_runs(DEFAULT_REPO) if c.name.endswith(SPEC_PATH)]
    assert (check.head_sha, check.conclusion) == (after, "failure")
    assert "input data/sales.csv (changed)" in (check.summary or "")
    assert f"::error file={SCRIPT_PATH},line=7" in run.stdout

    elsewhere = github.commit_files(DEFAULT_REPO, "main", {"README.md": "# hello\n"},
                                    message="docs", author=MAINTAINER)
    quiet = act("push", github.event("push", DEFAULT_REPO, before=after, after=elsewhere))
    assert (quiet.code, quiet.outputs["status"]) == (0, "valid"), quiet.stdout
    assert "touches no generated script" in quiet.stdout
    assert len([c for c in github.check_runs(DEFAULT_REPO)]) == 1


def test_a_new_prompt_is_stale_until_the_pull_request_holds_a_run_that_answered_it(
        act: Act, github: FakeGitHub, tmp_path: Path) -> None:
    """A pull request that rewords the prompt is stale against the base record (only a
    regeneration or the judge can say the script still does what is asked). A record
    edited by hand to claim the new prompt does not change that; the record and run.json
    of a run that passed with the new prompt (what /selfcorrect regenerate commits) do: the
    script, re-verified all the same, passes, and the check says whose claim that is."""
    _base(github, tmp_path)
    reworded = SPEC.replace("amount per region", "amount for each region")
    number = _pull(github, {SPEC_PATH: reworded})
    stale = act("pull_request", _event(github, number), ref="change")
    assert (stale.code, stale.outputs["status"]) == (1, "failed"), stale.stdout
    assert "stale, its prompt changed" in stale.stdout

    root = tmp_path / "head"
    for path, text in {SPEC_PATH: reworded, SCRIPT_PATH: SCRIPT,
                       "data/sales.csv": SALES}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    loaded = load_repo_spec(root, SPEC_PATH)
    record = json.loads(github.read_file(DEFAULT_REPO, "main", lock_path(SPEC_PATH)) or b"{}")
    record["prompt_sha256"] = fingerprint(loaded).prompt_sha256
    forged = act_on(github, act, number, {lock_path(SPEC_PATH): json.dumps(record)})
    assert (forged.code, forged.outputs["status"]) == (1, "failed"), forged.stdout

    answer = evolve(reverify_state(loaded, None, SCRIPT), {"status": Status.PASSED})
    record["run_id"] = answer.run_id
    answered = act_on(github, act, number, {
        lock_path(SPEC_PATH): json.dumps(record),
        f".selfcorrect/runs/{answer.run_id}/run.json": run_json(answer, secrets=[])})

    assert (answered.code, answered.outputs["status"]) == (0, "valid"), answered.stdout
    green = [c for c in github.check_runs(DEFAULT_REPO)
             if c.name.endswith(SPEC_PATH) and c.conclusion == "success"]
    assert len(green) == 1
    assert f"answered on this pull request's own record: run {answer.run_id}" in (
        green[0].summary or "")


def act_on(github: FakeGitHub, act: Act, number: int, files: dict[str, str]) -> InProcessRun:
    github.commit_files(DEFAULT_REPO, "change", files, message="records", author=MAINTAINER)
    return act("pull_request", _event(github, number), ref="change")
