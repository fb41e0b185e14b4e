"""Repository metadata, users, collaborators, issues, issue comments and labels."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any
from urllib.parse import unquote, unquote_plus

from . import pulls
from .model import LEGACY_PERMISSION, Comment, Issue, Label, Repo, State, role_permissions
from .payloads import comment_json, issue_json, issue_labels_json, label_json, repo_json, user_json
from .routing import (
    ApiError,
    Request,
    Response,
    Router,
    body_field,
    not_found,
    page_response,
    validation_failed,
)

COMMENT_LIMIT = 65536  # GitHub refuses longer comment bodies
INTEGRATION_FORBIDDEN = "Resource not accessible by integration"
_DOC_LABELS = "https://docs.github.com/rest/issues/labels"
_DOC_COMMENTS = "https://docs.github.com/rest/issues/comments"
_COLOR = re.compile(r"[0-9a-fA-F]{6}")


def register(router: Router) -> None:
    router.add_plain("GET", "/user", get_authenticated_user)
    router.add_plain("GET", "/users/{login}", get_user)
    router.add("GET", "/repos/{owner}/{repo}", get_repo)
    router.add("GET", "/repos/{owner}/{repo}/collaborators/{login}/permission", get_permission)
    router.add("GET", "/repos/{owner}/{repo}/issues/comments", list_repo_comments)
    router.add("GET", "/repos/{owner}/{repo}/issues/comments/{id}", get_comment)
    router.add("PATCH", "/repos/{owner}/{repo}/issues/comments/{id}", edit_comment)
    router.add("DELETE", "/repos/{owner}/{repo}/issues/comments/{id}", delete_comment)
    router.add("GET", "/repos/{owner}/{repo}/issues", list_issues)
    router.add("POST", "/repos/{owner}/{repo}/issues", create_issue)
    router.add("GET", "/repos/{owner}/{repo}/issues/{number}", get_issue)
    router.add("PATCH", "/repos/{owner}/{repo}/issues/{number}", edit_issue)
    router.add("GET", "/repos/{owner}/{repo}/issues/{number}/comments", list_comments)
    router.add("POST", "/repos/{owner}/{repo}/issues/{number}/comments", create_comment)
    router.add("GET", "/repos/{owner}/{repo}/issues/{number}/labels", list_issue_labels)
    router.add("POST", "/repos/{owner}/{repo}/issues/{number}/labels", add_issue_labels)
    router.add("PUT", "/repos/{owner}/{repo}/issues/{number}/labels", set_issue_labels)
    router.add("DELETE", "/repos/{owner}/{repo}/issues/{number}/labels", clear_issue_labels)
    router.add("DELETE", "/repos/{owner}/{repo}/issues/{number}/labels/{name}",
               remove_issue_label)
    router.add("GET", "/repos/{owner}/{repo}/labels", list_labels)
    router.add("POST", "/repos/{owner}/{repo}/labels", create_label)
    router.add("GET", "/repos/{owner}/{repo}/labels/{name}", get_label)
    router.add("PATCH", "/repos/{owner}/{repo}/labels/{name}", edit_label)
    router.add("DELETE", "/repos/{owner}/{repo}/labels/{name}", delete_label)


# -- users, repository, permission ----------------------------------------------------------

def get_authenticated_user(state: State, req: Request) -> Response:
    assert req.token is not None
    user = state.user(req.token.login)
    if user.type == "Bot":
        # An installation token (GITHUB_TOKEN) is not a user: GitHub refuses GET /user.
        raise ApiError(403, INTEGRATION_FORBIDDEN,
                       doc="https://docs.github.com/rest/users/users#get-the-authenticated-user")
    return Response(200, {**user_json(req.links, user), "name": user.name, "email": user.email})


def get_user(state: State, req: Request) -> Response:
    user = state.users.get(unquote(req.params["login"]).lower())
    if user is None:
        raise not_found("https://docs.github.com/rest/users/users#get-a-user")
    return Response(200, {**user_json(req.links, user), "name": user.name, "email": user.email})


def get_repo(state: State, req: Request, repo: Repo) -> Response:
    return Response(200, repo_json(state, req.links, repo, req.token))


def get_permission(state: State, req: Request, repo: Repo) -> Response:
    doc = ("https://docs.github.com/rest/collaborators/collaborators"
           "#get-repository-permissions-for-a-user")
    assert req.token is not None
    if not req.token.can_write and state.user(req.token.login).type == "User":
        # What a classic token without push access gets (recorded from api.github.com).
        raise ApiError(403, "Must have push access to view collaborator permission.", doc=doc)
    login = unquote(req.params["login"])
    user = state.users.get(login.lower())
    if user is None:
        raise not_found(doc)
    role = repo.role_of(login) or ("none" if repo.private else "read")
    user_body = {**user_json(req.links, user), "permissions": role_permissions(role),
                 "role_name": role}
    return Response(200, {"permission": LEGACY_PERMISSION[role], "role_name": role,
                          "user": user_body})


# -- issues ---------------------------------------------------------------------------------

def issue_of(repo: Repo, req: Request) -> Issue:
    number = req.params["number"]
    issue = repo.issues.get(int(number)) if number.isdigit() else None
    if issue is None:
        raise not_found("https://docs.github.com/rest/issues/issues#get-an-issue")
    return issue


def list_issues(state: State, req: Request, repo: Repo) -> Response:
    wanted = req.arg("state", "open")
    labels = {n.strip().lower() for n in (req.arg("labels") or "").split(",") if n.strip()}
    found = [i for i in sorted(repo.issues.values(), key=lambda i: -i.number)
             if wanted in ("all", i.state) and labels <= {n.lower() for n in i.labels}]
    return page_response(req, found, lambda i: issue_json(state, req.links, repo, i))


def create_issue(state: State, req: Request, repo: Repo) -> Response:
    assert req.token is not None
    title = body_field(req, "title", str, required=True) or ""
    issue = state.open_issue(repo, title, body_field(req, "body", str),
                             state.user(req.token.login).login)
    labels = body_field(req, "labels", list)
    if labels:
        attach_labels(state, repo, issue, _label_names(labels))
    return created(issue_json(state, req.links, repo, issue))


def get_issue(state: State, req: Request, repo: Repo) -> Response:
    return Response(200, issue_json(state, req.links, repo, issue_of(repo, req)))


def edit_issue(state: State, req: Request, repo: Repo) -> Response:
    issue = issue_of(repo, req)
    assert req.token is not None
    apply_issue_edits(state, repo, issue, req, state.user(req.token.login).login)
    labels = body_field(req, "labels", list)
    if labels is not None:
        issue.labels = []
        attach_labels(state, repo, issue, _label_names(labels))
    assignees = body_field(req, "assignees", list)
    if assignees is not None:
        issue.assignees = [state.user(str(a)).login for a in assignees]
    return Response(200, issue_json(state, req.links, repo, issue))


def apply_issue_edits(state: State, repo: Repo, issue: Issue, req: Request, actor: str) -> None:
    """title/body/state, shared by PATCH issues/{n} and PATCH pulls/{n}."""
    title = body_field(req, "title", str)
    if title is not None:
        if not title.strip():
            raise validation_failed("Issue", "missing_field", "title")
        issue.title = title
    if isinstance(req.body, dict) and "body" in req.body:
        issue.body = body_field(req, "body", str)
    new_state = body_field(req, "state", str)
    if new_state is not None and new_state != issue.state:
        if new_state not in ("open", "closed"):
            raise validation_failed("Issue", "invalid", "state")
        set_state(state, repo, issue, new_state, actor, body_field(req, "state_reason", str))
    issue.updated_at = state.now()


def set_state(state: State, repo: Repo, issue: Issue, new_state: str, actor: str,
              reason: str | None) -> None:
    if new_state == "closed":
        if issue.pull is not None:
            pulls.freeze(state, repo, issue)
        issue.state, issue.closed_at, issue.closed_by = "closed", state.now(), actor
        issue.state_reason = None if issue.pull else (reason or "completed")
    else:
        if issue.pull is not None:
            pulls.reopen(state, repo, issue)
        issue.state, issue.closed_at, issue.closed_by = "open", None, None
        issue.state_reason = None if issue.pull else "reopened"


# -- comments -------------------------------------------------------------------------------

def comment_of(repo: Repo, req: Request) -> Comment:
    key = req.params["id"]
    comment = repo.comments.get(int(key)) if key.isdigit() else None
    if comment is None:
        raise not_found(f"{_DOC_COMMENTS}#get-an-issue-comment")
    return comment


def _since(req: Request) -> datetime | None:
    raw = req.arg("since")
    if not raw:
        return None
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError as exc:
        raise validation_failed("IssueComment", "invalid", "since") from exc


def list_comments(state: State, req: Request, repo: Repo) -> Response:
    issue = issue_of(repo, req)
    since = _since(req)
    found = [c for c in sorted(repo.comments.values(), key=lambda c: c.id)
             if c.number == issue.number and (since is None or c.updated_at >= since)]
    return page_response(req, found, lambda c: comment_json(state, req.links, repo, c))


def list_repo_comments(state: State, req: Request, repo: Repo) -> Response:
    since = _since(req)
    found = [c for c in sorted(repo.comments.values(), key=lambda c: c.id)
             if since is None or c.updated_at >= since]
    if req.arg("direction") == "desc":
        found.reverse()
    return page_response(req, found, lambda c: comment_json(state, req.links, repo, c))


def _comment_body(req: Request) -> str:
    text = body_field(req, "body", str, required=True) or ""
    if not text:
        raise validation_failed("IssueComment", "missing_field", "body",
                                doc=f"{_DOC_COMMENTS}#create-an-issue-comment")
    if len(text) > COMMENT_LIMIT:
        raise validation_failed("IssueComment", "custom", "body",
                                message=f"body is too long (maximum is {COMMENT_LIMIT} "
                                        f"characters)",
                                doc=f"{_DOC_COMMENTS}#create-an-issue-comment")
    return text


def create_comment(state: State, req: Request, repo: Repo) -> Response:
    issue = issue_of(repo, req)
    assert req.token is not None
    comment = add_comment(state, repo, issue, state.user(req.token.login).login,
                          _comment_body(req))
    return created(comment_json(state, req.links, repo, comment))


def add_comment(state: State, repo: Repo, issue: Issue, user: str, body: str) -> Comment:
    now = state.now()
    comment = Comment(state.next_id(), issue.number, state.user(user).login, body, now, now)
    repo.comments[comment.id] = comment
    issue.updated_at = now
    return comment


def get_comment(state: State, req: Request, repo: Repo) -> Response:
    return Response(200, comment_json(state, req.links, repo, comment_of(repo, req)))


def edit_comment(state: State, req: Request, repo: Repo) -> Response:
    comment = comment_of(repo, req)
    comment.body = _comment_body(req)
    comment.updated_at = state.now()
    return Response(200, comment_json(state, req.links, repo, comment))


def delete_comment(state: State, req: Request, repo: Repo) -> Response:
    del repo.comments[comment_of(repo, req).id]
    return Response(204)


# -- labels ---------------------------------------------------------------------------------

def label_of(repo: Repo, req: Request) -> Label:
    # PyGithub quotes spaces as %20, GitHub's own label urls use "+": accept both.
    label = repo.label(unquote_plus(req.params["name"]))
    if label is None:
        raise not_found(f"{_DOC_LABELS}#get-a-label")
    return label


def list_labels(state: State, req: Request, repo: Repo) -> Response:
    found = sorted(repo.labels.values(), key=lambda label: label.name.lower())
    return page_response(req, found, lambda label: label_json(req.links, repo, label))


def get_label(state: State, req: Request, repo: Repo) -> Response:
    return Response(200, label_json(req.links, repo, label_of(repo, req)))


def _label_fields(req: Request, *, creating: bool) -> tuple[str | None, str | None, str | None]:
    doc = f"{_DOC_LABELS}#create-a-label"
    name = body_field(req, "new_name" if not creating else "name", str)
    if creating and not name:
        raise validation_failed("Label", "missing_field", "name", doc=doc)
    color = body_field(req, "color", str)
    if color is not None and not _COLOR.fullmatch(color.removeprefix("#")):
        raise validation_failed("Label", "invalid", "color", doc=doc)
    return name, color.removeprefix("#").lower() if color else None, body_field(
        req, "description", str)


def create_label(state: State, req: Request, repo: Repo) -> Response:
    name, color, description = _label_fields(req, creating=True)
    assert name is not None
    if repo.label(name) is not None:
        raise validation_failed("Label", "already_exists", "name",
                                doc=f"{_DOC_LABELS}#create-a-label")
    label = add_label(state, repo, name, color or "ededed", description)
    return created(label_json(req.links, repo, label))


def add_label(state: State, repo: Repo, name: str, color: str = "ededed",
              description: str | None = None) -> Label:
    label = Label(state.next_id(), name, color, description)
    repo.labels[name.lower()] = label
    return label


def edit_label(state: State, req: Request, repo: Repo) -> Response:
    label = label_of(repo, req)
    new_name, color, description = _label_fields(req, creating=False)
    if new_name and new_name.lower() != label.name.lower() and repo.label(new_name):
        raise validation_failed("Label", "already_exists", "name")
    if new_name:
        old = label.name
        del repo.labels[old.lower()]
        label.name = new_name
        repo.labels[new_name.lower()] = label
        for issue in repo.issues.values():
            issue.labels = [new_name if n.lower() == old.lower() else n for n in issue.labels]
    label.color = color or label.color
    if isinstance(req.body, dict) and "description" in req.body:
        label.description = description
    return Response(200, label_json(req.links, repo, label))


def delete_label(state: State, req: Request, repo: Repo) -> Response:
    label = label_of(repo, req)
    del repo.labels[label.name.lower()]
    for issue in repo.issues.values():
        issue.labels = [n for n in issue.labels if n.lower() != label.name.lower()]
    return Response(204)


def _label_names(raw: Any) -> list[str]:
    """The label list of a request: names, or objects with a name (both are accepted)."""
    if isinstance(raw, dict):
        raw = raw.get("labels")
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        raise ApiError(422, "Invalid request.\n\nFor 'labels', the value is not an array.",
                       doc=f"{_DOC_LABELS}#add-labels-to-an-issue")
    names = []
    for item in raw:
        name = item.get("name") if isinstance(item, dict) else item
        if not isinstance(name, str) or not name.strip():
            raise validation_failed("Label", "invalid", "name")
        names.append(name)
    return names


def attach_labels(state: State, repo: Repo, issue: Issue, names: list[str]) -> None:
    """Add labels to an issue, creating the ones the repository lacks, as GitHub does."""
    for name in names:
        label = repo.label(name) or add_label(state, repo, name)
        if label.name.lower() not in {n.lower() for n in issue.labels}:
            issue.labels.append(label.name)
    issue.updated_at = state.now()


def list_issue_labels(state: State, req: Request, repo: Repo) -> Response:
    issue = issue_of(repo, req)
    found = [label for label in (repo.label(n) for n in issue.labels) if label is not None]
    return page_response(req, found, lambda label: label_json(req.links, repo, label))


def add_issue_labels(state: State, req: Request, repo: Repo) -> Response:
    issue = issue_of(repo, req)
    attach_labels(state, repo, issue, _label_names(req.body))
    return Response(200, issue_labels_json(req.links, repo, issue))


def set_issue_labels(state: State, req: Request, repo: Repo) -> Response:
    issue = issue_of(repo, req)
    issue.labels = []
    attach_labels(state, repo, issue, _label_names(req.body))
    return Response(200, issue_labels_json(req.links, repo, issue))


def clear_issue_labels(state: State, req: Request, repo: Repo) -> Response:
    issue_of(repo, req).labels = []
    return Response(204)


def remove_issue_label(state: State, req: Request, repo: Repo) -> Response:
    issue = issue_of(repo, req)
    name = unquote_plus(req.params["name"]).lower()
    if name not in {n.lower() for n in issue.labels}:
        # Not "Not Found": PyGithub turns this into a plain GithubException(404).
        raise ApiError(404, "Label does not exist",
                       doc=f"{_DOC_LABELS}#remove-a-label-from-an-issue")
    issue.labels = [n for n in issue.labels if n.lower() != name]
    issue.updated_at = state.now()
    return Response(200, issue_labels_json(req.links, repo, issue))


def created(body: dict[str, Any]) -> Response:
    """201 with the Location header GitHub sends for a new resource."""
    return Response(201, body, {"Location": str(body["url"])})
