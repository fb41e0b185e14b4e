"""Pull requests: create (with GitHub's 422s), list with filters, get, edit, files, commits."""

from __future__ import annotations

from typing import Any

from . import pulls
from .model import Issue, Repo, State, Token
from .payloads import commit_json, file_json, iso, issue_labels_json, node_id, repo_json, user_json
from .routes_issues import apply_issue_edits, created, issue_of
from .routing import (
    ApiError,
    Links,
    Request,
    Response,
    Router,
    body_field,
    not_found,
    page_response,
    validation_failed,
)

_DOC = "https://docs.github.com/rest/pulls/pulls"


def register(router: Router) -> None:
    router.add("GET", "/repos/{owner}/{repo}/pulls", list_pulls)
    router.add("POST", "/repos/{owner}/{repo}/pulls", create_pull)
    router.add("GET", "/repos/{owner}/{repo}/pulls/{number}", get_pull)
    router.add("PATCH", "/repos/{owner}/{repo}/pulls/{number}", edit_pull)
    router.add("GET", "/repos/{owner}/{repo}/pulls/{number}/files", list_files)
    router.add("GET", "/repos/{owner}/{repo}/pulls/{number}/commits", list_commits)
    router.add("GET", "/repos/{owner}/{repo}/pulls/{number}/merge", is_merged)


def pull_of(repo: Repo, req: Request) -> Issue:
    try:
        issue = issue_of(repo, req)
    except ApiError as exc:
        raise not_found(f"{_DOC}#get-a-pull-request") from exc
    if issue.pull is None:
        raise not_found(f"{_DOC}#get-a-pull-request")
    return issue


def pull_json(state: State, links: Links, repo: Repo, issue: Issue, token: Token | None, *,
              full: bool = True) -> dict[str, Any]:
    """A PR as GET pulls/{n} shows it; ``full=False`` is the shorter list form, whose missing
    fields (mergeable, commits...) make PyGithub fetch the PR again when they are read."""
    pull = issue.pull
    assert pull is not None
    api = f"{links.repo_api(repo.full_name)}/pulls/{issue.number}"
    issue_api = f"{links.repo_api(repo.full_name)}/issues/{issue.number}"
    html = f"{links.repo_html(repo.full_name)}/pull/{issue.number}"
    head, base = pulls.head_sha(state, repo, issue), pulls.base_sha(repo, issue)
    source = state.repo(pull.head_repo) or repo
    body: dict[str, Any] = {
        "url": api, "id": pull.id, "node_id": node_id("PullRequest", pull.id),
        "html_url": html, "diff_url": f"{html}.diff", "patch_url": f"{html}.patch",
        "issue_url": issue_api, "number": issue.number, "state": issue.state,
        "locked": issue.locked, "title": issue.title,
        "user": user_json(links, state.user(issue.user)), "body": issue.body,
        "created_at": iso(issue.created_at), "updated_at": iso(issue.updated_at),
        "closed_at": iso(issue.closed_at), "merged_at": iso(pull.merged_at),
        "merge_commit_sha": pull.merge_commit_sha,
        "assignee": None, "assignees": [], "requested_reviewers": [], "requested_teams": [],
        "labels": issue_labels_json(links, repo, issue), "milestone": None,
        "draft": pull.draft, "commits_url": f"{api}/commits",
        "review_comments_url": f"{api}/comments",
        "review_comment_url": f"{links.repo_api(repo.full_name)}/pulls/comments{{/number}}",
        "comments_url": f"{issue_api}/comments",
        "statuses_url": f"{links.repo_api(repo.full_name)}/statuses/{head}",
        "head": _part(state, links, source, pull.head_ref, head, token),
        "base": _part(state, links, repo, pull.base_ref, base, token),
        "_links": _links(api, issue_api, html, links.repo_api(repo.full_name), head),
        "author_association": repo.association(issue.user), "auto_merge": None,
        "active_lock_reason": None,
    }
    if full:
        body.update(_pull_stats(state, repo, issue, head, base))
    return body


def _part(state: State, links: Links, repo: Repo, ref: str, sha: str, token: Token | None
          ) -> dict[str, Any]:
    return {"label": f"{repo.owner}:{ref}", "ref": ref, "sha": sha,
            "user": user_json(links, state.user(repo.owner)),
            "repo": repo_json(state, links, repo, token)}


def _links(api: str, issue_api: str, html: str, repo_api: str, head: str) -> dict[str, Any]:
    hrefs = {"self": api, "html": html, "issue": issue_api,
             "comments": f"{issue_api}/comments", "review_comments": f"{api}/comments",
             "review_comment": f"{repo_api}/pulls/comments{{/number}}",
             "commits": f"{api}/commits", "statuses": f"{repo_api}/statuses/{head}"}
    return {key: {"href": href} for key, href in hrefs.items()}


