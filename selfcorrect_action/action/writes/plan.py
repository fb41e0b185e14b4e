"""Every write the action makes, computed as data from a finished run before anything is
written: the commit (branch, files, message), the pull request, the check run, the final
comment and the labels. apply.py carries a plan out; a workflow can also save the plan in a
job with read-only permissions and apply it in a later job that may write (the hardened
recipe).

Pure: the caller renders the reports and passes their text in.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from selfcorrect_action.github.events import MARKER_PREFIX
from selfcorrect_action.github.forge import CheckRunOutput, FileChange
from selfcorrect_action.github.naming import (
    BRANCH_PREFIX,
    CHECK_NAME_PREFIX,
    LABEL_FAILED,
    LABEL_PASSED,
    LABEL_RUNNING,
    STATUS_LABELS,
    check_name,
    is_ours,
)
from selfcorrect_action.repair.answer import MAX_FILES as MAX_REPAIR_FILES
from selfcorrect_action.repair.files import refusal, writable
from selfcorrect_action.report.run_json import RUNS_DIR
from selfcorrect_action.verified.record import LOCK_DIR, lock_path

PLAN_FORMAT: Literal["selfcorrect.write-plan"] = "selfcorrect.write-plan"
# 2: a plan may carry a check run. Version 1 plans (none) are still read.
# 3: a passing script's commit may carry its verification record (issue 36), which a
# publisher of version 2 would refuse as a file no plan commits: this one says which
# version to publish with instead. Version 2 plans (none) are still read.
# 4: a batch: one commit carrying several runs' scripts, records and reports, with a check
# run for each (`/selfcorrect regenerate`, the scheduled update PR). Version 3 plans are
# still read.
PLAN_VERSION = 4
# What a batch's run may have ended as for its check run to be green: a run that passed, or
# a spec only re-verified that is verified or passes (selfcorrect check's statuses).
GREEN_STATUSES = frozenset({"passed", "verified", "passes"})
READABLE_VERSIONS = frozenset({1, 2, 3, 4})
# Replaced by the pull request's link when the plan is applied (its URL is not known before).
PR_LINK_SLOT = "<!-- selfcorrect:pr-link -->"
# Replaced in the check run's summary by where AUDIT.md is, once it is known whether the
# plan's commit was made.
AUDIT_SLOT = "<!-- selfcorrect:audit-link -->"

# Paths a plan may never write, whoever made it: workflows (a token that can push there can
# take over CI) and git's own folder.
_FORBIDDEN_TOP = (".github", ".git")


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PlannedCommit(_Record):
    branch: str
    base_branch: str
    message: str
    # Empty only in a batch none of whose runs passed: the scheduled update's pull request
    # that lists what broke (WritePlan checks).
    files: list[FileChange] = Field(default_factory=list)
    # kind repair: the spec's `files:` globs, which the repository's files the commit
    # changes must match (plain .py source, never tests, conftest.py or configuration).
    allowed_files: list[str] = Field(default_factory=list, max_length=50)
    # `/selfcorrect fix`: a commit on a pull request's own branch (not one of ours), made
    # only on top of the head the run's baseline was taken at, and never forced.
    expected_head: str | None = Field(default=None, pattern=r"^[0-9a-f]{40}([0-9a-f]{24})?$")
    pull_number: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _branch_we_may_write(self) -> PlannedCommit:
        if self.expected_head is None and self.pull_number is None:
            our_branch(self.branch)
        elif self.expected_head is None or self.pull_number is None:
            raise ValueError("a commit on a pull request's branch names both the pull request "
                             "and the head it goes on top of")
        else:
            ref_name(self.branch)
        return self

    @field_validator("files")
    @classmethod
    def _safe_paths(cls, files: list[FileChange]) -> list[FileChange]:
        paths = [change.path for change in files]
        if len(set(paths)) != len(paths):
            twice = sorted({path for path in paths if paths.count(path) > 1})
            raise ValueError(f"a commit writes each file once, not {twice}")
        for change in files:
            problem = path_problem(change.path)
            if problem:
                raise ValueError(f"{change.path}: {problem}")
        return files


class PlannedPullRequest(_Record):
    title: str = Field(min_length=1, max_length=256)
    body: str = Field(max_length=65_536)
    draft: bool = False


class PlannedComment(_Record):
    number: int
    marker: str
    body: str = Field(max_length=65_536)

    @field_validator("marker")
    @classmethod
    def _one_of_ours(cls, value: str) -> str:
        # The comment is found again by its marker: an empty one would match every
        # comment, someone else's too.
        if not value.startswith(MARKER_PREFIX) or len(value) < len(MARKER_PREFIX) + 8:
            raise ValueError("a planned comment carries one of selfcorrect's own markers")
        return value


class PlannedLabels(_Record):
    number: int
    add: list[str] = Field(default_factory=list)
    remove: list[str] = Field(default_factory=list)

    @field_validator("add", "remove")
    @classmethod
    def _status_labels_only(cls, value: list[str]) -> list[str]:
        # Labels can drive other automation (auto-merge bots): a plan sets ours only.
        others = sorted(set(value) - set(STATUS_LABELS))
        if others:
            raise ValueError(f"a plan only sets selfcorrect's status labels, not {others}")
        return value


class PlannedCheckRun(_Record):
    """The run's verdict as a check run. It names no commit: applying the plan puts it on
    the commit the plan pushes to `branch`, or else on the head of that branch's open pull
    request, so a plan cannot mark any other commit (action/writes/apply.py)."""

    branch: str
    output: CheckRunOutput
    audit_link: str = Field(default="", max_length=2000)  # AUDIT.md on the branch, if committed
    pull_number: int | None = Field(default=None, ge=1)  # `/selfcorrect fix`: the PR's branch

    @model_validator(mode="after")
    def _branch_we_may_mark(self) -> PlannedCheckRun:
        if self.pull_number is None:
            our_branch(self.branch)
        else:
            ref_name(self.branch)
        return self

    @field_validator("output")
    @classmethod
    def _ours(cls, output: CheckRunOutput) -> CheckRunOutput:
        # A plan cannot turn another check (a required CI job's) green.
        if not output.name.startswith(CHECK_NAME_PREFIX):
            raise ValueError(f"a plan only writes check runs named {CHECK_NAME_PREFIX}..., "
                             f"not {output.name!r}")
        for annotation in output.annotations:
            problem = path_problem(annotation.path)
            if problem:
                raise ValueError(f"an annotation on {annotation.path}: {problem}")
        return output


class PlannedRun(_Record):
    """One run of a batch: what its commit may carry (its reports; for a run that passed,
    its script at `script` and its record at its task's lock path) and whose check run
    may be green."""

    task: str = Field(min_length=1, max_length=1000)
    # "": a spec only re-verified, never run (the scheduled update without regeneration):
    # nothing of it is committed.
    run_id: str = Field(pattern=r"^[0-9a-f]{0,32}$")
    status: str
    script: str | None = None  # the script's path, for a run that passed
    # What a pull request's body says of it (the scheduled update's, rendered again when the
    # plans of a matrix are merged): its attempts and tokens, and why it did not pass.
    attempts: int = Field(default=0, ge=0)
    tokens: int = Field(default=0, ge=0)
    note: str = Field(default="", max_length=2000)

    @model_validator(mode="after")
    def _a_passing_script(self) -> PlannedRun:
        if not self.run_id and (self.script is not None or self.status == "passed"):
            raise ValueError(f"{self.task}: a spec that was not run has no passing script")
        if self.script is not None and (self.status != "passed" or not self.script.endswith(
                ".py") or path_problem(self.script)):
            raise ValueError(f"{self.task}: a batch commits the .py script of a run that "
                             f"passed, not {self.script!r} of a run that ended {self.status}")
        return self


class WritePlan(_Record):
    format: Literal["selfcorrect.write-plan"] = PLAN_FORMAT
    version: int = PLAN_VERSION
    repository: str
    task: str  # what the run was for, e.g. "issue #12" or ".selfcorrect/tasks/x.yml"
    status: str
    run_id: str = Field(default="", pattern=r"^[0-9a-f]{0,32}$")
    commit: PlannedCommit | None = None
    pull_request: PlannedPullRequest | None = None
    comment: PlannedComment | None = None
    labels: PlannedLabels | None = None
    check_run: PlannedCheckRun | None = None
    # A batch (version 4): the runs one commit carries, each with its check run.
    runs: list[PlannedRun] = Field(default_factory=list, max_length=200)
    check_runs: list[PlannedCheckRun] = Field(default_factory=list, max_length=200)

    @field_validator("version")
    @classmethod
    def _readable(cls, value: int) -> int:
        if value not in READABLE_VERSIONS:
            raise ValueError(f"plan version {value} is not one this selfcorrect reads "
                             f"({', '.join(map(str, sorted(READABLE_VERSIONS)))}): plan and "
                             "publish with the same version of the action")
        return value

    @model_validator(mode="after")
    def _check_of_this_run(self) -> WritePlan:
        """Green only for a run that passed, on the branch the plan commits to."""
        check = self.check_run
        if check is None:
            return self
        if self.version < 2:
            raise ValueError("a version 1 plan carries no check run")
        if check.output.conclusion == "success" and self.status != "passed":
            raise ValueError(f"a run that ended {self.status!r} cannot have a green check run")
        if self.commit is not None and check.branch != self.commit.branch:
            raise ValueError(f"the check run is for {check.branch}, the commit for "
                             f"{self.commit.branch}")
        return self

    @model_validator(mode="after")
    def _files_of_this_run(self) -> WritePlan:
        """The script, its verification record, and this run's reports and tests: nothing
        else of the repository. A repair's commit changes existing files instead, each
        matching the spec's globs and none a test, a conftest or configuration
        (repair/files.py): the same class of file a script is (Python source outside
        .github/), in a number the globs bound."""
        if self.commit is None:
            return self
        if self.runs:
            return self._files_of_these_runs(self.commit)
        if not self.commit.files:
            raise ValueError("a plan's commit changes at least one file")
        own = f"{RUNS_DIR}/{self.run_id}/"
        others = [f.path for f in self.commit.files if not (self.run_id and
                                                            f.path.startswith(own))]
        others = self._without_record(others)
        globs = self.commit.allowed_files
        if globs:
            refused = [why for path in others
                       if (why := refusal(path, writable(globs, [path]), globs)) is not None]
            if refused or len(others) > MAX_REPAIR_FILES:
                raise ValueError(f"a repair's plan commits at most {MAX_REPAIR_FILES} files "
                                 f"its globs allow: {'; '.join(refused) or others}")
            return self
        if self.commit.expected_head is not None:
            raise ValueError("a commit on a pull request's branch is a repair's: it names the "
                             "globs of the files it may change")
        if len(others) > 1 or any(not path.endswith(".py") for path in others):
            raise ValueError(f"a plan commits one script and the run's own files under "
                             f"{own}, not {others}")
        return self


    @model_validator(mode="after")
    def _a_batch(self) -> WritePlan:
        """A batch's check runs: one per run, named for its task, on the commit's branch,
        green only for a run that passed."""
        if not self.runs and not self.check_runs:
            return self
        if self.version < 4 or not self.runs or self.check_run is not None:
            raise ValueError("a batch (version 4) lists its runs and gives each its own check "
                             "run in check_runs")
        tasks = [run.task for run in self.runs]
        run_ids = [run.run_id for run in self.runs if run.run_id]
        if len(set(tasks)) != len(tasks) or len(set(run_ids)) != len(run_ids):
            raise ValueError("a batch lists each task and each run once")
        status = {check_name(run.task): run.status for run in self.runs}
        names = [check.output.name for check in self.check_runs]
        if len(set(names)) != len(names):
            raise ValueError("a batch writes one check run per task")
        for check in self.check_runs:
            ran = status.get(check.output.name)
            if ran is None:
                raise ValueError(f"the check run {check.output.name!r} is for no run of the "
                                 "batch")
            if check.output.conclusion == "success" and ran not in GREEN_STATUSES:
                raise ValueError(f"a run that ended {ran!r} cannot have a green check run")
            if self.commit is not None and check.branch != self.commit.branch:
                raise ValueError(f"the check run is for {check.branch}, the commit for "
                                 f"{self.commit.branch}")
        return self

    def _files_of_these_runs(self, commit: PlannedCommit) -> WritePlan:
        """A batch's commit: each run's own files under its folder, and for each run that
        passed its script and its record; nothing else."""
        allowed: set[str] = set()
        folders = tuple(f"{RUNS_DIR}/{run.run_id}/" for run in self.runs if run.run_id)
        if not commit.files and any(run.script for run in self.runs):
            raise ValueError("a batch whose runs passed commits their scripts")
        for run in self.runs:
            if run.script is not None:
                allowed |= {run.script, lock_path(run.task)}
        others = [f.path for f in commit.files
                  if f.path not in allowed and not f.path.startswith(folders)]
        if others or commit.allowed_files:
            raise ValueError(f"a batch commits its runs' scripts, records and reports, not "
                             f"{others or commit.allowed_files}")
        return self

    def _without_record(self, paths: list[str]) -> list[str]:
        """`paths` but the one verification record a passing script's plan may carry, at
        its task's lock path (`.selfcorrect/lock/<spec>.json`, `issue-12.json` for an
        issue's): a record elsewhere, a second one, or one for a run that did not pass or
        a repair, is refused."""
        records = [path for path in paths
                   if PurePosixPath(path).parts[:2] == PurePosixPath(LOCK_DIR).parts]
        if not records:
            return paths
        expected = lock_path(self.task)
        if (records != [expected] or self.status != "passed" or self.version < 3
                or self.commit is None or self.commit.allowed_files):
            raise ValueError(f"a plan commits one verification record, {expected}, for a "
                             f"script that passed; not {records}")
        return [path for path in paths if path != expected]


def our_branch(value: str) -> str:
    if not is_ours(value) or ".." in value or value.endswith("/"):
        raise ValueError(f"the action only writes branches under {BRANCH_PREFIX}")
    return value


def ref_name(value: str) -> str:
    """A branch name a plan may write to (a pull request's own): no way out of refs/heads/."""
    if (not value or value.startswith(("/", "-", "refs/")) or ".." in value or "//" in value
            or value.endswith(("/", ".lock")) or any(c in value for c in " ~^:?*[\\")
            or any(ord(c) < 32 or ord(c) == 127 for c in value)):
        raise ValueError(f"{value!r} is not a branch name a plan may write to")
    return value


def path_problem(path: str) -> str | None:
    pure = PurePosixPath(path)
    if pure.is_absolute() or not pure.parts or ".." in pure.parts or "\\" in path:
        return "must be a relative path inside the repository"
    if pure.parts[0].casefold() in _FORBIDDEN_TOP:
        return "the action never writes under .github/ or .git/"
    return None


def run_files(run_id: str, *, audit_md: str, run_json: str) -> list[FileChange]:
    folder = f"{RUNS_DIR}/{run_id}"
    return [FileChange(path=f"{folder}/AUDIT.md", content=audit_md),
            FileChange(path=f"{folder}/run.json", content=run_json)]


def status_labels(number: int, *, passed: bool) -> PlannedLabels:
    done = LABEL_PASSED if passed else LABEL_FAILED
    other = LABEL_FAILED if passed else LABEL_PASSED
    return PlannedLabels(number=number, add=[done], remove=[LABEL_RUNNING, other])
