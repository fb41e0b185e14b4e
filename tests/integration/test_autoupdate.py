"""The scheduled update (issue 36, item 5) through the action's entry point against the
GitHub stand-in, a real git repository and the real sandbox. A "newer image" is faked by two
images derived from the sandbox image, the second with one library changed: `fakecalc` 1.0
has `total(rows)`, 2.0 renamed it `sum_rows`. The base branch holds a script verified in the
first; the scheduled update runs with the second: without regeneration it opens one pull
request listing what broke (an empty commit carries the spec's red check run), and a later
update with regeneration (a replayed model) adds the regenerated script to the same pull
request, its check green."""

# ruff: noqa: F811  # the fixtures imported from the action's conftest
from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from selfcorrect_action.errors import UsageError
from selfcorrect_action.github.naming import UPDATE_BRANCH
from selfcorrect_action.sandbox.docker_engine import DockerEngine
from selfcorrect_action.sandbox.models import SANDBOX_UID
from selfcorrect_action.verified.checker import check_specs
from selfcorrect_action.verified.record import lock_path
from tests.docker_images import build_dockerfile
from tests.e2e.action.harness import MAINTAINER
from tests.fakes.github_server import (  # noqa: F401  # fake_github: the fixture
    DEFAULT_REPO,
    IDENTITIES,
    FakeGitHub,
    Identity,
    fake_github,
)
from tests.fakes.replays import fenced, write_replay
from tests.unit.action.conftest import Act, act, github  # noqa: F401  # fixtures
from tests.unit.github.conftest import make_forge, waits  # noqa: F401  # fixtures

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("sandbox_image")]

SPEC_PATH = ".selfcorrect/tasks/totals.yml"
SCRIPT_PATH = "scripts/totals.py"
PROMPT = "Total data/sales.csv's amount column with fakecalc into total.txt."
SPEC = f"""\
prompt: {PROMPT}
output: {SCRIPT_PATH}
inputs: [data/sales.csv]
judge: false
contract:
  artifacts:
    - {{path: total.txt, kind: txt}}
"""
SCRIPT = """\
import csv

import fakecalc

with open("sales.csv", newline="") as handle:
    amounts = [int(row["amount"]) for row in csv.DictReader(handle)]
with open("total.txt", "w") as out:
    out.write(str(fakecalc.total(amounts)))
"""
SALES = "region,amount\nnorth,2\nsouth,3\n"
LIBRARY = """\
FROM {base}
USER root
RUN mkdir -p /usr/lib/python3/dist-packages/fakecalc-{version}.dist-info \\
 && printf 'Metadata-Version: 2.1\\nName: fakecalc\\nVersion: {version}\\n' \\
      > /usr/lib/python3/dist-packages/fakecalc-{version}.dist-info/METADATA \\
 && printf 'def {function}(values):\\n    return sum(values)\\n' \\
      > /usr/lib/python3/dist-packages/fakecalc.py
USER {uid}:{uid}
"""


@pytest.fixture
def identity() -> Identity:
    """One identity: the writes are the batch's, tested under every one in
    tests/unit/action/writes/test_batch.py."""
    return IDENTITIES[0]


def _build(engine: DockerEngine, base: str, version: str, function: str) -> tuple[str, str]:
    tag = f"selfcorrect-update-test:{version}-{uuid.uuid4().hex[:8]}"
    dockerfile = LIBRARY.format(base=base, uid=SANDBOX_UID, version=version,
                                function=function)
    return tag, build_dockerfile(engine, dockerfile, tag)


@pytest.fixture(scope="module")
def images(docker_engine: DockerEngine, sandbox_image: str) -> Iterator[tuple[str, str]]:
    """(the image the script was verified in, the newer one that renamed the function)."""
    engine = docker_engine
    old, old_id = _build(engine, sandbox_image, "1.0", "total")
    new, new_id = _build(engine, sandbox_image, "2.0", "sum_rows")
    yield old, new
    for image_id in (old_id, new_id):
        engine.remove_image(image_id)


def _base(github: FakeGitHub, scratch: Path, image: str) -> None:
    """main: the spec, its script and input, the record of its check in `image`, and the
    recording a regeneration replays."""
    files = {SPEC_PATH: SPEC, SCRIPT_PATH: SCRIPT, "data/sales.csv": SALES}
    root = scratch / "base"
    (root / ".git").mkdir(parents=True)
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    (result,) = check_specs(root, [SPEC_PATH], update_lock=True, environ={},
                            sandbox_image=image)
    assert result.lock == "written", result
    record = lock_path(SPEC_PATH)
    patched = SCRIPT.replace("fakecalc.total(", "fakecalc.sum_rows(")
    replay = write_replay(scratch / "totals.jsonl", PROMPT, [
        ("plan", json.dumps({"approach": "total the amounts", "contract": {}})),
        ("repair", fenced(patched))]).read_text()
    github.commit_files(DEFAULT_REPO, "main", {**files, record: (root / record).read_text(),
                                               "replays/totals.jsonl": replay},
                        message="a verified script", author=MAINTAINER)


