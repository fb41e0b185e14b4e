"""The seam between selfcorrect and a code forge (GitHub): what the action reads and
writes, as a small Protocol over plain records. `pygithub_forge.PyGithubForge` is the real
one, against GitHub's REST API; PyGithub's exceptions never get past it.

Writes are shaped so that retrying them is safe: commits are made from blobs and trees
(content-addressed), a branch only moves forward from the commit we expect, and the
callers look a pull request or comment up (by head branch, by hidden marker) before making
one, so a request GitHub applied but answered with an error is not made twice.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, ConfigDict

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


class FileChange(_Record):
    """A file to commit: UTF-8 text (scripts, tests, AUDIT.md, run.json)."""

    path: str
    content: str


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

    def write_tree(self, parent_sha: str, files: list[FileChange]) -> str:
        """The tree of `parent_sha` with `files` written over it (blobs, then the tree,
        through the Git Data API). Its sha."""
        ...

    def write_commit(self, parent_sha: str, tree_sha: str, message: str) -> str:
        """A new commit of `tree_sha` on top of `parent_sha`. Moves no branch. Its sha."""
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
