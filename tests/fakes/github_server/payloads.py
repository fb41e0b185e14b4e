"""JSON bodies with GitHub's field names, modelled on recorded api.github.com responses.

Every ``url`` points back at the fake (through :class:`Links`), because PyGithub completes
lazy objects by GETting their ``url``. Fields PyGithub reads but the fake has no model for
(milestones, reactions, reviews) carry GitHub's empty values.
"""

from __future__ import annotations

import base64
import textwrap
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, quote_plus

from .git_store import CommitInfo, FileChange, Ident, TreeEntry
from .model import BOT_LOGIN, Comment, GitHubApp, Issue, Label, Repo, State, Token, User
from .routing import Links

JSON = dict[str, Any]
# The GitHub Actions app, as performed_via_github_app shows it on the bot's comments.
_ACTIONS_APP_ID = 15368


def iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def node_id(kind: str, key: object) -> str:
    # GitHub's legacy global ids are base64 of "<len>:<Type><id>"; clients treat them as opaque.
    raw = f"{len(kind):02d}:{kind}{key}"
    return base64.b64encode(raw.encode()).decode()


def wrapped_base64(data: bytes) -> str:
    """Blob and contents bodies carry base64 broken into 60-character lines, like GitHub's."""
    encoded = base64.b64encode(data).decode()
    return "\n".join(textwrap.wrap(encoded, 60)) + "\n" if encoded else ""


def user_json(links: Links, user: User) -> JSON:
    api = f"{links.api}/users/{quote(user.login)}"
    if user.type == "Bot":
        html = f"{links.root}/apps/{user.login.removesuffix('[bot]')}"
    else:
        html = f"{links.root}/{user.login}"
    return {
        "login": user.login, "id": user.id, "node_id": node_id(user.type, user.id),
        "avatar_url": f"https://avatars.githubusercontent.com/u/{user.id}?v=4",
        "gravatar_id": "", "url": api, "html_url": html,
        "followers_url": f"{api}/followers", "following_url": f"{api}/following{{/other_user}}",
        "gists_url": f"{api}/gists{{/gist_id}}", "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
        "subscriptions_url": f"{api}/subscriptions", "organizations_url": f"{api}/orgs",
        "repos_url": f"{api}/repos", "events_url": f"{api}/events{{/privacy}}",
        "received_events_url": f"{api}/received_events", "type": user.type,
        "user_view_type": "public", "site_admin": False,
    }


def repo_json(state: State, links: Links, repo: Repo, token: Token | None, *,
              with_parent: bool = True) -> JSON:
    api = links.repo_api(repo.full_name)
    html = links.repo_html(repo.full_name)
    open_issues = sum(1 for i in repo.issues.values() if i.state == "open")
    body: JSON = {
        "id": repo.id, "node_id": node_id("Repository", repo.id), "name": repo.name,
        "full_name": repo.full_name, "private": repo.private,
        "owner": user_json(links, state.user(repo.owner)), "html_url": html,
        "description": repo.description, "fork": repo.fork_of is not None, "url": api,
        **_repo_api_urls(api),
        "created_at": iso(repo.created_at), "updated_at": iso(repo.created_at),
        "pushed_at": iso(repo.created_at), "git_url": f"git://{links.root.split('://')[-1]}/"
        f"{repo.full_name}.git", "ssh_url": f"git@{links.root.split('://')[-1]}:"
        f"{repo.full_name}.git", "clone_url": f"{html}.git", "svn_url": html, "homepage": None,
        "size": 0, "stargazers_count": 0, "watchers_count": 0, "language": "Python",
        "has_issues": True, "has_projects": True, "has_downloads": True, "has_wiki": False,
        "has_pages": False, "has_discussions": False, "forks_count": 0, "mirror_url": None,
        "archived": False, "disabled": False, "open_issues_count": open_issues,
        "license": None, "allow_forking": True, "is_template": False,
        "web_commit_signoff_required": False, "topics": [],
        "visibility": "private" if repo.private else "public", "forks": 0,
        "open_issues": open_issues, "watchers": 0, "default_branch": repo.default_branch,
        "allow_squash_merge": True, "allow_merge_commit": True, "allow_rebase_merge": True,
        "allow_auto_merge": False, "delete_branch_on_merge": False,
        "allow_update_branch": False, "network_count": 0, "subscribers_count": 0,
    }
    if token is not None:
        body["permissions"] = state.permissions(repo, token)
    parent = state.repo(repo.fork_of) if repo.fork_of else None
    if parent is not None and with_parent:
        body["parent"] = repo_json(state, links, parent, token, with_parent=False)
        body["source"] = body["parent"]
    return body


