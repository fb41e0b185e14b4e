"""PyGithub's objects as the Forge's plain records (github/forge.py), and our records as the
JSON GitHub takes: pure conversions, no request. With pygithub_forge.py the only modules
that know PyGithub's types; nothing of PyGithub leaves them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from github.CheckRun import CheckRun as GithubCheckRun
from github.IssueComment import IssueComment
from github.NamedUser import NamedUser
from github.Organization import Organization
from github.PullRequest import PullRequest as GithubPull
from github.Repository import Repository

from selfcorrect_action.github.forge import (
    MAX_ANNOTATIONS_PER_REQUEST,
    CheckAnnotation,
    CheckRun,
    CheckRunOutput,
    Comment,
    Permission,
    PullRequest,
)


def ref_path(ref: str) -> str:
    """`refs/heads/a b` → `refs/heads/a%20b`: each part quoted, the slashes kept."""
    return "/".join(quote(part, safe="") for part in ref.split("/"))


def same_text(stored: str | None, sent: str) -> bool:
    """Whether a body GitHub stored is the one we sent, line endings and outer whitespace
    aside (what a form or a proxy may change)."""
    def norm(text: str) -> str:
        return text.replace("\r\n", "\n").strip()

    return norm(stored or "") == norm(sent)


def login(user: NamedUser | Organization | None) -> str:
    """A login, or "" when GitHub has no account to show (a deleted user, an unlinked
    commit email)."""
    return user.login if user is not None else ""


def comment(comment: IssueComment) -> Comment:
    return Comment(id=comment.id, body=comment.body or "", author=login(comment.user),
                   html_url=comment.html_url or "")


def pull(pull: GithubPull) -> PullRequest:
    head_repo: Repository | None = pull.head.repo  # None once a fork is deleted
    return PullRequest(number=pull.number, title=pull.title, body=pull.body or "",
                       head_branch=pull.head.ref, head_sha=pull.head.sha,
                       head_repository=head_repo.full_name if head_repo is not None else "",
                       base_branch=pull.base.ref, html_url=pull.html_url or "",
                       draft=bool(pull.draft), state=pull.state)


def fits_one_request(output: CheckRunOutput) -> None:
    if len(output.annotations) > MAX_ANNOTATIONS_PER_REQUEST:
        raise ValueError(f"{len(output.annotations)} annotations in one request; GitHub takes "
                         f"{MAX_ANNOTATIONS_PER_REQUEST} (send the rest in updates)")


def output(output: CheckRunOutput) -> dict[str, Any]:
    sent: dict[str, Any] = {"title": output.title, "summary": output.summary}
    if output.annotations:
        sent["annotations"] = [annotation(a) for a in output.annotations]
    return sent


def annotation(annotation: CheckAnnotation) -> dict[str, str | int]:
    sent: dict[str, str | int] = {
        "path": annotation.path, "start_line": annotation.start_line,
        "end_line": annotation.end_line, "annotation_level": annotation.level,
        "message": annotation.message}
    if annotation.start_line == annotation.end_line:  # GitHub refuses columns across lines
        for key in ("start_column", "end_column"):
            value = getattr(annotation, key)
            if value is not None:
                sent[key] = value
    if annotation.title:
        sent["title"] = annotation.title
    return sent


def check(run: GithubCheckRun) -> CheckRun:
    output = run.output
    return CheckRun(id=run.id, name=run.name, head_sha=run.head_sha, status=run.status,
                    conclusion=run.conclusion, external_id=run.external_id or "",
                    html_url=run.html_url or "",
                    annotations_count=output.annotations_count if output is not None else 0)


def permission(login: str, data: Any) -> Permission:
    body: Mapping[str, Any] = data if isinstance(data, Mapping) else {}
    user = body.get("user")
    shown = user.get("login") if isinstance(user, Mapping) else None
    return Permission(login=str(shown or login), permission=str(body.get("permission") or
                                                               "none"),
                      role_name=str(body.get("role_name") or ""))
