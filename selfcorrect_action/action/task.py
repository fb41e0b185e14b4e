"""One task the action runs: the spec, where it came from, where its branch and comments go.
Built by the trigger handlers; run by task_run.py."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from selfcorrect_action.github.checkpoint_refs import CheckpointNote, issue_key, spec_key
from selfcorrect_action.spec import LoadedSpec


@dataclass(frozen=True)
class ResumeFrom:
    """`/selfcorrect resume`: the checkpoint downloaded into `folder` from the commit
    `sha`, and the budget the comment adds."""

    folder: Path
    sha: str
    note: CheckpointNote
    more_attempts: int = 0
    more_tokens: int = 0
    more_usd: float = 0.0


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
    # Issue 37: the checkpoint this run goes on from (None: a fresh run), and what the
    # live comment says first (a checkpoint this fresh run replaces).
    resume: ResumeFrom | None = None
    notice: str = ""

    @property
    def checkpoint_key(self) -> str | None:
        """Where this task's checkpoint is kept: an issue's by its number, a spec's by its
        path. None: not kept (a fix or a regeneration starts from committed code, and a
        scheduled update re-runs many; each is quick to run again)."""
        if self.given_code is not None or self.pull_number is not None:
            return None
        kind, _, value = self.origin.partition(" ")
        if kind == "issue" and value.isascii() and value.isdigit():
            return issue_key(int(value))
        return spec_key(value) if kind == "spec" and value else None
