"""``FakeGitHub``: the public face of the stand-in. Start it, seed it, script faults, then
read back what the client did, from the request log and from the state (git included)."""

from __future__ import annotations

import copy
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import pulls
from .app import App, HTTPServer
from .events import event_payload
from .faults import Fault, FaultBook, RecordedRequest, primary_rate_limit, secondary_rate_limit
from .git_store import GitStore, Ident, TreeEdit
from .model import BOT_LOGIN, ROLES, CheckRun, Comment, Issue, Label, Repo, State, Token, User
from .routes_issues import add_comment, add_label, attach_labels, set_state
from .routing import Links

PathPattern = str | re.Pattern[str]
_ZERO = "0" * 40


@dataclass(frozen=True)
class PullSnapshot:
    number: int
    title: str
    body: str | None
    user: str
    state: str
    head: str  # "owner:branch"
    base: str
    head_sha: str
    base_sha: str
    draft: bool
    labels: tuple[str, ...]


class FakeGitHub:
    """GitHub's REST API on 127.0.0.1 for PyGithub, backed by bare git repositories.

    ``root`` is a scratch folder (a test's tmp_path) that receives ``<owner>/<name>.git``.
    Use as a context manager, or call start()/stop(). Requests are answered under
    ``api_prefix`` (GitHub Enterprise's "/api/v3", as in ``api_url``) and at the bare root.
    """

    def __init__(self, root: Path, *, host: str = "127.0.0.1", port: int = 0,
                 api_prefix: str = "/api/v3", rate_limit: int = 5000) -> None:
        self.root = root
        self.host = host
        self._port = port
        self.state = State(root, rate_limit=rate_limit)
        self._faults = FaultBook()
        self._app = App(self.state, self._faults, api_prefix.rstrip("/"))
        self._server: HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> FakeGitHub:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self._server = HTTPServer((self.host, self._port), self._app)
        # A short poll interval: shutdown() waits up to one interval, in every test.
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.02}, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeGitHub is not started")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The bare root, http://127.0.0.1:<port> (PyGithub's base_url works with it too)."""
        return f"http://{self.host}:{self.port}"

    @property
    def api_url(self) -> str:
        """What to pass as GITHUB_API_URL or as PyGithub's base_url."""
        return f"{self.url}{self._app.api_prefix}"

    @property
    def errors(self) -> list[str]:
        """Tracebacks of the fake's own failures (answered as 500); assert it stays empty."""
        return list(self._app.errors)

    # -- seeding -----------------------------------------------------------------------------

    def add_user(self, login: str, *, type: str = "User", name: str | None = None,
                 email: str | None = None) -> User:
        with self.state.lock:
            return copy.copy(self.state.add_user(login, type=type, name=name, email=email))

    def add_token(self, token: str, login: str = BOT_LOGIN, *, access: str = "write",
                  without: Iterable[str] = ()) -> Token:
        """A token for ``login`` (a user, or the Actions bot) with "write" or "read" access;
        ``without`` names scopes its workflow's `permissions:` left out (e.g. "checks")."""
        if access not in ("read", "write"):
            raise ValueError(f"access must be 'read' or 'write', not {access!r}")
        with self.state.lock:
            user = self.state.user(login)
            entry = Token(token, user.login, access, frozenset(without))
            self.state.tokens[token] = entry
            return entry

    def add_app(self, slug: str, token: str, *, access: str = "write",
                name: str | None = None) -> Token:
        """A GitHub App and an installation token of it: it writes as `<slug>[bot]` (type
        Bot), GET /user answers it 403, GraphQL's `viewer` names it, and its comments carry
        the app as `performed_via_github_app`."""
        with self.state.lock:
            app = self.state.add_app(slug, name=name)
        return self.add_token(token, app.bot_login, access=access)

    def add_repo(self, full_name: str, *, default_branch: str = "main", private: bool = False,
                 fork_of: str | None = None, description: str | None = None,
                 owner_type: str = "User", plan: str = "free",
                 files: Mapping[str, str | bytes] | None = None) -> Path:
        """A repository and its bare git repo; returns the bare repo's path.

        Without ``files`` it gets one commit with a README.md (``files={}`` leaves it empty,
        which GitHub answers with 409s). A fork starts with its parent's branches. ``plan``
        is the owner's GitHub plan: a private repository on free or pro refuses drafts.
        """
        owner, _, name = full_name.partition("/")
        if not owner or not name or "/" in name:
            raise ValueError(f"not an owner/name: {full_name!r}")
        with self.state.lock:
            if self.state.repo(full_name) is not None:
                raise ValueError(f"{full_name} exists")
            parent = self.state.repo(fork_of) if fork_of else None
            if fork_of and parent is None:
                raise ValueError(f"no repository {fork_of} to fork")
            self.state.add_user(owner, type=owner_type)
            path = self.root / owner / f"{name}.git"
            repo = Repo(full_name, self.state.next_id(), private, default_branch,
                        GitStore.init(path, default_branch), self.state.now(), description,
                        fork_of, plan=plan)
            self.state.repos[full_name.lower()] = repo
            if parent is not None:
                repo.git.fetch(parent.git.path, "refs/heads/*", "refs/heads/*")
            elif files is None or files:
                self.commit_files(full_name, default_branch,
                                  files or {"README.md": f"# {name}\n"}, message="Initial commit")
            return path

    def set_visibility(self, repo: str, *, private: bool, plan: str = "free") -> None:
        """Make a repository private or public, on its owner's plan (drafts depend on it)."""
        with self.state.lock:
            found = self._repo(repo)
            found.private, found.plan = private, plan

    def commit_files(self, repo: str, branch: str, files: Mapping[str, str | bytes | None], *,
                     message: str = "Update files", start_from: str | None = None,
                     author: str | None = None) -> str:
        """Commit ``files`` (None deletes a path) on ``branch``, created from ``start_from``
        (default: the default branch) if missing. Returns the new commit's sha."""
        with self.state.lock:
            r = self._repo(repo)
            existing = r.git.read_ref(f"refs/heads/{branch}")
            parent = existing
            if parent is None and not r.git.is_empty():
                parent = r.git.resolve_commit(start_from or r.default_branch)
            base_tree = r.git.read_commit(parent).tree if parent else None
            edits = [TreeEdit(path, "100644", "blob", None,
                              data.encode() if isinstance(data, str) else data)
                     for path, data in files.items()]
            tree = r.git.build_tree(base_tree, edits)
            who = self.state.user(author or r.owner)
            ident = Ident(who.commit_name, who.commit_email, self.state.now())
            sha = r.git.write_commit(tree, [parent] if parent else [], message, ident, ident)
            r.git.set_ref(f"refs/heads/{branch}", sha, existing or _ZERO)
            return sha

    def protect_branch(self, repo: str, branch: str) -> None:
        """Give ``branch`` a protection rule (GET branches/{b} then says protected)."""
        with self.state.lock:
            self._repo(repo).protected.add(branch)

    def add_branch(self, repo: str, branch: str, *, from_ref: str | None = None,
                   files: Mapping[str, str | bytes | None] | None = None,
                   message: str = "Update files") -> str:
        """A new branch at ``from_ref`` (default branch), with ``files`` committed on top."""
        with self.state.lock:
            r = self._repo(repo)
            if r.git.read_ref(f"refs/heads/{branch}") is not None:
                raise ValueError(f"branch {branch} exists in {repo}")
            start = r.git.resolve_commit(from_ref or r.default_branch)
            if start is None:
                raise ValueError(f"no commit {from_ref or r.default_branch} in {repo}")
            r.git.set_ref(f"refs/heads/{branch}", start, _ZERO)
            if files:
                return self.commit_files(repo, branch, files, message=message)
            return start

    def add_collaborator(self, repo: str, login: str, role: str = "write") -> None:
        if role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, not {role!r}")
        with self.state.lock:
            self._repo(repo).collaborators[self.state.user(login).login.lower()] = role

    def add_issue(self, repo: str, title: str, body: str | None = None, *,
                  user: str = "octocat", labels: Iterable[str] = ()) -> int:
        with self.state.lock:
            r = self._repo(repo)
            issue = self.state.open_issue(r, title, body, user)
            attach_labels(self.state, r, issue, list(labels))
            return issue.number

    def edit_issue(self, repo: str, number: int, *, body: str) -> None:
        """The issue's author edits its text (as anyone may edit their own issue)."""
        with self.state.lock:
            issue = self._issue(self._repo(repo), number)
            issue.body, issue.updated_at = body, self.state.now()

    def add_comment(self, repo: str, number: int, body: str, *, user: str = "octocat") -> int:
        with self.state.lock:
            r = self._repo(repo)
            return add_comment(self.state, r, self._issue(r, number), user, body).id

    def add_label(self, repo: str, name: str, *, color: str = "ededed",
                  description: str | None = None) -> None:
        with self.state.lock:
            r = self._repo(repo)
            if r.label(name) is None:
                add_label(self.state, r, name, color, description)

    def add_pull(self, repo: str, head: str, *, base: str | None = None, title: str = "A PR",
                 body: str | None = None, user: str = "octocat", draft: bool = False) -> int:
        """An open PR, with the same checks as POST pulls (raises ApiError on a 422)."""
        with self.state.lock:
            r = self._repo(repo)
            issue = pulls.open_pull(self.state, r, user, head=head, base=base or r.default_branch,
                                    title=title, body=body, draft=draft)
            return issue.number

    def close_pull(self, repo: str, number: int, *, by: str = "octocat") -> None:
        """Close a PR as PATCH pulls/{n} {"state": "closed"} does."""
        with self.state.lock:
            r = self._repo(repo)
            set_state(self.state, r, self._issue(r, number), "closed", by, None)

    def set_rate_limit(self, login: str, *, limit: int | None = None,
                       remaining: int | None = None, reset: int | None = None) -> None:
        """Shape ``login``'s core bucket; a bucket at 0 answers GitHub's primary 403."""
        with self.state.lock:
            bucket = self.state.bucket(login)
            if limit is not None:
                bucket.limit = limit
            if remaining is not None:
                bucket.used = max(0, bucket.limit - remaining)
            if reset is not None:
                bucket.reset = reset

    def event(self, name: str, repo: str, **details: Any) -> dict[str, Any]:
        """A webhook payload for ``name`` (issues, issue_comment, pull_request,
        workflow_dispatch) from the current state, as $GITHUB_EVENT_PATH would hold it.
        ``details``: action, number, comment_id, sender, label, inputs, ref."""
        with self.state.lock:
            links = Links(self.url, self._app.api_prefix)
            return event_payload(self.state, links, name, self._repo(repo), **details)

    # -- faults ------------------------------------------------------------------------------

    def fail(self, method: str, path: PathPattern, status: int, *, body: Any = None,
             headers: Mapping[str, str] | None = None, times: int | None = 1,
             after_apply: bool = False, delay: float = 0.0) -> Fault:
        """Answer the next ``times`` matching requests with ``status`` (GitHub's body for it
        unless ``body`` is given). ``after_apply``: do the request first, then fail it."""
        return self._faults.add(Fault(method, path, status, body, dict(headers or {}), times,
                                      after_apply, delay))

    def fail_server_error(self, method: str, path: PathPattern, *, status: int = 500,
                          times: int | None = 1, after_apply: bool = False) -> Fault:
        return self.fail(method, path, status, times=times, after_apply=after_apply)

    def fail_rate_limit(self, method: str = "*", path: PathPattern = "*", *, status: int = 403,
                        reset_in: int = 60, times: int | None = 1) -> Fault:
        """The primary rate limit: 403 (or 429) with remaining 0 and the reset time."""
        return self._faults.add(primary_rate_limit(method, path, status=status,
                                                   reset_in=reset_in, times=times))

    def fail_secondary_rate_limit(self, method: str = "*", path: PathPattern = "*", *,
                                  retry_after: int | None = 1, times: int | None = 1) -> Fault:
        return self._faults.add(secondary_rate_limit(method, path, retry_after=retry_after,
                                                     times=times))

    def delay(self, method: str, path: PathPattern, seconds: float, *,
              times: int | None = 1) -> Fault:
        """Sleep before answering (normally) the next ``times`` matching requests."""
        return self._faults.add(Fault(method, path, None, times=times, delay=seconds))

    def hang_up(self, method: str, path: PathPattern, *, times: int | None = 1,
                after_apply: bool = False) -> Fault:
        """Close the connection without an answer (after doing the request if asked)."""
        return self._faults.add(Fault(method, path, None, times=times, after_apply=after_apply,
                                      hang_up=True))

    def clear_faults(self) -> None:
        self._faults.clear()

    @property
    def pending_faults(self) -> list[Fault]:
        return self._faults.pending()

    # -- observation -------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request so far, oldest first (copies; tokens redacted)."""
        return self._faults.requests()

    def requests_to(self, method: str, path: PathPattern) -> list[RecordedRequest]:
        probe = Fault(method, path, None)
        return [r for r in self.requests if probe.matches(r.method, r.path)]

    def clear_requests(self) -> None:
        self._faults.forget_requests()

    def repo_path(self, repo: str) -> Path:
        with self.state.lock:
            return self._repo(repo).git.path

    def git(self, repo: str, *args: str) -> str:
        """Run git in the bare repo, e.g. ``git("o/r", "show", "branch:path")``."""
        return self._repo(repo).git.git(*args).decode()

    def refs(self, repo: str, prefix: str = "refs/") -> dict[str, str]:
        with self.state.lock:
            return self._repo(repo).git.refs(prefix)

    def read_file(self, repo: str, ref: str, path: str) -> bytes | None:
        with self.state.lock:
            r = self._repo(repo)
            commit = r.git.resolve_commit(ref)
            if commit is None:
                return None
            found = r.git.ls_tree(r.git.read_commit(commit).tree, path=path)
            entry = next((e for e in found if e.path == path and e.type == "blob"), None)
            return r.git.read_blob(entry.sha) if entry else None

    def issue(self, repo: str, number: int) -> Issue:
        with self.state.lock:
            return copy.deepcopy(self._issue(self._repo(repo), number))

    def comments(self, repo: str, number: int) -> list[Comment]:
        with self.state.lock:
            found = [c for c in self._repo(repo).comments.values() if c.number == number]
            return [copy.copy(c) for c in sorted(found, key=lambda c: c.id)]

    def labels(self, repo: str, number: int | None = None) -> list[str]:
        """Label names on the repository, or on one issue/PR."""
        with self.state.lock:
            r = self._repo(repo)
            if number is not None:
                return list(self._issue(r, number).labels)
            return sorted(label.name for label in r.labels.values())

    def check_runs(self, repo: str, sha: str | None = None) -> list[CheckRun]:
        """Check runs on the repository (on one commit when ``sha`` is given), oldest first."""
        with self.state.lock:
            found = [r for r in self._repo(repo).check_runs.values()
                     if sha is None or r.head_sha == sha]
            return [copy.deepcopy(r) for r in sorted(found, key=lambda r: r.id)]

    def label(self, repo: str, name: str) -> Label | None:
        with self.state.lock:
            found = self._repo(repo).label(name)
            return copy.copy(found) if found else None

    def pulls(self, repo: str, state: str = "all") -> list[PullSnapshot]:
        with self.state.lock:
            r = self._repo(repo)
            return [self._snapshot(r, i) for i in sorted(r.issues.values(), key=lambda i: i.number)
                    if i.pull is not None and state in ("all", i.state)]

    def _snapshot(self, repo: Repo, issue: Issue) -> PullSnapshot:
        pull = issue.pull
        assert pull is not None
        return PullSnapshot(issue.number, issue.title, issue.body, issue.user, issue.state,
                            f"{pull.head_repo.split('/')[0]}:{pull.head_ref}", pull.base_ref,
                            pulls.head_sha(self.state, repo, issue), pulls.base_sha(repo, issue),
                            pull.draft, tuple(issue.labels))

    def _repo(self, full_name: str) -> Repo:
        repo = self.state.repo(full_name)
        if repo is None:
            raise KeyError(f"no repository {full_name} (add_repo first)")
        return repo

    @staticmethod
    def _issue(repo: Repo, number: int) -> Issue:
        if number not in repo.issues:
            raise KeyError(f"no issue or PR #{number} in {repo.full_name}")
        return repo.issues[number]