def _record_for(github: FakeGitHub, spec: str) -> str:
    """The base record of SPEC_PATH, as the record of `spec` (the same script, input and
    prompt; a record names its spec)."""
    record = json.loads(github.read_file(DEFAULT_REPO, "main", lock_path(SPEC_PATH)) or b"{}")
    return json.dumps({**record, "spec": spec}, indent=2)


def _schedule(github: FakeGitHub) -> dict[str, object]:
    return github.event("schedule", DEFAULT_REPO)


def test_nothing_broken_writes_nothing(act: Act, github: FakeGitHub, tmp_path: Path,
                                       images: tuple[str, str]) -> None:
    old, _ = images
    _base(github, tmp_path, old)

    run = act("schedule", _schedule(github), sandbox_image=old)

    assert (run.code, run.outputs["status"]) == (0, "valid"), run.stdout
    assert github.pulls(DEFAULT_REPO) == []
    assert f"refs/heads/{UPDATE_BRANCH}" not in github.refs(DEFAULT_REPO)
    assert "nothing to update" in run.summary


def test_a_newer_image_that_breaks_a_script_gets_one_update_pull_request(
        act: Act, github: FakeGitHub, tmp_path: Path, images: tuple[str, str]) -> None:
    old, new = images
    _base(github, tmp_path, old)
    main = github.refs(DEFAULT_REPO)["refs/heads/main"]

    # A schedule with no update input: check only, no model asked.
    listed = act("schedule", _schedule(github), sandbox_image=new)

    assert (listed.code, listed.outputs["status"]) == (0, "updated"), listed.stdout
    (pull,) = github.pulls(DEFAULT_REPO)
    assert pull.head.endswith(f":{UPDATE_BRANCH}") and pull.base == "main"
    assert "1 generated script no longer verifies" in pull.title
    body = pull.body or ""
    assert f"/selfcorrect regenerate {SPEC_PATH}" in body  # what to comment here
    assert SPEC_PATH in body and "image" in body and "sum_rows" not in body
    assert "AttributeError" in body and "fakecalc" in body
    head = github.refs(DEFAULT_REPO)[f"refs/heads/{UPDATE_BRANCH}"]
    assert github.git(DEFAULT_REPO, "rev-parse", f"{head}^").strip() == main
    assert github.git(DEFAULT_REPO, "diff", "--name-only", main, head).split() == []
    checks = [(c.name, c.head_sha, c.conclusion) for c in github.check_runs(DEFAULT_REPO)]
    assert checks == [(f"selfcorrect / {SPEC_PATH}", head, "failure")]

    # The next update regenerates (a replayed model): the same pull request, one more
    # commit with the script, its record and its audit trail, its check green.
    regenerated = act("workflow_dispatch", github.event("workflow_dispatch", DEFAULT_REPO),
                      sandbox_image=new, update="regenerate", replay="replays")

    assert (regenerated.code, regenerated.outputs["status"]) == (0, "updated"), \
        regenerated.stdout
    (pull,) = github.pulls(DEFAULT_REPO)
    assert "1 generated script regenerated" in pull.title
    newer = github.refs(DEFAULT_REPO)[f"refs/heads/{UPDATE_BRANCH}"]
    assert github.git(DEFAULT_REPO, "rev-parse", f"{newer}^").strip() == head
    script = (github.read_file(DEFAULT_REPO, UPDATE_BRANCH, SCRIPT_PATH) or b"").decode()
    assert "fakecalc.sum_rows(" in script
    record = json.loads(github.read_file(DEFAULT_REPO, UPDATE_BRANCH, lock_path(SPEC_PATH))
                        or b"{}")
    assert record["image"]["tag"] == new
    assert f".selfcorrect/runs/{record['run_id']}/AUDIT.md" in github.git(
        DEFAULT_REPO, "diff", "--name-only", head, newer).split()
    green = [c for c in github.check_runs(DEFAULT_REPO) if c.head_sha == newer]
    assert [(c.name, c.conclusion) for c in green] == [(f"selfcorrect / {SPEC_PATH}",
                                                        "success")]