def _repo_api_urls(api: str) -> JSON:
    names = {
        "forks": "/forks", "keys": "/keys{/key_id}", "collaborators":
        "/collaborators{/collaborator}", "teams": "/teams", "hooks": "/hooks",
        "issue_events": "/issues/events{/number}", "events": "/events",
        "assignees": "/assignees{/user}", "branches": "/branches{/branch}", "tags": "/tags",
        "blobs": "/git/blobs{/sha}", "git_tags": "/git/tags{/sha}", "git_refs": "/git/refs{/sha}",
        "trees": "/git/trees{/sha}", "statuses": "/statuses/{sha}", "languages": "/languages",
        "stargazers": "/stargazers", "contributors": "/contributors",
        "subscribers": "/subscribers", "subscription": "/subscription",
        "commits": "/commits{/sha}", "git_commits": "/git/commits{/sha}",
        "comments": "/comments{/number}", "issue_comment": "/issues/comments{/number}",
        "contents": "/contents/{+path}", "compare": "/compare/{base}...{head}",
        "merges": "/merges", "archive": "/{archive_format}{/ref}", "downloads": "/downloads",
        "issues": "/issues{/number}", "pulls": "/pulls{/number}",
        "milestones": "/milestones{/number}",
        "notifications": "/notifications{?since,all,participating}", "labels": "/labels{/name}",
        "releases": "/releases{/id}", "deployments": "/deployments",
    }
    return {f"{key}_url": f"{api}{suffix}" for key, suffix in names.items()}


def label_json(links: Links, repo: Repo, label: Label) -> JSON:
    # GitHub spells spaces in label urls as "+"; the fake decodes both spellings.
    return {"id": label.id, "node_id": node_id("Label", label.id),
            "url": f"{links.repo_api(repo.full_name)}/labels/{quote_plus(label.name)}",
            "name": label.name, "color": label.color, "default": label.default,
            "description": label.description}


def issue_labels_json(links: Links, repo: Repo, issue: Issue) -> list[JSON]:
    found = (repo.label(name) for name in issue.labels)
    return [label_json(links, repo, label) for label in found if label is not None]


def issue_json(state: State, links: Links, repo: Repo, issue: Issue) -> JSON:
    api = f"{links.repo_api(repo.full_name)}/issues/{issue.number}"
    kind = "pull" if issue.pull else "issues"
    html = f"{links.repo_html(repo.full_name)}/{kind}/{issue.number}"
    body: JSON = {
        "url": api, "repository_url": links.repo_api(repo.full_name),
        "labels_url": f"{api}/labels{{/name}}", "comments_url": f"{api}/comments",
        "events_url": f"{api}/events", "html_url": html, "id": issue.id,
        "node_id": node_id("PullRequest" if issue.pull else "Issue", issue.id),
        "number": issue.number, "title": issue.title,
        "user": user_json(links, state.user(issue.user)),
        "labels": issue_labels_json(links, repo, issue), "state": issue.state,
        "locked": issue.locked, **_assignees(state, links, issue), "milestone": None,
        "comments": sum(1 for c in repo.comments.values() if c.number == issue.number),
        "created_at": iso(issue.created_at), "updated_at": iso(issue.updated_at),
        "closed_at": iso(issue.closed_at), "author_association": repo.association(issue.user),
        "active_lock_reason": None, "body": issue.body,
        "closed_by": user_json(links, state.user(issue.closed_by)) if issue.closed_by else None,
        "reactions": _reactions(f"{api}/reactions"), "timeline_url": f"{api}/timeline",
        "performed_via_github_app": performed_via(state, links, state.user(issue.user)),
        "state_reason": issue.state_reason,
    }
    if issue.pull is not None:
        pulls_api = f"{links.repo_api(repo.full_name)}/pulls/{issue.number}"
        body["draft"] = issue.pull.draft
        body["pull_request"] = {"url": pulls_api, "html_url": html, "diff_url": f"{html}.diff",
                                "patch_url": f"{html}.patch",
                                "merged_at": iso(issue.pull.merged_at)}
    return body


def _assignees(state: State, links: Links, issue: Issue) -> JSON:
    people = [user_json(links, state.user(login)) for login in issue.assignees]
    return {"assignee": people[0] if people else None, "assignees": people}


