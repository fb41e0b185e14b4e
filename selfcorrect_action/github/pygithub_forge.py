"""The Forge over GitHub's REST API, through PyGithub: with pygithub_records.py (its objects
as our records) the only modules that import it.

Every request runs inside `Retrier.call` (github_retry.py), which retries what is worth
retrying and turns every PyGithub, requests and urllib3 exception into a ForgeError. The
client is lazy (objects made from a url make no request until an attribute is read) and each
call reads what it needs into a plain record inside that wrapper, so no request happens
outside it and no PyGithub object leaves this module.

Writes are safe to retry: content-addressed git objects are simply sent again; a comment or
a pull request GitHub may have made before failing is looked up before it is made again; a
branch is created or moved only to the commit asked for and, when it is already there,
that is success. A check run is looked up by its name and external_id on its commit before
it is made again, and a batch of annotations is not sent again once the run's count shows
it arrived (GitHub appends them, so a resent batch would show twice).
"""

from __future__ import annotations

import base64
import functools
import math
import random
import time
import warnings
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import quote

from github import Auth, Github
from github.GithubException import GithubException
from github.GithubObject import NotSet
from github.InputGitTreeElement import InputGitTreeElement
from github.IssueComment import IssueComment
from github.Repository import Repository

from selfcorrect_action.github import pygithub_records as records
from selfcorrect_action.github.forge import (
    CheckRun,
    CheckRunOutput,
    Comment,
    Commit,
    DraftsRefused,
    FileChange,
    ForgeError,
    Issue,
    Permission,
    PullRequest,
    TreeEntry,
)
from selfcorrect_action.github.github_retry import Retrier, mentions

T = TypeVar("T")

DEFAULT_API_URL = "https://api.github.com"
# Who GITHUB_TOKEN writes as: the last resort when nothing tells us who the token is.
ACTIONS_BOT = "github-actions[bot]"
# The REST API version every request names (GitHub's X-GitHub-Api-Version), so a change of
# GitHub's default version cannot change the shapes this module reads.
API_VERSION = "2022-11-28"
# GraphQL's `viewer` is the one question an installation token (GITHUB_TOKEN, a GitHub
# App's) may ask about itself: REST's GET /user answers it 403.
VIEWER_QUERY = "query { viewer { login } }"
FILE_MODE = "100644"  # a regular, non-executable file: what every FileChange is
PER_PAGE = 100  # GitHub's maximum: the fewest requests for comment and file lists


class _VersionedToken(Auth.Token):
    """A token that also names the API version on every request. PyGithub only gained
    `Github(api_version=...)` in 2.10; this hook (Auth.authentication, which sets the
    Authorization header) is there in every 2.x release the package allows."""

    def authentication(self, headers: dict[str, Any]) -> None:
        super().authentication(headers)
        headers["X-GitHub-Api-Version"] = API_VERSION


# GitHub's compare lists at most this many files: a list this long may be cut.
MAX_COMPARE_FILES = 300


