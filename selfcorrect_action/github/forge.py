"""The seam between selfcorrect and a code forge (GitHub): what the action reads and
writes, as a small Protocol over plain records. `pygithub_forge.PyGithubForge` is the real
one, against GitHub's REST API; PyGithub's exceptions never get past it.

Writes are shaped so that retrying them is safe: commits are made from blobs and trees
(content-addressed), a branch only moves forward from the commit we expect, and the
callers look a pull request or comment up (by head branch, by hidden marker) before making
one, so a request GitHub applied but answered with an error is not made twice. A check run
carries an `external_id` of ours and is looked up by it before it is made again; its
annotations (which GitHub appends, 50 a request) are counted before a batch is sent again.
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from selfcorrect_action.errors import SelfcorrectError


class ForgeError(SelfcorrectError):
    """The forge refused or failed a request, after retries where retrying made sense."""

    exit_code = 3

    def __init__(self, message: str, *, status: int | None = None,
                 hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.status = status


class DraftsRefused(ForgeError):
    """GitHub refuses draft pull requests in this repository: a private one on GitHub Free
    or Pro. It says so only when asked for one; no API tells beforehand."""


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Permission(_Record):
    """What the collaborator-permission endpoint says of a user: `permission` is the legacy
    level (admin, write, read, none; maintain reads as write, triage as read) and
    `role_name` the precise role (admin, maintain, write, triage, read, or a custom one)."""

    login: str
    permission: str
    role_name: str = ""


class Issue(_Record):
    number: int
    title: str
    body: str
    author: str
    is_pull_request: bool = False
    labels: tuple[str, ...] = ()
    html_url: str = ""


class PullRequest(_Record):
    number: int
    title: str
    body: str
    head_branch: str
    head_sha: str
    head_repository: str  # owner/name of the head branch's repository
    base_branch: str
    html_url: str
    draft: bool = False
    state: str = "open"


class Comment(_Record):
    id: int
    body: str
    author: str
    html_url: str = ""


class Commit(_Record):
    sha: str
    message: str
    tree_sha: str = ""
    author_login: str = ""  # empty when GitHub cannot tie the commit to an account
    committer_login: str = ""


class TreeEntry(_Record):
    """One entry of a git tree as GitHub lists it: `size` only for a blob."""

    path: str
    type: str  # blob, tree, commit (a submodule)
    sha: str
    size: int | None = None


class FileChange(_Record):
    """A file to commit: UTF-8 text (scripts, tests, AUDIT.md, run.json)."""

    path: str
    content: str


# GitHub's limits (REST "Create a check run"): text fields up to 65535 characters, at most
# 50 annotations per request (more go out in further updates, which append).
MAX_CHECK_TEXT = 65_535
MAX_ANNOTATIONS_PER_REQUEST = 50
# Never `neutral`: GitHub counts it as passing for a required check, so only a verdict that
# verified something may pass (action/writes/build.py). `cancelled` blocks a required check
# as `failure` does, and says the run was stopped rather than that it failed.
Conclusion = Literal["success", "failure", "cancelled"]


class CheckAnnotation(_Record):
    """A mark on a file's lines in a check run (shown on the pull request's diff)."""

    path: str = Field(min_length=1)
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    # Columns only on a single line (GitHub refuses them across lines).
    start_column: int | None = Field(default=None, ge=1)
    end_column: int | None = Field(default=None, ge=1)
    level: Literal["notice", "warning", "failure"] = "failure"
    # GitHub takes at most 64 KB: 16,000 characters are within it whatever their UTF-8 size.
    message: str = Field(min_length=1, max_length=16_000)
    title: str = Field(default="", max_length=255)


class CheckRunOutput(_Record):
    """A completed check run as written: its verdict, and what the Checks tab shows."""

    name: str = Field(min_length=1, max_length=200)
    conclusion: Conclusion
    title: str = Field(min_length=1, max_length=200)
    summary: str = Field(max_length=MAX_CHECK_TEXT)
    details_url: str = ""
    # Ours, to find the run again: a retried create, or a plan applied twice, must not make
    # a second one.
    external_id: str = Field(min_length=1, max_length=200)
    annotations: list[CheckAnnotation] = Field(default_factory=list)


class CheckRun(_Record):
    id: int
    name: str
    head_sha: str
    status: str
    conclusion: str | None = None
    external_id: str = ""
    html_url: str = ""
    annotations_count: int = 0


class Forge(Protocol):
    """One repository on the forge, as the token sees it."""

    @property
    def repository(self) -> str:
        """owner/name"""
        ...

    def default_branch(self) -> str: ...

    def identity(self) -> str:
        """The login the token writes as (github-actions[bot], an app's `<slug>[bot]`, a
        user): a comment is ours only if this account wrote it."""
        ...

    def permission(self, login: str) -> Permission: ...

    def issue(self, number: int) -> Issue: ...

    def pull_request(self, number: int) -> PullRequest: ...

    def pull_request_files(self, number: int) -> list[str]:
        """Paths the pull request adds or changes (not removed ones)."""
        ...

    def changed_files(self, base_sha: str, head_sha: str) -> list[str] | None:
        """Paths that differ between two commits (removed ones too), from GitHub's compare;
        None when GitHub cut the list (it lists at most 300 files)."""
        ...

    def find_comment(self, number: int, marker: str) -> Comment | None:
        """The newest comment on issue/PR `number` that this token's account wrote and
        whose body holds `marker` (anyone can paste a marker into a comment of theirs)."""
        ...

    def create_comment(self, number: int, body: str) -> Comment: ...

    def edit_comment(self, comment_id: int, body: str) -> Comment: ...

    def ensure_label(self, name: str, *, color: str, description: str) -> None:
        """The repository has this label afterwards (created if missing)."""
        ...

    def add_labels(self, number: int, names: list[str]) -> None: ...

    def remove_label(self, number: int, name: str) -> None:
        """Quietly nothing when the label is not on the issue."""
        ...

    def branch_head(self, branch: str) -> Commit | None:
        """The commit the branch points at, None when there is no such branch."""
        ...

    def branch_protected(self, branch: str) -> bool:
        """Whether a protection rule covers the branch (a shared branch: develop,
        release/*), False when there is no such branch."""
        ...

    def write_tree(self, parent_sha: str | None, files: list[FileChange]) -> str:
        """The tree of `parent_sha` with `files` written over it (blobs, then the tree,
        through the Git Data API); None: a tree of `files` alone. Its sha."""
        ...

    def write_commit(self, parent_sha: str | None, tree_sha: str, message: str) -> str:
        """A new commit of `tree_sha` on top of `parent_sha` (None: a commit with no
        parent). Moves no branch. Its sha."""
        ...

    def read_tree(self, tree_sha: str) -> list[TreeEntry]:
        """The entries of one tree (not recursive)."""
        ...

    def read_blob(self, sha: str) -> bytes:
        """A blob's bytes (GitHub serves blobs up to 100 MB)."""
        ...

    def list_refs(self, prefix: str) -> dict[str, str]:
        """Every ref whose full name starts with `prefix` (`refs/...`), with the sha it
        points at."""
        ...

    def create_branch(self, branch: str, sha: str) -> None:
        """A new branch at `sha`; ForgeError if it already exists."""
        ...

    def move_branch(self, branch: str, sha: str) -> None:
        """Fast-forward `branch` to `sha`: never forced, so no commit on it is lost."""
        ...

    def read_commit(self, sha: str) -> Commit: ...

    def read_ref(self, ref: str) -> Commit | None:
        """The commit a full ref name (`refs/...`) points at; None when there is no such
        ref."""
        ...

    def create_ref(self, ref: str, sha: str) -> bool:
        """Create `ref` at `sha`; False when it exists already (GitHub makes a ref for one
        caller only, which is what locks are built on)."""
        ...

    def advance_ref(self, ref: str, sha: str) -> bool:
        """Fast-forward `ref` to `sha`; False when it is not a fast-forward (the ref moved
        meanwhile) or the ref is gone."""
        ...

    def delete_ref(self, ref: str, sha: str) -> bool:
        """Delete `ref` if it still points at `sha` (nobody moved it since); whether it is
        gone afterwards."""
        ...

    def find_open_pull_request(self, head_branch: str) -> PullRequest | None: ...

    def create_pull_request(self, *, head_branch: str, base_branch: str, title: str,
                            body: str, draft: bool) -> PullRequest:
        """DraftsRefused when a draft is asked for where GitHub has none."""
        ...

    def edit_pull_request(self, number: int, *, title: str, body: str) -> PullRequest: ...

    def read_file(self, path: str, ref: str) -> str | None:
        """A UTF-8 file's text at `ref`, None when it is not there."""
        ...

    def find_check_run(self, head_sha: str, name: str, *, external_id: str | None = None
                       ) -> CheckRun | None:
        """The newest check run called `name` on the commit (only one with that
        `external_id`, when given), whoever made it; None when there is none."""
        ...

    def create_check_run(self, head_sha: str, output: CheckRunOutput) -> CheckRun:
        """A completed check run on the commit, with `output.annotations` (at most 50)."""
        ...

    def update_check_run(self, check: CheckRun, output: CheckRunOutput) -> CheckRun:
        """Sets `check`'s conclusion, title and summary, and appends `output.annotations`
        (at most 50) to those it has; `check` is the run as last seen (its annotation
        count tells a retried batch from a new one)."""
        ...
