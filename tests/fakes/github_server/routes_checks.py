"""Check runs (the Checks API): create, update, get, list for a ref, list annotations.

Modelled on GitHub's OpenAPI description (npm @octokit/openapi, api.github.com.json) and on
answers GitHub is known to give:

- Only a GitHub App can write check runs: an installation token (GITHUB_TOKEN is the GitHub
  Actions app's) may; a user's token gets 403 "You must authenticate via a GitHub App.",
  and a GITHUB_TOKEN whose workflow left out `checks: write` gets 403 "Resource not
  accessible by integration" (as does a fork's read-only token, refused in app.py).
- `head_sha` must name a commit of the repository (422 "No commit found for SHA: ...").
- `conclusion` is one of GitHub's values and may not be set to `stale`; giving one completes
  the run; `status: completed` (or `completed_at`) without one is refused.
- `output` needs `title` and `summary`, each text at most 65535 characters; at most 50
  annotations per request (422 "No more than 50 items are allowed; N were supplied."), each
  with path, start_line, end_line, annotation_level and message; columns only on one line.
  An update appends its annotations to those already there.
- Each app's runs on a commit share one check suite; the list for a ref shows, by default
  (`filter=latest`), only the newest run of each name per app.
"""

from __future__ import annotations

from typing import Any

from .model import BOT_LOGIN, CheckRun, Repo, State, User
from .payloads import iso, node_id, user_json
from .routes_issues import INTEGRATION_FORBIDDEN, created
from .routing import (
    ApiError,
    Links,
    Request,
    Response,
    Router,
    body_field,
    not_found,
    paginate,
    validation_failed,
)

_DOC = "https://docs.github.com/rest/checks/runs"
STATUSES = ("queued", "in_progress", "completed")
CONCLUSIONS = ("action_required", "cancelled", "failure", "neutral", "success", "skipped",
               "stale", "timed_out")
LEVELS = ("notice", "warning", "failure")
MAX_TEXT = 65535
MAX_ANNOTATIONS = 50
_ANNOTATION_NEEDS = ("path", "start_line", "end_line", "annotation_level", "message")
APP_ONLY = "You must authenticate via a GitHub App."
_ACTIONS_APP_ID = 15368


def register(router: Router) -> None:
    router.add("POST", "/repos/{owner}/{repo}/check-runs", create_check_run)
    router.add("GET", "/repos/{owner}/{repo}/check-runs/{id}/annotations", list_annotations)
    router.add("GET", "/repos/{owner}/{repo}/check-runs/{id}", get_check_run)
    router.add("PATCH", "/repos/{owner}/{repo}/check-runs/{id}", update_check_run)
    router.add("GET", "/repos/{owner}/{repo}/commits/{ref+}/check-runs", list_for_ref)


def create_check_run(state: State, req: Request, repo: Repo) -> Response:
    maker = _writer(state, req, f"{_DOC}#create-a-check-run")
    name = body_field(req, "name", str, required=True)
    head_sha = body_field(req, "head_sha", str, required=True)
    assert name is not None and head_sha is not None
    if not name.strip():
        raise validation_failed("CheckRun", "missing_field", "name",
                                doc=f"{_DOC}#create-a-check-run")
    if len(head_sha) != 40 or repo.git.object_type(head_sha.lower()) != "commit":
        raise ApiError(422, f"No commit found for SHA: {head_sha}",
                       doc=f"{_DOC}#create-a-check-run")
    now = state.now()
    run = CheckRun(id=state.next_id(), suite_id=_suite(state, repo, head_sha.lower(), maker),
                   head_sha=head_sha.lower(), name=name, maker=maker, status="queued",
                   conclusion=None, started_at=now, completed_at=None)
    _apply(state, req, run, creating=True)
    repo.check_runs[run.id] = run
    return created(check_run_json(state, req.links, repo, run))


def update_check_run(state: State, req: Request, repo: Repo) -> Response:
    run = _run_of(repo, req)
    _writer(state, req, f"{_DOC}#update-a-check-run")
    name = body_field(req, "name", str)
    if name is not None:
        run.name = name
    _apply(state, req, run, creating=False)
    return Response(200, check_run_json(state, req.links, repo, run))


def get_check_run(state: State, req: Request, repo: Repo) -> Response:
    return Response(200, check_run_json(state, req.links, repo, _run_of(repo, req)))


def list_annotations(state: State, req: Request, repo: Repo) -> Response:
    run = _run_of(repo, req)
    chunk, headers = paginate(req, run.annotations)
    return Response(200, [{"blob_href": _blob_href(req.links, repo, run, str(a["path"])),
                           "raw_details": None, "title": None, "start_column": None,
                           "end_column": None, **a} for a in chunk], headers)