def _reactions(url: str) -> JSON:
    return {"url": url, "total_count": 0, "+1": 0, "-1": 0, "laugh": 0, "hooray": 0,
            "confused": 0, "heart": 0, "rocket": 0, "eyes": 0}


def comment_json(state: State, links: Links, repo: Repo, comment: Comment) -> JSON:
    api = f"{links.repo_api(repo.full_name)}/issues/comments/{comment.id}"
    issue = repo.issues[comment.number]
    kind = "pull" if issue.pull else "issues"
    user = state.user(comment.user)
    return {
        "url": api,
        "html_url": f"{links.repo_html(repo.full_name)}/{kind}/{comment.number}"
                    f"#issuecomment-{comment.id}",
        "issue_url": f"{links.repo_api(repo.full_name)}/issues/{comment.number}",
        "id": comment.id, "node_id": node_id("IssueComment", comment.id),
        "user": user_json(links, user), "created_at": iso(comment.created_at),
        "updated_at": iso(comment.updated_at), "author_association":
        repo.association(comment.user), "body": comment.body,
        "reactions": _reactions(f"{api}/reactions"),
        "performed_via_github_app": performed_via(state, links, user),
    }


def performed_via(state: State, links: Links, user: User) -> JSON | None:
    """The app behind a bot's write: GitHub Actions for GITHUB_TOKEN, an installed app for
    its installation token; None for a person's."""
    if user.login == BOT_LOGIN:
        return _actions_app(state, links)
    app = state.app_of(user.login)
    return app_json(state, links, app) if app is not None else None


def app_json(state: State, links: Links, app: GitHubApp) -> JSON:
    """The `integration` schema of GitHub's OpenAPI description (required: id, node_id,
    owner, name, description, external_url, html_url, created_at, updated_at, permissions,
    events; slug and client_id besides)."""
    return {"id": app.id, "slug": app.slug, "client_id": f"Iv23li{app.id:014d}",
            "node_id": node_id("App", app.id), "owner": user_json(links, state.user(app.owner)),
            "name": app.name, "description": "", "external_url": f"https://{app.slug}.example",
            "html_url": f"{links.root}/apps/{app.slug}", "created_at": iso(app.created_at),
            "updated_at": iso(app.created_at),
            "permissions": {"checks": "write", "contents": "write", "issues": "write",
                            "metadata": "read", "pull_requests": "write"},
            "events": ["issues", "issue_comment", "pull_request"]}


def _actions_app(state: State, links: Links) -> JSON:
    return {"id": _ACTIONS_APP_ID, "slug": "github-actions",
            "node_id": node_id("App", _ACTIONS_APP_ID), "name": "GitHub Actions",
            "owner": user_json(links, state.user("github")), "description":
            "Automate your workflow from idea to production",
            "external_url": "https://help.github.com/en/actions",
            "html_url": f"{links.root}/apps/github-actions", "created_at":
            "2018-07-30T09:30:17Z", "updated_at": "2024-04-10T20:33:16Z", "permissions": {},
            "events": []}


# -- git data -------------------------------------------------------------------------------

def git_person(ident: Ident) -> JSON:
    return {"name": ident.name, "email": ident.email, "date": iso(ident.date)}


def _verification() -> JSON:
    return {"verified": False, "reason": "unsigned", "signature": None, "payload": None,
            "verified_at": None}


def git_commit_json(links: Links, repo: Repo, info: CommitInfo) -> JSON:
    api = links.repo_api(repo.full_name)
    return {
        "sha": info.sha, "node_id": node_id("Commit", f"{repo.id}:{info.sha}"),
        "url": f"{api}/git/commits/{info.sha}",
        "html_url": f"{links.repo_html(repo.full_name)}/commit/{info.sha}",
        "author": git_person(info.author), "committer": git_person(info.committer),
        "tree": {"sha": info.tree, "url": f"{api}/git/trees/{info.tree}"},
        "message": info.message, "parents": [_parent(links, repo, p) for p in info.parents],
        "verification": _verification(),
    }


def _parent(links: Links, repo: Repo, sha: str) -> JSON:
    return {"sha": sha, "url": f"{links.repo_api(repo.full_name)}/commits/{sha}",
            "html_url": f"{links.repo_html(repo.full_name)}/commit/{sha}"}