def _pull_stats(state: State, repo: Repo, issue: Issue, head: str, base: str
                ) -> dict[str, Any]:
    pull = issue.pull
    assert pull is not None
    merge_base = repo.git.merge_base(base, head) if base else None
    files = repo.git.diff(merge_base, head) if merge_base else []
    mergeable = repo.git.mergeable(base, head) if issue.state == "open" and base else None
    if pull.draft and issue.state == "open":
        mergeable_state = "draft"
    elif mergeable is None:
        mergeable_state = "unknown"
    else:
        mergeable_state = "clean" if mergeable else "dirty"
    return {
        "merged": pull.merged, "mergeable": mergeable, "rebaseable": mergeable,
        "mergeable_state": mergeable_state, "merged_by": None,
        "comments": sum(1 for c in repo.comments.values() if c.number == issue.number),
        "review_comments": 0, "maintainer_can_modify": pull.maintainer_can_modify,
        "commits": len(repo.git.rev_list(base, head)) if base else 0,
        "additions": sum(f.additions for f in files),
        "deletions": sum(f.deletions for f in files), "changed_files": len(files),
    }


def _matches(issue: Issue, req: Request) -> bool:
    pull = issue.pull
    if pull is None:
        return False
    wanted = req.arg("state", "open")
    if wanted != "all" and issue.state != wanted:
        return False
    base = req.arg("base")
    if base and pull.base_ref != base:
        return False
    head = req.arg("head")
    if head:
        owner, colon, ref = head.partition(":")
        # "owner:branch", or just "owner" for all of that account's branches
        if pull.head_repo.split("/", 1)[0].lower() != owner.lower():
            return False
        if colon and pull.head_ref != ref:
            return False
    return True


def list_pulls(state: State, req: Request, repo: Repo) -> Response:
    found = [i for i in repo.issues.values() if _matches(i, req)]
    sort = req.arg("sort", "created")
    if sort == "updated":
        found.sort(key=lambda i: (i.updated_at, i.number))
    else:
        found.sort(key=lambda i: i.number)
    if req.arg("direction", "desc") == "desc":
        found.reverse()
    return page_response(req, found,
                         lambda i: pull_json(state, req.links, repo, i, req.token, full=False))


def create_pull(state: State, req: Request, repo: Repo) -> Response:
    assert req.token is not None
    head = body_field(req, "head", str)
    base = body_field(req, "base", str)
    if not head:
        raise validation_failed("PullRequest", "missing_field", "head", doc=pulls.DOC_CREATE)
    if not base:
        raise validation_failed("PullRequest", "missing_field", "base", doc=pulls.DOC_CREATE)
    issue = pulls.open_pull(
        state, repo, state.user(req.token.login).login, head=head, base=base,
        title=body_field(req, "title", str), body=body_field(req, "body", str),
        draft=bool(body_field(req, "draft", bool, default=False)),
        maintainer_can_modify=bool(body_field(req, "maintainer_can_modify", bool,
                                              default=False)),
        head_repo=body_field(req, "head_repo", str))
    return created(pull_json(state, req.links, repo, issue, req.token))


def get_pull(state: State, req: Request, repo: Repo) -> Response:
    return Response(200, pull_json(state, req.links, repo, pull_of(repo, req), req.token))


def edit_pull(state: State, req: Request, repo: Repo) -> Response:
    issue = pull_of(repo, req)
    assert req.token is not None and issue.pull is not None
    base = body_field(req, "base", str)
    if base is not None:
        if repo.git.read_ref(f"refs/heads/{base}") is None:
            raise validation_failed("PullRequest", "invalid", "base", doc=f"{_DOC}#update")
        issue.pull.base_ref = base
    flag = body_field(req, "maintainer_can_modify", bool)
    if flag is not None:
        issue.pull.maintainer_can_modify = flag
    apply_issue_edits(state, repo, issue, req, state.user(req.token.login).login)
    return Response(200, pull_json(state, req.links, repo, issue, req.token))


def list_files(state: State, req: Request, repo: Repo) -> Response:
    issue = pull_of(repo, req)
    head, base = pulls.head_sha(state, repo, issue), pulls.base_sha(repo, issue)
    merge_base = repo.git.merge_base(base, head) if base else None
    files = repo.git.diff(merge_base, head)[:3000] if merge_base else []  # GitHub's cap
    return page_response(req, files, lambda f: file_json(req.links, repo, f, head))


def list_commits(state: State, req: Request, repo: Repo) -> Response:
    issue = pull_of(repo, req)
    head, base = pulls.head_sha(state, repo, issue), pulls.base_sha(repo, issue)
    shas = repo.git.rev_list(base or None, head)[:250]  # GitHub lists at most 250
    return page_response(req, shas, lambda s: commit_json(state, req.links, repo,
                                                          repo.git.read_commit(s)))


def is_merged(state: State, req: Request, repo: Repo) -> Response:
    issue = pull_of(repo, req)
    if issue.pull is None or not issue.pull.merged:
        raise not_found(f"{_DOC}#check-if-a-pull-request-has-been-merged")
    return Response(204)