class PyGithubForge:
    """One GitHub repository, as `token` sees it. Constructing makes no request.

    `bot_login` is the login the token writes as when the caller knows it (the action's
    `bot-login` input: a GitHub App's `<slug>[bot]`); otherwise identity() asks GitHub.
    `sleep` and `clock` are injectable so tests do not wait; `jitter` gives the fraction
    (0 to 1) of each backoff step to wait. `timeout_s` is per request; PyGithub takes whole
    seconds only, so it is rounded up.
    """

    def __init__(self, repository: str, *, token: str, api_url: str = DEFAULT_API_URL,
                 bot_login: str | None = None,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.time,
                 jitter: Callable[[], float] = random.random,
                 max_wait_s: float = 120.0, timeout_s: float = 30.0) -> None:
        owner, slash, name = repository.partition("/")
        if not owner or not slash or not name or "/" in name:
            raise ForgeError(f"{repository!r} is not a repository of the form owner/name",
                             hint="GITHUB_REPOSITORY names it as owner/name, e.g. "
                             "octo-org/hello-world")
        if not token.strip():
            raise ForgeError("no GitHub token was given",
                             hint="the action's github-token input (by default "
                             "${{ github.token }}) must not be empty")
        self._name = repository
        self._owner = owner
        api = api_url.rstrip("/")
        self._retrier = Retrier(repository=repository, api_url=api, secrets=[token],
                                sleep=sleep, clock=clock, jitter=jitter,
                                max_wait_s=max_wait_s)
        self._github = Github(
            auth=_VersionedToken(token), base_url=api, timeout=max(1, math.ceil(timeout_s)),
            per_page=PER_PAGE, user_agent="selfcorrect", lazy=True,
            # Our Retrier retries; PyGithub's would replay POSTs. No throttling sleeps:
            # they would be real sleeps that tests cannot see.
            retry=None, seconds_between_requests=None, seconds_between_writes=None)
        with warnings.catch_warnings():
            # Before 2.10, get_repo ignored Github(lazy=) and asked at once unless told
            # lazy=True (outside the retrying, translating wrapper); 2.10 deprecates telling.
            warnings.simplefilter("ignore", DeprecationWarning)
            self._repo = self._github.get_repo(repository, lazy=True)  # no request yet
        self._repo_seen = False
        self._identity: str | None = bot_login.strip() if bot_login else None
        self._clock = clock

    @property
    def repository(self) -> str:
        return self._name

    def close(self) -> None:
        """Release the connection pool."""
        self._github.close()

    # -- reads -------------------------------------------------------------------------------

    def default_branch(self) -> str:
        return self._call(f"reading {self._name}", lambda: self._repository().default_branch)

    def permission(self, login: str) -> Permission:
        def fetch() -> Permission:
            repo = self._repository()
            url = f"{repo.url}/collaborators/{quote(login, safe='')}/permission"
            try:
                # One request for both fields: PyGithub's two helpers make one each.
                _, data = repo.requester.requestJsonAndCheck("GET", url)
            except GithubException as exc:
                if exc.status == 404:  # no such user (the repository was found above)
                    return Permission(login=login, permission="none")
                raise
            return records.permission(login, data)

        return self._call(f"reading {login}'s permission on {self._name}", fetch)

    def issue(self, number: int) -> Issue:
        def fetch() -> Issue:
            found = self._repository().get_issue(number)
            return Issue(number=found.number, title=found.title, body=found.body or "",
                         author=records.login(found.user),
                         is_pull_request=found.pull_request is not None,
                         labels=tuple(label.name for label in found.labels),
                         html_url=found.html_url or "")

        return self._call(f"reading issue #{number}", fetch)

    def pull_request(self, number: int) -> PullRequest:
        return self._call(f"reading pull request #{number}",
                          lambda: records.pull(self._repository().get_pull(number)))

    def pull_request_files(self, number: int) -> list[str]:
        def fetch() -> list[str]:
            files = self._repository().get_pull(number).get_files()
            return [f.filename for f in files if f.status != "removed"]

        return self._call(f"listing the files of pull request #{number}", fetch)

    def changed_files(self, base_sha: str, head_sha: str) -> list[str] | None:
        def fetch() -> list[str] | None:
            files = list(self._repository().compare(base_sha, head_sha).files)
            if len(files) >= MAX_COMPARE_FILES:
                return None
            return sorted({f.filename for f in files}
                          | {f.previous_filename for f in files if f.previous_filename})

        return self._call(f"comparing {base_sha[:7]} with {head_sha[:7]}", fetch)

    def find_comment(self, number: int, marker: str) -> Comment | None:
        if not marker.strip():
            return None  # "" is in every body: never a way to find a comment
        me = self.identity()
        return self._call(f"looking through the comments on #{number}",
                          lambda: self._newest_comment(number, lambda c: marker in (
                              c.body or "") and records.login(c.user).lower() == me.lower()))

    def identity(self) -> str:
        """The `bot_login` given; else the author of the first comment this forge made;
        else asked of GitHub: GET /user for a person's token, GraphQL's `viewer` for an
        installation token (GITHUB_TOKEN or a GitHub App's, which GET /user refuses); else
        the Actions bot."""
        if self._identity is None:
            self._identity = self._call("asking GitHub who the token is", self._whoami)
        return self._identity

    def _whoami(self) -> str:
        try:
            return str(self._github.get_user().login)
        except GithubException as exc:
            if exc.status not in (401, 403, 404):
                raise
        try:
            _, data = self._github.requester.graphql_query(VIEWER_QUERY, {})
        except GithubException as exc:
            if exc.status in (400, 401, 403, 404):  # an old GHES, a GraphQL error
                return ACTIONS_BOT
            raise
        viewer = data.get("data", {}).get("viewer") if isinstance(data, Mapping) else None
        login = viewer.get("login") if isinstance(viewer, Mapping) else None
        return login if isinstance(login, str) and login.strip() else ACTIONS_BOT

    def branch_head(self, branch: str) -> Commit | None:
        def fetch() -> Commit | None:
            try:
                head = self._repository().get_branch(branch).commit
            except GithubException as exc:
                if exc.status == 404:
                    return None
                raise
            return Commit(sha=head.sha, message=head.commit.message,
                          tree_sha=head.commit.tree.sha,
                          author_login=records.login(head.author),
                          committer_login=records.login(head.committer))

        return self._call(f"reading the branch {branch}", fetch)

    def branch_protected(self, branch: str) -> bool:
        def fetch() -> bool:
            try:
                return bool(self._repository().get_branch(branch).protected)
            except GithubException as exc:
                if exc.status == 404:
                    return False
                raise

        return self._call(f"reading the branch {branch}", fetch)

    def find_open_pull_request(self, head_branch: str) -> PullRequest | None:
        return self._call(f"looking for an open pull request from {head_branch}",
                          lambda: self._open_pull(head_branch))

    def read_file(self, path: str, ref: str) -> str | None:
        return self._call(f"reading {path} at {ref}", lambda: self._file_text(path, ref))

    # -- writes ------------------------------------------------------------------------------

    def create_comment(self, number: int, body: str) -> Comment:
        def create() -> Comment:
            made = records.comment(self._repository().get_issue(number).create_comment(body))
            if made.author:
                self._identity = made.author  # what GitHub says we are, from now on
            return made

        def already_made() -> Comment | None:
            # Callers put a unique hidden marker in the body, so an equal body is ours.
            return self._newest_comment(number, lambda c: records.same_text(c.body, body))

        return self._call(f"commenting on #{number}", create, reconcile=already_made)

    def edit_comment(self, comment_id: int, body: str) -> Comment:
        def edit() -> Comment:
            repo = self._repository()
            # PyGithub reaches a comment only through its issue, whose number we lack.
            headers, data = repo.requester.requestJsonAndCheck(
                "PATCH", f"{repo.url}/issues/comments/{comment_id}", input={"body": body})
            return records.comment(IssueComment(repo.requester, headers, data, completed=True))

        return self._call(f"editing comment {comment_id}", edit)

    def ensure_label(self, name: str, *, color: str, description: str) -> None:
        def ensure() -> bool:
            repo = self._repository()
            try:
                repo.get_label(name).complete()  # lazy: complete() is the GET
                return True
            except GithubException as exc:
                if exc.status != 404:
                    raise
            try:
                repo.create_label(name, color.removeprefix("#"), description)
            except GithubException as exc:
                if not mentions(exc, 422, "already_exists"):  # made meanwhile: fine
                    raise
            return True

        self._call(f"making sure the label {name!r} exists", ensure)

    def add_labels(self, number: int, names: list[str]) -> None:
        if names:
            self._call(f"labelling #{number} {', '.join(names)}",
                       lambda: self._repository().get_issue(number).add_to_labels(*names))

    def remove_label(self, number: int, name: str) -> None:
        def remove() -> None:
            repo = self._repository()
            # Not Issue.remove_from_labels: it leaves a "/" in the name unquoted.
            url = f"{repo.url}/issues/{number}/labels/{quote(name, safe='')}"
            try:
                repo.requester.requestJsonAndCheck("DELETE", url)
            except GithubException as exc:
                if exc.status != 404:  # not on the issue, or no such label: nothing to do
                    raise

        self._call(f"removing the label {name!r} from #{number}", remove)

    def write_tree(self, parent_sha: str | None, files: list[FileChange]) -> str:
        # Blobs, then a tree on the parent's tree: each step is retried on its own, and all
        # are content-addressed, so sending one again makes nothing new.
        base: Any = NotSet
        if parent_sha is not None:
            base = self._call(f"reading the commit {parent_sha[:7]}",
                              lambda: self._repository().get_git_commit(parent_sha)).tree
        blob_shas: dict[str, str] = {}
        for change in files:
            if change.content not in blob_shas:
                blob_shas[change.content] = self._call(
                    f"uploading {change.path}", functools.partial(self._blob, change.content))
        elements = [InputGitTreeElement(change.path, FILE_MODE, "blob",
                                        sha=blob_shas[change.content]) for change in files]
        on = f" on {parent_sha[:7]}" if parent_sha else ""
        return self._call(f"writing the tree of {len(files)} file(s){on}",
                          lambda: self._repository().create_git_tree(elements, base).sha)

    def write_commit(self, parent_sha: str | None, tree_sha: str, message: str) -> str:
        def write() -> str:
            repo = self._repository()
            # By sha: PyGithub's create_git_commit wants the tree and parents as objects,
            # which would cost a GET of each first.
            _, data = repo.requester.requestJsonAndCheck(
                "POST", f"{repo.url}/git/commits",
                input={"message": message, "tree": tree_sha,
                       "parents": [parent_sha] if parent_sha else []})
            return str(data["sha"])

        on = f"on {parent_sha[:7]}" if parent_sha else "with no parent"
        return self._call(f"writing the commit {on}", write)

    def read_tree(self, tree_sha: str) -> list[TreeEntry]:
        def fetch() -> list[TreeEntry]:
            tree = self._repository().get_git_tree(tree_sha)
            return [TreeEntry(path=e.path, type=e.type, sha=e.sha, size=e.size)
                    for e in tree.tree]

        return self._call(f"reading the tree {tree_sha[:7]}", fetch)

    def read_blob(self, sha: str) -> bytes:
        def fetch() -> bytes:
            blob = self._repository().get_git_blob(sha)
            return base64.b64decode(blob.content) if blob.encoding == "base64" else (
                blob.content.encode())

        return self._call(f"reading the blob {sha[:7]}", fetch)

    def list_refs(self, prefix: str) -> dict[str, str]:
        def fetch() -> dict[str, str]:
            repo = self._repository()
            found: dict[str, str] = {}
            url = f"{repo.url}/git/matching-refs/{records.ref_path(prefix.removeprefix('refs/'))}"
            page = 1
            while True:
                _, data = repo.requester.requestJsonAndCheck(
                    "GET", url, parameters={"per_page": PER_PAGE, "page": page})
                rows = data if isinstance(data, list) else []
                found |= {row["ref"]: row["object"]["sha"] for row in rows
                          if isinstance(row, Mapping) and isinstance(row.get("object"), Mapping)
                          and str(row.get("ref", "")).startswith(prefix)}
                if len(rows) < PER_PAGE:
                    return found
                page += 1

        return self._call(f"listing the refs under {prefix}", fetch)

    def create_branch(self, branch: str, sha: str) -> None:
        doing = f"creating the branch {branch} at {sha[:7]}"

        def create() -> str:
            try:
                return self._repository().create_git_ref(f"refs/heads/{branch}", sha).object.sha
            except GithubException as exc:
                if not mentions(exc, 422, "reference already exists"):
                    raise
                current = self._ref_sha(branch)
                if current == sha:  # made by an attempt that failed, or by a twin run
                    return sha
                raise self._retrier.translate(
                    doing, exc, hint=f"{branch} already exists at {(current or '?')[:7]}: "
                    "another run or a person made it; it was left as it is") from exc

        def already_made() -> str | None:
            return sha if self._ref_sha(branch) == sha else None

        self._call(doing, create, reconcile=already_made)

    def move_branch(self, branch: str, sha: str) -> None:
        doing = f"moving the branch {branch} to {sha[:7]}"

        def move() -> None:
            try:
                # The GET (at once before PyGithub 2.10, when read after); it also completes
                # ref.url for the PATCH.
                ref = self._repository().get_git_ref(f"heads/{branch}")
                current = ref.object.sha
            except GithubException as exc:
                if exc.status == 404:
                    raise self._retrier.translate(
                        doing, exc, hint=f"there is no branch {branch} to move") from exc
                raise
            if current == sha:  # an attempt that failed after GitHub applied it
                return
            try:
                ref.edit(sha, force=False)  # never forced: a commit pushed meanwhile stays
            except GithubException as exc:
                if mentions(exc, 422, "fast forward"):
                    raise self._retrier.forge_error(
                        f"{doing} failed: a commit was pushed to {branch} meanwhile "
                        f"(GitHub: the update is not a fast forward)", status=422,
                        hint=f"{branch} was left as it is, with that commit on it; re-run "
                        "to build on top of it") from exc
                raise

        self._call(doing, move)

    def read_commit(self, sha: str) -> Commit:
        def fetch() -> Commit:
            found = self._repository().get_git_commit(sha)
            return Commit(sha=found.sha, message=found.message, tree_sha=found.tree.sha)

        return self._call(f"reading the commit {sha[:7]}", fetch)

    def read_ref(self, ref: str) -> Commit | None:
        def fetch() -> Commit | None:
            sha = self._ref_target(ref)
            if sha is None:
                return None
            found = self._repository().get_git_commit(sha)
            return Commit(sha=found.sha, message=found.message, tree_sha=found.tree.sha)

        return self._call(f"reading {ref}", fetch)

    def create_ref(self, ref: str, sha: str) -> bool:
        def create() -> bool:
            try:
                self._repository().create_git_ref(ref, sha)
            except GithubException as exc:
                if mentions(exc, 422, "reference already exists"):
                    return self._ref_target(ref) == sha  # ours, from an attempt that failed
                raise
            return True

        return self._call(f"creating {ref}", create,
                          reconcile=lambda: True if self._ref_target(ref) == sha else None)

    def advance_ref(self, ref: str, sha: str) -> bool:
        def advance() -> bool:
            repo = self._repository()
            try:
                repo.requester.requestJsonAndCheck(
                    "PATCH", f"{repo.url}/git/{records.ref_path(ref)}", input={"sha": sha,
                                                                      "force": False})
            except GithubException as exc:
                if mentions(exc, 422, "fast forward") or mentions(
                        exc, 422, "reference does not exist"):
                    return self._ref_target(ref) == sha  # ours, from an attempt that failed
                raise
            return True

        return self._call(f"moving {ref}", advance)

    def delete_ref(self, ref: str, sha: str) -> bool:
        def delete() -> bool:
            current = self._ref_target(ref)
            if current is None:
                return True
            if current != sha:
                return False  # someone moved it meanwhile: theirs now
            repo = self._repository()
            try:
                repo.requester.requestJsonAndCheck("DELETE",
                                                   f"{repo.url}/git/{records.ref_path(ref)}")
            except GithubException as exc:
                if not mentions(exc, 422, "reference does not exist"):
                    raise
            return True

        return self._call(f"deleting {ref}", delete)

    def create_pull_request(self, *, head_branch: str, base_branch: str, title: str,
                            body: str, draft: bool) -> PullRequest:
        doing = f"creating the pull request for {head_branch}"

        def create() -> PullRequest:
            try:
                return records.pull(self._repository().create_pull(
                    base=base_branch, head=head_branch, title=title, body=body, draft=draft))
            except GithubException as exc:
                if mentions(exc, 422, "a pull request already exists"):
                    existing = self._open_pull(head_branch)
                    if existing is not None:
                        return existing
                if draft and mentions(exc, 422, "draft pull requests are not supported"):
                    error = self._retrier.translate(
                        doing, exc, hint="GitHub Free and Pro have draft pull requests in "
                        "public repositories only; set draft-on-failure: false, or move the "
                        "repository to a plan with drafts in private repositories")
                    raise DraftsRefused(error.message, status=422, hint=error.hint) from exc
                raise

        return self._call(doing, create, reconcile=lambda: self._open_pull(head_branch))

    def edit_pull_request(self, number: int, *, title: str, body: str) -> PullRequest:
        def edit() -> PullRequest:
            pull = self._repository().get_pull(number)
            pull.edit(title=title, body=body)  # fills the object from GitHub's answer
            return records.pull(pull)

        return self._call(f"editing pull request #{number}", edit)

    def find_check_run(self, head_sha: str, name: str, *, external_id: str | None = None
                       ) -> CheckRun | None:
        return self._call(f"looking for the check run {name!r} on {head_sha[:7]}",
                          lambda: self._check_run(head_sha, name, external_id))

    def create_check_run(self, head_sha: str, output: CheckRunOutput) -> CheckRun:
        records.fits_one_request(output)

        def create() -> CheckRun:
            made = self._repository().create_check_run(
                name=output.name, head_sha=head_sha, external_id=output.external_id,
                conclusion=output.conclusion, completed_at=self._now(),
                output=records.output(output), details_url=output.details_url or NotSet)
            return records.check(made)

        return self._call(f"creating the check run {output.name!r} on {head_sha[:7]}",
                          create, reconcile=lambda: self._check_run(head_sha, output.name,
                                                                    output.external_id))

    def update_check_run(self, check: CheckRun, output: CheckRunOutput) -> CheckRun:
        records.fits_one_request(output)
        expected = check.annotations_count + len(output.annotations)

        def update() -> CheckRun:
            run = self._repository().get_check_run(check.id)  # lazy: the PATCH is the request
            run.edit(name=output.name, external_id=output.external_id,
                     conclusion=output.conclusion, completed_at=self._now(),
                     output=records.output(output), details_url=output.details_url or NotSet)
            return records.check(run)

        def already_made() -> CheckRun | None:
            # Setting fields twice is harmless; appending a batch twice is not.
            seen = records.check(self._repository().get_check_run(check.id))
            return seen if output.annotations and seen.annotations_count >= expected else None

        return self._call(f"updating the check run {output.name!r} on {check.head_sha[:7]}",
                          update, reconcile=already_made)

    # -- helpers (each runs inside a caller's _call) -----------------------------------------

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self._clock(), UTC).replace(microsecond=0)

    def _check_run(self, head_sha: str, name: str, external_id: str | None
                   ) -> CheckRun | None:
        # filter=all: "latest" would hide an older run of ours behind a newer one of the
        # same name, and a retried create is looked up by its external_id.
        runs = self._repository().get_commit(head_sha).get_check_runs(check_name=name,
                                                                       filter="all")
        found = [run for run in runs if run.name == name
                 and (external_id is None or run.external_id == external_id)]
        return records.check(max(found, key=lambda run: run.id)) if found else None

    def _call(self, doing: str, action: Callable[[], T], *,
              reconcile: Callable[[], T | None] | None = None) -> T:
        return self._retrier.call(doing, action, reconcile=reconcile)

    def _repository(self) -> Repository:
        """The repository, fetched on first use: its 404 is the one that means a wrong
        GITHUB_REPOSITORY (or a token that cannot see it), which no later 404 can tell."""
        if not self._repo_seen:
            try:
                self._repo.complete()
            except GithubException as exc:
                if exc.status == 404:
                    raise self._retrier.translate(
                        f"opening the repository {self._name}", exc,
                        hint=f"check GITHUB_REPOSITORY ({self._name}) and that the token can "
                        "see the repository (a private one needs a token with access)"
                    ) from exc
                raise
            self._repo_seen = True
        return self._repo

    def _newest_comment(self, number: int, wanted: Callable[[IssueComment], bool]
                        ) -> Comment | None:
        """Reads every page: a long thread keeps our comment anywhere in it."""
        comments = self._repository().get_issue(number).get_comments()
        matches = [c for c in comments if wanted(c)]
        return records.comment(max(matches, key=lambda c: c.id)) if matches else None

    def _open_pull(self, head_branch: str) -> PullRequest | None:
        pulls = self._repository().get_pulls(state="open", head=f"{self._owner}:{head_branch}")
        for pull in pulls:
            return records.pull(pull)
        return None

    def _ref_sha(self, branch: str) -> str | None:
        return self._ref_target(f"refs/heads/{branch}")

    def _ref_target(self, ref: str) -> str | None:
        repo = self._repository()
        try:
            _, data = repo.requester.requestJsonAndCheck(
                "GET", f"{repo.url}/git/{records.ref_path(ref).replace('refs/', 'ref/', 1)}")
        except GithubException as exc:
            if exc.status == 404:
                return None
            raise
        target = data.get("object") if isinstance(data, Mapping) else None
        sha = target.get("sha") if isinstance(target, Mapping) else None
        return sha if isinstance(sha, str) else None

    def _blob(self, text: str) -> str:
        return self._repository().create_git_blob(text, "utf-8").sha

    def _file_text(self, path: str, ref: str) -> str | None:
        repo = self._repository()
        try:
            found = repo.get_contents(path, ref=ref)
        except GithubException as exc:
            if exc.status == 404:  # no such path, or no such ref
                return None
            raise
        if isinstance(found, list) or found.type != "file":
            return None  # a directory, symlink or submodule is not a file's text
        if found.encoding == "base64":
            data = found.decoded_content
        else:  # over 1 MB the contents API leaves the content out: the blob has it
            data = base64.b64decode(repo.get_git_blob(found.sha).content)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self._retrier.forge_error(
                f"reading {path} at {ref} failed: it is not UTF-8 text",
                hint="only text files are read back") from exc
