"""One task the action runs: the spec, where it came from, where its branch and comments go.
Built by the trigger handlers; run by task_run.py."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from selfcorrect_action.spec import LoadedSpec


@dataclass(frozen=True)
class Task:
    loaded: LoadedSpec
    origin: str  # recorded in the PR body for a later retry: "issue 12", "spec <path>"
    label: str  # for people: "issue #12", ".selfcorrect/tasks/sales.yml"
    title: str  # the pull request's title after "selfcorrect: "
    branch: str
    comment_on: int | None = None  # the issue or PR the live report and labels go to
    closes: int | None = None  # the issue the pull request closes
    guidance: str = ""
    replay: Path | None = None
    approval: str | None = None  # the approved issue body's digest, kept in the comment
    base_branch: str | None = None  # where the PR goes, when not the input or the default
    # `/selfcorrect fix`: the pull request whose branch gets the fix, and the head commit
    # the run's baseline was taken at (the fix goes on top of it, or nowhere).
    pull_number: int | None = None
    expected_head: str | None = None
    # `/selfcorrect regenerate`: the committed script, the run's first attempt (loop/given.py);
    # None: generated from scratch (a spec never generated).
    given_code: str | None = None
