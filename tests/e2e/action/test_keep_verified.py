"""Issue 36's whole cycle through the action's real image, as its "done when" reads: the
bar-chart example published through the action (a dispatch, its pull request merged); a
pull request that renames the input's `units` column (and says so in the prompt) gets a
failing check run naming the column; `/selfcorrect regenerate` (replayed) pushes one commit
whose script passes, and the pull request's own check then passes on it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.e2e.action.harness import MAINTAINER, SALES, SPEC, RunAction
from tests.fakes.github_server import DEFAULT_REPO, IDENTITIES, FakeGitHub
from tests.fakes.replays import fenced, write_replay

pytestmark = pytest.mark.docker

SPEC_PATH = ".selfcorrect/tasks/bar_chart.yml"
SCRIPT_PATH = "scripts/sales_chart.py"
RENAMED_SPEC = SPEC.replace("(columns: product, units)", "(columns: product, quantity)")
RENAMED_SALES = SALES.replace("product,units", "product,quantity", 1)
PATCHED = """\
import json

import matplotlib.pyplot as plt
import pandas as pd

sales = pd.read_csv("sales.csv")
totals = sales.groupby("product")["quantity"].sum().sort_values(ascending=False)

fig, ax = plt.subplots(figsize=(6, 4))
totals.plot.bar(ax=ax, color="#4c72b0")
ax.set_title("Units sold per product")
ax.set_ylabel("units sold")
fig.tight_layout()
fig.savefig("chart.png", dpi=100)

with open("summary.json", "w") as handle:
    json.dump({"total": int(totals.sum()), "best": str(totals.index[0])}, handle)
print("done")
"""


@pytest.fixture
def act(action_image: str, github: FakeGitHub, tmp_path: Path) -> RunAction:
    """GITHUB_TOKEN only: the batch's writes are tested under every identity without the
    image (tests/unit/action/writes/test_batch.py, tests/integration/test_regenerate.py)."""
    return RunAction(action_image, github, tmp_path / "runs", IDENTITIES[0])


def _regeneration(tmp_path: Path) -> str:
    prompt = str(YAML(typ="safe").load(RENAMED_SPEC)["prompt"])
    return write_replay(tmp_path / "bar_chart.jsonl", prompt, [
        ("plan", json.dumps({"approach": "sum the quantity per product", "contract": {}})),
        ("repair", fenced(PATCHED)),
        ("judge", json.dumps({"verdict": "pass", "reasoning": "sums quantity per product",
                              "unmet_criteria": []}))]).read_text()


def test_published_checked_broken_regenerated(act: RunAction, github: FakeGitHub,
                                              tmp_path: Path) -> None:
    # Published through the action, and merged.
    published = act("workflow_dispatch", github.event("workflow_dispatch", DEFAULT_REPO,
                                                      sender=MAINTAINER), replay="replays")
    assert published.returncode == 0, published.log
    branch = github.refs(DEFAULT_REPO)["refs/heads/selfcorrect/task-bar_chart"]
    assert github.read_file(DEFAULT_REPO, branch, ".selfcorrect/lock/bar_chart.json")
    github.git(DEFAULT_REPO, "update-ref", "refs/heads/main", branch)

    # A pull request renames the column.
    github.add_branch(DEFAULT_REPO, "rename")
    github.commit_files(DEFAULT_REPO, "rename", {
        "examples/data/sales.csv": RENAMED_SALES, SPEC_PATH: RENAMED_SPEC,
        "replays-regenerate/bar_chart.jsonl": _regeneration(tmp_path)},
        message="sales.csv: units is now quantity", author=MAINTAINER)
    number = github.add_pull(DEFAULT_REPO, "rename", title="rename units", user=MAINTAINER)
    opened = github.event("pull_request", DEFAULT_REPO, number=number, action="opened")

    checked = act("pull_request", opened, ref="rename")

    assert (checked.returncode, checked.outputs["status"]) == (1, "failed"), checked.log
    head = github.refs(DEFAULT_REPO)["refs/heads/rename"]
    (red,) = [c for c in github.check_runs(DEFAULT_REPO)
              if c.name == f"selfcorrect / {SPEC_PATH}" and c.head_sha == head]
    assert red.conclusion == "failure" and "Column not found: units" in (red.title or "")
    assert any(mark["path"] == SCRIPT_PATH for mark in red.annotations)

    # Regenerated on request: one commit on top of the head.
    comment = github.add_comment(DEFAULT_REPO, number, "/selfcorrect regenerate",
                                 user=MAINTAINER)
    regenerated = act("issue_comment", github.event("issue_comment", DEFAULT_REPO,
                                                    number=number, comment_id=comment),
                      ref="rename", replay="replays-regenerate")

    assert regenerated.returncode == 0, regenerated.log
    new_head = github.refs(DEFAULT_REPO)["refs/heads/rename"]
    assert github.git(DEFAULT_REPO, "rev-parse", f"{new_head}^").strip() == head
    script = (github.read_file(DEFAULT_REPO, "rename", SCRIPT_PATH) or b"").decode()
    assert '["quantity"]' in script and script.startswith("# selfcorrect: generated from")
    (green,) = [c for c in github.check_runs(DEFAULT_REPO)
                if c.name == f"selfcorrect / {SPEC_PATH}" and c.head_sha == new_head]
    assert green.conclusion == "success"

    # The pull request's own check passes on the pushed commit.
    pushed = github.event("pull_request", DEFAULT_REPO, number=number, action="synchronize")
    again = act("pull_request", pushed, ref="rename")
    assert (again.returncode, again.outputs["status"]) == (0, "valid"), again.log