def list_for_ref(state: State, req: Request, repo: Repo) -> Response:
    ref = req.params["ref"]
    sha = repo.git.resolve_commit(ref)
    if sha is None:
        raise ApiError(422, f"No commit found for SHA: {ref}",
                       doc=f"{_DOC}#list-check-runs-for-a-git-reference")
    runs = sorted((r for r in repo.check_runs.values() if r.head_sha == sha),
                  key=lambda r: r.id, reverse=True)
    name, status = req.arg("check_name"), req.arg("status")
    if name is not None:
        runs = [r for r in runs if r.name == name]
    if status is not None:
        runs = [r for r in runs if r.status == status]
    app_id = req.arg("app_id")
    if app_id is not None:
        runs = [r for r in runs if str(_app_id(state, r.maker)) == app_id]
    if req.arg("filter", "latest") == "latest":
        seen: set[tuple[str, str]] = set()
        newest = []
        for run in runs:
            if (run.name, run.maker) not in seen:
                seen.add((run.name, run.maker))
                newest.append(run)
        runs = newest
    chunk, headers = paginate(req, runs)
    return Response(200, {"total_count": len(runs), "check_runs": [
        check_run_json(state, req.links, repo, run) for run in chunk]}, headers)


def check_run_json(state: State, links: Links, repo: Repo, run: CheckRun) -> dict[str, Any]:
    api = f"{links.repo_api(repo.full_name)}/check-runs/{run.id}"
    return {
        "id": run.id, "head_sha": run.head_sha, "node_id": node_id("CheckRun", run.id),
        "external_id": run.external_id, "url": api,
        "html_url": f"{links.repo_html(repo.full_name)}/runs/{run.id}",
        "details_url": run.details_url, "status": run.status, "conclusion": run.conclusion,
        "started_at": iso(run.started_at), "completed_at": iso(run.completed_at),
        "output": {"title": run.title, "summary": run.summary, "text": run.text,
                   "annotations_count": len(run.annotations),
                   "annotations_url": f"{api}/annotations"},
        "name": run.name, "check_suite": {"id": run.suite_id},
        "app": _app_json(state, links, run.maker),
        "pull_requests": _pulls_json(state, links, repo, run.head_sha),
    }


def _writer(state: State, req: Request, doc: str) -> str:
    """The login writing, if it may write check runs (read-only tokens never get here)."""
    assert req.token is not None
    if state.user(req.token.login).type != "Bot":
        raise ApiError(403, APP_ONLY, doc=doc)
    if "checks" in req.token.without:
        raise ApiError(403, INTEGRATION_FORBIDDEN, doc=doc)
    return req.token.login


def _apply(state: State, req: Request, run: CheckRun, *, creating: bool) -> None:
    """The writable fields of a create or an update, each checked before any is set."""
    doc = f"{_DOC}#{'create' if creating else 'update'}-a-check-run"
    status = body_field(req, "status", str)
    conclusion = body_field(req, "conclusion", str)
    completed_at = body_field(req, "completed_at", str)
    details_url = body_field(req, "details_url", str)
    external_id = body_field(req, "external_id", str)
    if status is not None and status not in STATUSES:
        raise _not_member("status", status, STATUSES, doc)
    if conclusion is not None and conclusion not in CONCLUSIONS:
        raise _not_member("conclusion", conclusion, CONCLUSIONS, doc)
    if conclusion == "stale":
        raise validation_failed("CheckRun", "invalid", "conclusion",
                                message="only GitHub can set a conclusion of stale", doc=doc)
    if conclusion is None and (status == "completed" or completed_at is not None):
        raise ApiError(422, 'Invalid request.\n\n"conclusion" wasn\'t supplied.', doc=doc)
    output = _output(req, doc)
    if details_url is not None:
        run.details_url = details_url
    if external_id is not None:
        run.external_id = external_id
    if status is not None:
        run.status = status
    if conclusion is not None:  # a conclusion completes the run, whatever `status` said
        run.status, run.conclusion = "completed", conclusion
        run.completed_at = run.completed_at or state.now()
    if output is not None:
        run.title = output.get("title", run.title)
        run.summary = output.get("summary", run.summary)
        run.text = output.get("text", run.text)
        run.annotations.extend(output.get("annotations") or [])


def _output(req: Request, doc: str) -> dict[str, Any] | None:
    output = body_field(req, "output", dict)
    if output is None:
        return None
    missing = [key for key in ("title", "summary") if output.get(key) is None]
    if missing:
        raise ApiError(422, "Invalid request.\n\n" + ", ".join(f'"{k}"' for k in missing)
                       + (" wasn't supplied." if len(missing) == 1 else " weren't supplied."),
                       doc=doc)
    for key in ("title", "summary", "text"):
        value = output.get(key)
        if value is not None and not isinstance(value, str):
            raise ApiError(422, f"Invalid request.\n\nFor 'properties/{key}', {value!r} is "
                           "not a string.", doc=doc)
        if isinstance(value, str) and len(value) > MAX_TEXT:
            raise ApiError(422, f"Invalid request.\n\nFor 'properties/{key}', the value is "
                           f"longer than {MAX_TEXT} characters.", doc=doc)
    annotations = output.get("annotations")
    if annotations is not None:
        _check_annotations(annotations, doc)
    return output