def commit_json(state: State, links: Links, repo: Repo, info: CommitInfo,
                files: list[FileChange] | None = None) -> JSON:
    """The REST commit (GET /commits/{ref}): git data plus the linked GitHub accounts."""
    api = links.repo_api(repo.full_name)
    git = git_commit_json(links, repo, info)
    inner = {key: git[key] for key in ("author", "committer", "message", "tree", "url")}
    author = state.user_by_email(info.author.email)
    committer = state.user_by_email(info.committer.email)
    body: JSON = {
        "sha": info.sha, "node_id": git["node_id"],
        "commit": {**inner, "comment_count": 0, "verification": _verification()},
        "url": f"{api}/commits/{info.sha}", "html_url": git["html_url"],
        "comments_url": f"{api}/commits/{info.sha}/comments",
        "author": user_json(links, author) if author else None,
        "committer": user_json(links, committer) if committer else None,
        "parents": git["parents"],
    }
    if files is not None:
        additions = sum(f.additions for f in files)
        deletions = sum(f.deletions for f in files)
        body["stats"] = {"total": additions + deletions, "additions": additions,
                         "deletions": deletions}
        body["files"] = [file_json(links, repo, f, info.sha) for f in files]
    return body


def file_json(links: Links, repo: Repo, change: FileChange, ref: str) -> JSON:
    api = links.repo_api(repo.full_name)
    html = links.repo_html(repo.full_name)
    path = quote(change.filename)
    body: JSON = {
        "sha": change.sha, "filename": change.filename, "status": change.status,
        "additions": change.additions, "deletions": change.deletions,
        "changes": change.additions + change.deletions,
        "blob_url": f"{html}/blob/{ref}/{path}", "raw_url": f"{html}/raw/{ref}/{path}",
        "contents_url": f"{api}/contents/{path}?ref={ref}",
    }
    if change.patch is not None:
        body["patch"] = change.patch
    if change.previous_filename is not None:
        body["previous_filename"] = change.previous_filename
    return body


def tree_entry_json(links: Links, repo: Repo, entry: TreeEntry) -> JSON:
    api = links.repo_api(repo.full_name)
    body: JSON = {"path": entry.path, "mode": entry.mode, "type": entry.type, "sha": entry.sha}
    if entry.type == "blob":
        body["size"] = entry.size
        body["url"] = f"{api}/git/blobs/{entry.sha}"
    elif entry.type == "tree":
        body["url"] = f"{api}/git/trees/{entry.sha}"
    return body


def tree_json(links: Links, repo: Repo, sha: str, entries: list[TreeEntry]) -> JSON:
    return {"sha": sha, "url": f"{links.repo_api(repo.full_name)}/git/trees/{sha}",
            "tree": [tree_entry_json(links, repo, e) for e in entries], "truncated": False}


def ref_json(links: Links, repo: Repo, name: str, sha: str, kind: str = "commit") -> JSON:
    api = links.repo_api(repo.full_name)
    short = name.removeprefix("refs/")
    object_path = "commits" if kind == "commit" else "tags"
    return {"ref": name, "node_id": node_id("Ref", f"{repo.id}:{name}"),
            "url": f"{api}/git/refs/{quote(short)}",
            "object": {"sha": sha, "type": kind, "url": f"{api}/git/{object_path}/{sha}"}}


def content_json(links: Links, repo: Repo, entry: TreeEntry, ref: str,
                 data: bytes | None) -> JSON:
    """A contents API entry; ``data`` (a file's bytes) only when a single file was asked for."""
    api = links.repo_api(repo.full_name)
    html = links.repo_html(repo.full_name)
    path = quote(entry.path)
    kind = {"tree": "dir", "commit": "submodule"}.get(entry.type, "file")
    if entry.mode == "120000":
        kind = "symlink"
    git_url = f"{api}/git/{'trees' if entry.type == 'tree' else 'blobs'}/{entry.sha}"
    self_url = f"{api}/contents/{path}?ref={quote(ref)}"
    html_url = f"{html}/{'tree' if kind == 'dir' else 'blob'}/{ref}/{path}"
    body: JSON = {
        "name": entry.path.rsplit("/", 1)[-1], "path": entry.path, "sha": entry.sha,
        "size": entry.size or 0, "url": self_url, "html_url": html_url, "git_url": git_url,
        "download_url": f"{html}/raw/{ref}/{path}" if kind == "file" else None, "type": kind,
        "_links": {"self": self_url, "git": git_url, "html": html_url},
    }
    if data is not None:
        if kind == "symlink":
            body["target"] = data.decode("utf-8", "replace")
        else:
            body["content"] = wrapped_base64(data)
            body["encoding"] = "base64"
    return body
