"""The fake's state: users, tokens, repositories with their issues, pull requests, comments,
labels and collaborators. Git data (refs, commits, trees) lives in each repository's bare git
repository, never here, so a push made with the git CLI is seen at once.

One re-entrant lock guards all of it; the HTTP handler holds it for the whole of a request, so
parallel calls from the client see GitHub-like atomic operations.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from .git_store import GitStore

BOT_LOGIN = "github-actions[bot]"
BOT_ID = 41898282  # the real id: GitHub's noreply address for the bot embeds it
ROLES = ("admin", "maintain", "write", "triage", "read", "none")
# GitHub's legacy `permission` field folds the finer roles into four values.
LEGACY_PERMISSION = {"admin": "admin", "maintain": "write", "write": "write", "triage": "read",
                     "read": "read", "none": "none"}
_RANK = {role: len(ROLES) - i for i, role in enumerate(ROLES)}


@dataclass
class User:
    login: str
    id: int
    type: str = "User"  # "User", "Bot" or "Organization"
    name: str | None = None
    email: str | None = None

    @property
    def noreply_email(self) -> str:
        return f"{self.id}+{self.login}@users.noreply.github.com"

    @property
    def commit_name(self) -> str:
        return self.name or self.login

    @property
    def commit_email(self) -> str:
        return self.email or self.noreply_email


@dataclass(frozen=True)
class GitHubApp:
    """A GitHub App installed on the stand-in's repositories. Its installation token writes
    as the bot account `<slug>[bot]` (a user of type Bot), which GET /user refuses, and its
    comments carry the app as `performed_via_github_app`."""

    id: int
    slug: str
    name: str
    owner: str  # the login of the account that registered the app
    created_at: datetime

    @property
    def bot_login(self) -> str:
        return f"{self.slug}[bot]"


@dataclass(frozen=True)
class Token:
    value: str
    login: str
    access: str = "write"  # "write", or "read" as a fork PR's GITHUB_TOKEN gets
    # Scopes a workflow's `permissions:` block left out, e.g. {"checks"}: writes there are
    # refused with 403, as for a GITHUB_TOKEN without `checks: write`.
    without: frozenset[str] = frozenset()

    @property
    def can_write(self) -> bool:
        return self.access == "write"


@dataclass
class Label:
    id: int
    name: str
    color: str = "ededed"
    description: str | None = None
    default: bool = False


@dataclass
class Comment:
    id: int
    number: int
    user: str
    body: str
    created_at: datetime
    updated_at: datetime


@dataclass
class PullInfo:
    id: int  # a PR has its own id, apart from its issue's
    head_repo: str  # full name; differs from the base repository for a fork's PR
    head_ref: str
    base_ref: str
    draft: bool = False
    maintainer_can_modify: bool = False
    merged: bool = False
    merged_at: datetime | None = None
    merge_commit_sha: str | None = None
    # GitHub stops following the branches once a PR is closed: these freeze the last shas.
    frozen_head_sha: str | None = None
    frozen_base_sha: str | None = None


@dataclass
class CheckRun:
    """One check run on a commit, as the Checks API keeps it (annotations appended)."""

    id: int
    suite_id: int
    head_sha: str
    name: str
    maker: str  # the login of the token that made it: its app is shown
    status: str
    conclusion: str | None
    started_at: datetime
    completed_at: datetime | None
    details_url: str | None = None
    external_id: str = ""
    title: str | None = None
    summary: str | None = None
    text: str | None = None
    annotations: list[dict[str, object]] = field(default_factory=list)


@dataclass
class Issue:
    number: int
    id: int
    title: str
    body: str | None
    user: str
    created_at: datetime
    updated_at: datetime
    state: str = "open"
    state_reason: str | None = None
    labels: list[str] = field(default_factory=list)  # names, as spelled on the repository
    assignees: list[str] = field(default_factory=list)
    closed_at: datetime | None = None
    closed_by: str | None = None
    locked: bool = False
    pull: PullInfo | None = None


@dataclass
class Repo:
    full_name: str
    id: int
    private: bool
    default_branch: str
    git: GitStore
    created_at: datetime
    description: str | None = None
    fork_of: str | None = None
    labels: dict[str, Label] = field(default_factory=dict)  # keyed by lower-cased name
    issues: dict[int, Issue] = field(default_factory=dict)
    comments: dict[int, Comment] = field(default_factory=dict)
    collaborators: dict[str, str] = field(default_factory=dict)  # lower login → role
    check_runs: dict[int, CheckRun] = field(default_factory=dict)
    check_suites: dict[tuple[str, str], int] = field(default_factory=dict)  # (sha, maker)
    next_number: int = 1
    plan: str = "free"  # the owner's GitHub plan: free, pro, team or enterprise
    protected: set[str] = field(default_factory=set)  # branches with a protection rule

    @property
    def drafts_supported(self) -> bool:
        """Draft pull requests: every public repository; private ones on Team and up."""
        return not self.private or self.plan in ("team", "enterprise")

    @property
    def owner(self) -> str:
        return self.full_name.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.full_name.split("/", 1)[1]

    def label(self, name: str) -> Label | None:
        return self.labels.get(name.lower())  # GitHub label names are case-insensitive

    def role_of(self, login: str) -> str | None:
        if login.lower() == self.owner.lower():
            return "admin"
        return self.collaborators.get(login.lower())

    def association(self, login: str) -> str:
        if login.lower() == self.owner.lower():
            return "OWNER"
        role = self.collaborators.get(login.lower())
        return "COLLABORATOR" if role not in (None, "none") else "NONE"


@dataclass
class RateBucket:
    limit: int
    used: int
    reset: int  # epoch seconds

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.used)


class State:
    """Everything the fake knows, behind ``lock``. Methods here assume the lock is held."""

    def __init__(self, root: Path, *, clock: Callable[[], datetime] | None = None,
                 rate_limit: int = 5000) -> None:
        self.root = root
        self.lock = threading.RLock()
        self.clock = clock or (lambda: datetime.now(UTC).replace(microsecond=0))
        self.users: dict[str, User] = {}
        self.tokens: dict[str, Token] = {}
        self.repos: dict[str, Repo] = {}
        self.apps: dict[str, GitHubApp] = {}  # keyed by the lower-cased bot login
        self.rate_limit = rate_limit
        self.buckets: dict[str, RateBucket] = {}
        # One sequence for every id: ids stay unique across kinds, as on GitHub.
        self._ids = itertools.count(1_000_001)
        self.add_user(BOT_LOGIN, type="Bot", user_id=BOT_ID, name="github-actions[bot]")

    def now(self) -> datetime:
        return self.clock()

    def next_id(self) -> int:
        return next(self._ids)

    # -- users and tokens ------------------------------------------------------------------

    def add_user(self, login: str, *, type: str = "User", user_id: int | None = None,
                 name: str | None = None, email: str | None = None) -> User:
        existing = self.users.get(login.lower())
        if existing is not None:
            return existing
        user = User(login, user_id or self.next_id(), type, name, email)
        self.users[login.lower()] = user
        return user

    def add_app(self, slug: str, *, name: str | None = None, owner: str = "octo-org"
                ) -> GitHubApp:
        existing = self.apps.get(f"{slug}[bot]".lower())
        if existing is not None:
            return existing
        app = GitHubApp(self.next_id(), slug, name or slug, self.user(owner).login, self.now())
        self.add_user(app.bot_login, type="Bot", name=app.bot_login)
        self.apps[app.bot_login.lower()] = app
        return app

    def app_of(self, login: str) -> GitHubApp | None:
        """The app a bot account belongs to (None for people and the Actions bot)."""
        return self.apps.get(login.lower())

    def user(self, login: str) -> User:
        """The user with that login, created on first mention like a seeded account."""
        return self.users.get(login.lower()) or self.add_user(login)

    def user_by_email(self, email: str) -> User | None:
        """Which account GitHub would link a commit to, from its author or committer email."""
        lowered = email.lower()
        for user in self.users.values():
            if lowered in {user.commit_email.lower(), user.noreply_email.lower()}:
                return user
        return None

    def bucket(self, login: str | None) -> RateBucket:
        key = (login or "").lower()
        bucket = self.buckets.get(key)
        now = int(time.time())
        if bucket is None or bucket.reset <= now:
            # Unauthenticated callers get GitHub's 60 an hour.
            bucket = RateBucket(self.rate_limit if login else 60, 0, now + 3600)
            self.buckets[key] = bucket
        return bucket

    # -- repositories ----------------------------------------------------------------------

    def repo(self, full_name: str) -> Repo | None:
        return self.repos.get(full_name.lower())  # owner and name are case-insensitive

    def open_issue(self, repo: Repo, title: str, body: str | None, user: str) -> Issue:
        """A new issue, or the issue half of a new PR: both share one number sequence."""
        now = self.now()
        issue = Issue(repo.next_number, self.next_id(), title, body, self.user(user).login,
                      now, now)
        repo.issues[issue.number] = issue
        repo.next_number += 1
        return issue

    def effective_role(self, repo: Repo, token: Token) -> str:
        """The role behind the `permissions` GitHub shows this token on the repository."""
        user = self.user(token.login)
        role = repo.role_of(user.login)
        if role is None:
            role = "write" if user.type == "Bot" else ("none" if repo.private else "read")
        if not token.can_write and _RANK[role] > _RANK["read"]:
            role = "read"
        return role

    def permissions(self, repo: Repo, token: Token) -> dict[str, bool]:
        return role_permissions(self.effective_role(repo, token))


def role_permissions(role: str) -> dict[str, bool]:
    rank = _RANK.get(role, 0)
    return {"admin": rank >= _RANK["admin"], "maintain": rank >= _RANK["maintain"],
            "push": rank >= _RANK["write"], "triage": rank >= _RANK["triage"],
            "pull": rank >= _RANK["read"]}