def _check_annotations(annotations: Any, doc: str) -> None:
    if not isinstance(annotations, list):
        raise ApiError(422, f"Invalid request.\n\nFor 'properties/annotations', "
                       f"{annotations!r} is not an array.", doc=doc)
    if len(annotations) > MAX_ANNOTATIONS:
        raise ApiError(422, f"Invalid request.\n\nNo more than {MAX_ANNOTATIONS} items are "
                       f"allowed; {len(annotations)} were supplied.", doc=doc)
    lines = []
    for item in annotations:
        given = item if isinstance(item, dict) else {}
        missing = [f'"{key}"' for key in _ANNOTATION_NEEDS if given.get(key) is None]
        if missing:
            lines.append(", ".join(missing)
                         + (" wasn't supplied." if len(missing) == 1 else " weren't supplied."))
    if lines:
        raise ApiError(422, "Invalid request.\n\n" + "\n".join(lines), doc=doc)
    for item in annotations:
        start, end = item["start_line"], item["end_line"]
        columns = item.get("start_column") is not None or item.get("end_column") is not None
        if (item["annotation_level"] not in LEVELS or not isinstance(item["path"], str)
                or not isinstance(start, int) or not isinstance(end, int) or start < 1
                or end < start or (columns and start != end)
                or len(str(item.get("title") or "")) > 255
                or len(str(item["message"]).encode()) > 64 * 1024):
            raise validation_failed("CheckRun", "invalid", "annotations", doc=doc)


def _not_member(name: str, value: str, allowed: tuple[str, ...], doc: str) -> ApiError:
    return ApiError(422, f"Invalid request.\n\nFor '{name}', {value!r} is not a member of "
                    f"{list(allowed)}.", doc=doc)


def _run_of(repo: Repo, req: Request) -> CheckRun:
    raw = req.params["id"]
    run = repo.check_runs.get(int(raw)) if raw.isdigit() else None
    if run is None:
        raise not_found(f"{_DOC}#get-a-check-run")
    return run


def _suite(state: State, repo: Repo, sha: str, maker: str) -> int:
    key = (sha, maker.lower())
    if key not in repo.check_suites:
        repo.check_suites[key] = state.next_id()
    return repo.check_suites[key]


def _app_id(state: State, maker: str) -> int:
    return _ACTIONS_APP_ID if maker.lower() == BOT_LOGIN else state.user(maker).id


def _app_json(state: State, links: Links, maker: str) -> dict[str, Any]:
    actions = maker.lower() == BOT_LOGIN
    slug = "github-actions" if actions else maker.removesuffix("[bot]")
    owner = User("github", 9919, "Organization") if actions else state.user(maker)
    return {"id": _app_id(state, maker), "slug": slug,
            "node_id": node_id("Integration", _app_id(state, maker)),
            "owner": user_json(links, owner),
            "name": "GitHub Actions" if actions else slug, "description": "",
            "external_url": f"{links.root}/features/actions" if actions else links.root,
            "html_url": f"{links.root}/apps/{slug}", "created_at": "2018-07-30T09:30:17Z",
            "updated_at": "2019-12-10T19:04:12Z", "permissions": {}, "events": []}


def _pulls_json(state: State, links: Links, repo: Repo, sha: str) -> list[dict[str, Any]]:
    """Open pull requests of this repository whose head is the commit (not forks': GitHub's
    Checks API does not see pushes to a fork)."""
    from . import pulls

    found = []
    for issue in sorted(repo.issues.values(), key=lambda i: i.number):
        pull = issue.pull
        if pull is None or issue.state != "open" or pull.head_repo.lower() != \
                repo.full_name.lower() or pulls.head_sha(state, repo, issue) != sha:
            continue
        part = {"id": repo.id, "url": links.repo_api(repo.full_name), "name": repo.name}
        found.append({"url": f"{links.repo_api(repo.full_name)}/pulls/{issue.number}",
                      "id": pull.id, "number": issue.number,
                      "head": {"ref": pull.head_ref, "sha": sha, "repo": part},
                      "base": {"ref": pull.base_ref, "sha": pulls.base_sha(repo, issue),
                               "repo": part}})
    return found


def _blob_href(links: Links, repo: Repo, run: CheckRun, path: str) -> str:
    return f"{links.repo_html(repo.full_name)}/blob/{run.head_sha}/{path}"
