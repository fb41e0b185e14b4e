"""Webhook event payloads built from the fake's own state, shaped like the payloads GitHub
writes to $GITHUB_EVENT_PATH: the ids, numbers and urls in them are the ones the fake serves,
so an action that reads the event and then calls the API finds what the event promised."""

from __future__ import annotations

from typing import Any

from .model import Repo, State
from .payloads import comment_json, issue_json, label_json, repo_json, user_json
from .routes_pulls import pull_json
from .routing import Links

_DEFAULT_ACTIONS = {"issues": "opened", "issue_comment": "created", "pull_request": "opened"}


def event_payload(state: State, links: Links, name: str, repo: Repo, *,
                  action: str | None = None, number: int | None = None,
                  comment_id: int | None = None, sender: str | None = None,
                  label: str | None = None, inputs: dict[str, Any] | None = None,
                  ref: str | None = None, cron: str = "23 5 * * 1",
                  before: str | None = None, after: str | None = None) -> dict[str, Any]:
    """``name`` is the event (issues, issue_comment, pull_request, workflow_dispatch,
    schedule)."""
    if name == "schedule":
        # A scheduled run's event holds the cron line and the workflow only: no repository
        # (the runner's GITHUB_REPOSITORY names it) and no sender.
        return {"schedule": cron, "workflow": ".github/workflows/selfcorrect-autoupdate.yml"}
    body: dict[str, Any] = {}
    author: str | None = None
    if name in _DEFAULT_ACTIONS:
        body["action"] = action or _DEFAULT_ACTIONS[name]
    if name in ("issues", "issue_comment", "pull_request"):
        issue = repo.issues[_required(number, "number")]
        author = issue.user
        if name == "pull_request":
            body["number"] = issue.number
            body["pull_request"] = pull_json(state, links, repo, issue, None)
        else:
            body["issue"] = issue_json(state, links, repo, issue)
        if name == "issue_comment":
            comment = repo.comments[_required(comment_id, "comment_id")]
            author = comment.user
            body["comment"] = comment_json(state, links, repo, comment)
        if label is not None:
            found = repo.label(label)
            if found is None:
                raise KeyError(f"no label {label!r} in {repo.full_name}")
            body["label"] = label_json(links, repo, found)
    elif name == "push":
        body.update(_push(repo, ref or f"refs/heads/{repo.default_branch}",
                          _required_text(before, "before"), _required_text(after, "after")))
    elif name == "workflow_dispatch":
        body["inputs"] = inputs or {}
        body["ref"] = ref or f"refs/heads/{repo.default_branch}"
        body["workflow"] = ".github/workflows/selfcorrect.yml"
    else:
        raise ValueError(f"no payload builder for the {name!r} event")
    body["repository"] = repo_json(state, links, repo, None)  # events carry no permissions
    owner = state.user(repo.owner)
    if owner.type == "Organization":
        body["organization"] = _organization(links, owner.login, owner.id)
    body["sender"] = user_json(links, state.user(sender or author or repo.owner))
    return body


def _push(repo: Repo, ref: str, before: str, after: str) -> dict[str, Any]:
    """A push's own fields as a workflow's event holds them: its commits oldest first
    (at most 20), without the added/modified/removed lists a webhook has (GitHub leaves
    them out of the payload Actions gets; the compare API says which files changed)."""
    shas = repo.git.git("rev-list", "--reverse", f"{before}..{after}").decode().split()
    commits = [{"id": sha, "tree_id": "", "distinct": True,
                "message": repo.git.git("log", "-1", "--format=%B", sha).decode().strip()}
               for sha in shas[:20]]
    return {"ref": ref, "before": before, "after": after, "created": False,
            "deleted": False, "forced": False, "base_ref": None, "compare": "",
            "commits": commits, "head_commit": commits[-1] if commits else None}


def _required_text(value: str | None, name: str) -> str:
    if not value:
        raise ValueError(f"this event needs {name}")
    return value


def _required(value: int | None, name: str) -> int:
    if value is None:
        raise ValueError(f"this event needs {name}")
    return value


def _organization(links: Links, login: str, org_id: int) -> dict[str, Any]:
    api = f"{links.api}/orgs/{login}"
    return {"login": login, "id": org_id, "node_id": "", "url": api, "repos_url": f"{api}/repos",
            "events_url": f"{api}/events", "hooks_url": f"{api}/hooks",
            "issues_url": f"{api}/issues", "members_url": f"{api}/members{{/member}}",
            "public_members_url": f"{api}/public_members{{/member}}",
            "avatar_url": f"https://avatars.githubusercontent.com/u/{org_id}?v=4",
            "description": ""}