def test_a_matrix_of_update_jobs_publishes_one_commit_and_one_pull_request(
        act: Act, github: FakeGitHub, tmp_path: Path, images: tuple[str, str]) -> None:
    """One job per spec, each in mode plan with a read-only token, saving its batch; one
    publishing job merges them: one commit, one pull request listing both, a check run per
    spec."""
    old, new = images
    _base(github, tmp_path, old)
    second = SPEC_PATH.replace("totals", "totals_again")
    github.commit_files(DEFAULT_REPO, "main", {second: SPEC,
                                               lock_path(second): _record_for(github, second)},
                        message="a second spec of the same script", author=MAINTAINER)
    event = _schedule(github)
    plans = tmp_path / "downloaded"
    plans.mkdir()
    for spec in (SPEC_PATH, second):
        job = act("schedule", event, token=act.identity.read_token, sandbox_image=new,
                  tasks=spec, mode="plan")
        assert job.code == 0, job.stdout
        for saved in (job.workspace / "selfcorrect-plan").glob("*.json"):
            (plans / saved.name).write_bytes(saved.read_bytes())
    assert github.pulls(DEFAULT_REPO) == []
    assert len(list(plans.glob("*.json"))) == 2

    published = act("schedule", event, mode="publish", copy_plans_from=plans)

    assert published.code == 0, published.stdout
    (pull,) = github.pulls(DEFAULT_REPO)
    assert "2 generated scripts no longer verify" in pull.title
    assert SPEC_PATH in (pull.body or "") and second in (pull.body or "")
    head = github.refs(DEFAULT_REPO)[f"refs/heads/{UPDATE_BRANCH}"]
    assert github.git(DEFAULT_REPO, "rev-parse", f"{head}^").strip() == \
        github.refs(DEFAULT_REPO)["refs/heads/main"]
    checks = sorted((c.name, c.head_sha, c.conclusion) for c in github.check_runs(DEFAULT_REPO))
    assert checks == sorted([(f"selfcorrect / {SPEC_PATH}", head, "failure"),
                             (f"selfcorrect / {second}", head, "failure")])


def test_after_its_pull_request_is_closed_the_update_starts_over_from_the_base(
        act: Act, github: FakeGitHub, tmp_path: Path, images: tuple[str, str]) -> None:
    """GitHub keeps a closed pull request's branch: the next update does not stack onto
    what a person turned down, it builds the branch again from the base."""
    old, new = images
    _base(github, tmp_path, old)
    first = act("schedule", _schedule(github), sandbox_image=new)
    assert first.code == 0, first.stdout
    (turned_down,) = github.pulls(DEFAULT_REPO)
    github.close_pull(DEFAULT_REPO, turned_down.number)

    again = act("schedule", _schedule(github), sandbox_image=new)

    assert (again.code, again.outputs["status"]) == (0, "updated"), again.stdout
    opened = [pull for pull in github.pulls(DEFAULT_REPO) if pull.state == "open"]
    assert len(opened) == 1 and opened[0].number != turned_down.number
    head = github.refs(DEFAULT_REPO)[f"refs/heads/{UPDATE_BRANCH}"]
    assert github.git(DEFAULT_REPO, "rev-parse", f"{head}^").strip() == \
        github.refs(DEFAULT_REPO)["refs/heads/main"]


def test_a_plan_that_commits_a_script_elsewhere_than_its_spec_says_is_refused(
        act: Act, github: FakeGitHub, tmp_path: Path, images: tuple[str, str]) -> None:
    """The publishing job reads each spec's output: at the base itself; a plan job that
    moved the regenerated script (to conftest.py, which pytest would run) is refused."""
    old, new = images
    _base(github, tmp_path, old)
    event = _schedule(github)
    planned = act("schedule", event, token=act.identity.read_token, sandbox_image=new,
                  update="regenerate", replay="replays", mode="plan")
    assert planned.code == 0, planned.stdout
    (saved,) = (planned.workspace / "selfcorrect-plan").glob("*.json")
    plan = json.loads(saved.read_text())
    (run,) = [run for run in plan["runs"] if run["script"]]
    run["script"] = "conftest.py"
    for change in plan["commit"]["files"]:
        if change["path"] == SCRIPT_PATH:
            change["path"] = "conftest.py"
    forged = tmp_path / "forged"
    forged.mkdir()
    (forged / saved.name).write_text(json.dumps(plan))

    with pytest.raises(UsageError, match=re.escape(
            "it commits conftest.py for .selfcorrect/tasks/totals.yml, whose output at main "
            "is scripts/totals.py")):
        act("schedule", event, mode="publish", copy_plans_from=forged)
    assert github.pulls(DEFAULT_REPO) == []


def test_an_update_dispatched_from_another_branch_is_refused(
        act: Act, github: FakeGitHub, tmp_path: Path, images: tuple[str, str]) -> None:
    """Its commit goes on top of the default branch: scripts and records checked out from
    elsewhere would not match what they replace."""
    old, new = images
    _base(github, tmp_path, old)
    github.add_branch(DEFAULT_REPO, "elsewhere")
    github.commit_files(DEFAULT_REPO, "elsewhere", {"README.md": "x\n"}, message="x",
                        author=MAINTAINER)

    run = act("workflow_dispatch", github.event("workflow_dispatch", DEFAULT_REPO,
                                                ref="refs/heads/elsewhere"),
              ref="elsewhere", sandbox_image=new, update="check")

    assert (run.code, run.outputs["status"]) == (2, "refused"), run.stdout
    assert "not the head of main" in run.stdout and github.pulls(DEFAULT_REPO) == []
