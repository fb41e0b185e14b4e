"""The Git Data API (blobs, trees, commits, refs) and the git-backed REST views: commits,
compare, contents and branches. All of it reads and writes the repository's bare git repo."""

from __future__ import annotations

import base64
import binascii
from dataclasses import replace
from datetime import datetime
from typing import Any
from urllib.parse import unquote

from .git_store import GitDataError, Ident, TreeEdit, valid_ref_name
from .model import Repo, State, User
from .payloads import (
    commit_json,
    content_json,
    file_json,
    git_commit_json,
    ref_json,
    tree_json,
    wrapped_base64,
)
from .payloads import node_id as make_node_id
from .routes_issues import created
from .routing import ApiError, Request, Response, Router, body_field, not_found, paginate

_DOC_GIT = "https://docs.github.com/rest/git"
_ZERO = "0" * 40


def register(router: Router) -> None:
    router.add("POST", "/repos/{owner}/{repo}/git/blobs", create_blob)
    router.add("GET", "/repos/{owner}/{repo}/git/blobs/{sha}", get_blob)
    router.add("POST", "/repos/{owner}/{repo}/git/trees", create_tree)
    router.add("GET", "/repos/{owner}/{repo}/git/trees/{sha+}", get_tree)
    router.add("POST", "/repos/{owner}/{repo}/git/commits", create_git_commit)
    router.add("GET", "/repos/{owner}/{repo}/git/commits/{sha}", get_git_commit)
    # PyGithub reads one ref at git/ref/{ref} and edits or deletes it at the url in the
    # body, git/refs/{ref}; GitHub serves both spellings.
    router.add("GET", "/repos/{owner}/{repo}/git/ref/{ref+}", get_ref)
    router.add("GET", "/repos/{owner}/{repo}/git/refs", list_refs)
    router.add("GET", "/repos/{owner}/{repo}/git/refs/{ref+}", get_refs)
    router.add("GET", "/repos/{owner}/{repo}/git/matching-refs/{ref+}", matching_refs)
    router.add("POST", "/repos/{owner}/{repo}/git/refs", create_ref)
    for spelling in ("ref", "refs"):
        router.add("PATCH", f"/repos/{{owner}}/{{repo}}/git/{spelling}/{{ref+}}", update_ref)
        router.add("DELETE", f"/repos/{{owner}}/{{repo}}/git/{spelling}/{{ref+}}", delete_ref)
    router.add("GET", "/repos/{owner}/{repo}/commits", list_commits)
    router.add("GET", "/repos/{owner}/{repo}/commits/{ref+}", get_commit)
    router.add("GET", "/repos/{owner}/{repo}/compare/{basehead+}", compare)
    router.add("GET", "/repos/{owner}/{repo}/contents", get_contents)
    router.add("GET", "/repos/{owner}/{repo}/contents/{path+}", get_contents)
    router.add("GET", "/repos/{owner}/{repo}/branches", list_branches)
    router.add("GET", "/repos/{owner}/{repo}/branches/{branch+}", get_branch)


def _require_git(repo: Repo) -> None:
    if repo.git.is_empty():
        raise ApiError(409, "Git Repository is empty.", doc=_DOC_GIT)


# -- blobs, trees, commits ------------------------------------------------------------------

def create_blob(state: State, req: Request, repo: Repo) -> Response:
    _require_git(repo)
    content = body_field(req, "content", str, required=True) or ""
    encoding = body_field(req, "encoding", str, default="utf-8")
    if encoding == "base64":
        try:
            data = base64.b64decode(content, validate=False)
        except (binascii.Error, ValueError) as exc:
            raise ApiError(422, "Invalid request.\n\ncontent is not valid Base64.") from exc
    elif encoding in ("utf-8", "utf8"):
        data = content.encode()
    else:
        # GitHub accepts only these two; PyGithub passes any string through.
        raise ApiError(422, f"encoding {encoding!r} is not supported", doc=_DOC_GIT)
    sha = repo.git.write_blob(data)
    return created({"url": f"{req.links.repo_api(repo.full_name)}/git/blobs/{sha}", "sha": sha})


def get_blob(state: State, req: Request, repo: Repo) -> Response:
    sha = req.params["sha"]
    data = repo.git.read_blob(sha)
    return Response(200, {"sha": sha, "node_id": make_node_id("Blob", f"{repo.id}:{sha}"),
                          "size": len(data), "url": f"{req.links.repo_api(repo.full_name)}"
                          f"/git/blobs/{sha}", "content": wrapped_base64(data),
                          "encoding": "base64"})


def _tree_edits(raw: Any) -> list[TreeEdit]:
    if not isinstance(raw, list):
        raise ApiError(422, 'Invalid request.\n\n"tree" wasn\'t supplied.', doc=_DOC_GIT)
    edits = []
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            raise ApiError(422, "Invalid request.\n\nFor 'items', each needs a path.")
        mode = str(item.get("mode", "100644"))
        kind = item.get("type") or {"040000": "tree", "160000": "commit"}.get(mode, "blob")
        content = item.get("content")
        if content is not None and not isinstance(content, str):
            raise ApiError(422, "Invalid request.\n\nFor 'content', it is not a string.")
        if "sha" not in item and content is None:
            raise ApiError(422, "Must supply either tree.sha or tree.content", doc=_DOC_GIT)
        edits.append(TreeEdit(item["path"], mode, str(kind), item.get("sha"),
                              content.encode() if content is not None else None))
    return edits


def create_tree(state: State, req: Request, repo: Repo) -> Response:
    _require_git(repo)
    base = body_field(req, "base_tree", str)
    sha = repo.git.build_tree(base, _tree_edits((req.body or {}).get("tree")))
    return created(tree_json(req.links, repo, sha, repo.git.ls_tree(sha)))


def get_tree(state: State, req: Request, repo: Repo) -> Response:
    _require_git(repo)
    wanted = unquote(req.params["sha"])
    kind = repo.git.object_type(wanted)
    tree = wanted if kind == "tree" else None
    if tree is None:  # GitHub also takes a commit sha or a branch name here
        commit = repo.git.resolve_commit(wanted)
        tree = repo.git.read_commit(commit).tree if commit else None
    if tree is None:
        raise not_found(f"{_DOC_GIT}/trees#get-a-tree")
    recursive = req.arg("recursive") not in (None, "", "0", "false")
    return Response(200, tree_json(req.links, repo, tree,
                                   repo.git.ls_tree(tree, recursive=recursive)))


def _ident(state: State, raw: Any, fallback: Ident | None, who: User) -> Ident:
    if raw is None:
        return fallback or Ident(who.commit_name, who.commit_email, state.now())
    if not isinstance(raw, dict) or not raw.get("name") or not raw.get("email"):
        raise ApiError(422, "Invalid request.\n\nauthor/committer need a name and an email.")
    date = state.now()
    if raw.get("date"):
        try:
            date = datetime.fromisoformat(str(raw["date"]).replace("Z", "+00:00"))
        except ValueError as exc:
            raise ApiError(422, f"Invalid request.\n\n{raw['date']!r} is not a date.") from exc
    return Ident(str(raw["name"]), str(raw["email"]), date)


def create_git_commit(state: State, req: Request, repo: Repo) -> Response:
    _require_git(repo)
    assert req.token is not None
    message = body_field(req, "message", str, required=True) or ""
    tree = body_field(req, "tree", str, required=True) or ""
    parents = body_field(req, "parents", list, default=[]) or []
    who = state.user(req.token.login)
    body = req.body if isinstance(req.body, dict) else {}
    # GitHub's defaults: the author is the token's account, the committer is the author.
    author = _ident(state, body.get("author"), None, who)
    committer = _ident(state, body.get("committer"), author, who)
    sha = repo.git.write_commit(tree, [str(p) for p in parents], message, author, committer)
    return created(git_commit_json(req.links, repo, repo.git.read_commit(sha)))


def get_git_commit(state: State, req: Request, repo: Repo) -> Response:
    _require_git(repo)
    try:
        info = repo.git.read_commit(req.params["sha"])
    except GitDataError as exc:
        raise not_found(f"{_DOC_GIT}/commits#get-a-commit-object") from exc
    return Response(200, git_commit_json(req.links, repo, info))


# -- refs -----------------------------------------------------------------------------------

def _full_ref(raw: str) -> str:
    ref = unquote(raw)
    return ref if ref.startswith("refs/") else f"refs/{ref}"


def _ref_body(req: Request, repo: Repo, name: str, sha: str) -> dict[str, Any]:
    kind = repo.git.object_type(sha) or "commit"
    return ref_json(req.links, repo, name, sha, "tag" if kind == "tag" else "commit")


def get_ref(state: State, req: Request, repo: Repo) -> Response:
    _require_git(repo)
    name = _full_ref(req.params["ref"])
    sha = repo.git.read_ref(name)
    if sha is None:
        raise not_found(f"{_DOC_GIT}/refs#get-a-reference")
    return Response(200, _ref_body(req, repo, name, sha))


def list_refs(state: State, req: Request, repo: Repo) -> Response:
    _require_git(repo)
    found = sorted(repo.git.refs().items())
    chunk, headers = paginate(req, found)
    return Response(200, [_ref_body(req, repo, n, s) for n, s in chunk], headers)


def get_refs(state: State, req: Request, repo: Repo) -> Response:
    """The older endpoint: one object for an exact match, else the refs under that prefix."""
    _require_git(repo)
    name = _full_ref(req.params["ref"])
    refs = repo.git.refs()
    if name in refs:
        return Response(200, _ref_body(req, repo, name, refs[name]))
    found = sorted((n, s) for n, s in refs.items() if n.startswith(name.rstrip("/") + "/"))
    if not found:
        raise not_found(f"{_DOC_GIT}/refs#get-a-reference")
    return Response(200, [_ref_body(req, repo, n, s) for n, s in found])


def matching_refs(state: State, req: Request, repo: Repo) -> Response:
    _require_git(repo)
    prefix = _full_ref(req.params["ref"])
    found = sorted((n, s) for n, s in repo.git.refs().items() if n.startswith(prefix))
    chunk, headers = paginate(req, found)
    return Response(200, [_ref_body(req, repo, n, s) for n, s in chunk], headers)


def create_ref(state: State, req: Request, repo: Repo) -> Response:
    _require_git(repo)
    name = body_field(req, "ref", str, required=True) or ""
    sha = body_field(req, "sha", str, required=True) or ""
    if not name.startswith("refs/") or name.count("/") < 2 or not valid_ref_name(name):
        raise ApiError(422, f"{name} is not a valid ref name.", doc=f"{_DOC_GIT}/refs")
    if repo.git.object_type(sha) is None:
        raise ApiError(422, "Object does not exist", doc=f"{_DOC_GIT}/refs#create-a-reference")
    if repo.git.read_ref(name) is not None:
        raise ApiError(422, "Reference already exists",
                       doc=f"{_DOC_GIT}/refs#create-a-reference")
    repo.git.set_ref(name, sha, _ZERO)  # the zero old value: fail rather than overwrite
    return created(_ref_body(req, repo, name, sha))


def update_ref(state: State, req: Request, repo: Repo) -> Response:
    _require_git(repo)
    doc = f"{_DOC_GIT}/refs#update-a-reference"
    name = _full_ref(req.params["ref"])
    sha = body_field(req, "sha", str, required=True) or ""
    force = body_field(req, "force", bool, default=False)
    old = repo.git.read_ref(name)
    if old is None:
        raise ApiError(422, "Reference does not exist", doc=doc)
    if repo.git.object_type(sha) != "commit":
        raise ApiError(422, "Object does not exist", doc=doc)
    if not force and not repo.git.is_ancestor(old, sha):
        raise ApiError(422, "Update is not a fast forward", doc=doc)
    repo.git.set_ref(name, sha, old)
    return Response(200, _ref_body(req, repo, name, sha))


def delete_ref(state: State, req: Request, repo: Repo) -> Response:
    _require_git(repo)
    name = _full_ref(req.params["ref"])
    if repo.git.read_ref(name) is None:
        raise ApiError(422, "Reference does not exist",
                       doc=f"{_DOC_GIT}/refs#delete-a-reference")
    repo.git.delete_ref(name)
    return Response(204)


# -- commits, compare, contents, branches ---------------------------------------------------

def list_commits(state: State, req: Request, repo: Repo) -> Response:
    if repo.git.is_empty():
        raise ApiError(409, "Git Repository is empty.",
                       doc="https://docs.github.com/rest/commits/commits#list-commits")
    ref = req.arg("sha") or repo.default_branch
    start = repo.git.resolve_commit(ref)
    if start is None:
        raise not_found("https://docs.github.com/rest/commits/commits#list-commits")
    path = req.arg("path")
    shas = repo.git.git("rev-list", start, "--", *([path] if path else [])).decode().split()
    chunk, headers = paginate(req, shas)
    body = [commit_json(state, req.links, repo, repo.git.read_commit(sha)) for sha in chunk]
    return Response(200, body, headers)


def get_commit(state: State, req: Request, repo: Repo) -> Response:
    ref = unquote(req.params["ref"])
    sha = repo.git.resolve_commit(ref)
    if sha is None:
        raise ApiError(422, f"No commit found for SHA: {ref}",
                       doc="https://docs.github.com/rest/commits/commits#get-a-commit")
    info = repo.git.read_commit(sha)
    files = repo.git.diff(info.parents[0] if info.parents else None, sha)
    page, headers = paginate(req, files, default=300, maximum=300)
    return Response(200, commit_json(state, req.links, repo, info, page), headers)


def compare(state: State, req: Request, repo: Repo) -> Response:
    doc = "https://docs.github.com/rest/commits/commits#compare-two-commits"
    base_name, sep, head_name = unquote(req.params["basehead"]).partition("...")
    if not sep:
        raise not_found(doc)
    base, head = (_compare_side(repo, n) for n in (base_name, head_name))
    if base is None or head is None:
        raise not_found(doc)
    merge_base = repo.git.merge_base(base, head)
    if merge_base is None:
        raise ApiError(404, f"No common ancestor between {base_name} and {head_name}.", doc=doc)
    ahead = repo.git.rev_list(base, head)
    behind = len(repo.git.rev_list(head, base))
    status = ("identical" if not ahead and not behind else "ahead" if not behind
              else "behind" if not ahead else "diverged")
    commits, headers = paginate(req, ahead, default=250, maximum=1000)
    html = f"{req.links.repo_html(repo.full_name)}/compare/{base_name}...{head_name}"
    body = {
        "url": f"{req.links.repo_api(repo.full_name)}/compare/{base_name}...{head_name}",
        "html_url": html, "permalink_url": f"{html}", "diff_url": f"{html}.diff",
        "patch_url": f"{html}.patch",
        "base_commit": commit_json(state, req.links, repo, repo.git.read_commit(base)),
        "merge_base_commit": commit_json(state, req.links, repo,
                                         repo.git.read_commit(merge_base)),
        "status": status, "ahead_by": len(ahead), "behind_by": behind,
        "total_commits": len(ahead),
        "commits": [commit_json(state, req.links, repo, repo.git.read_commit(c))
                    for c in commits],
        "files": [file_json(req.links, repo, f, head)
                  for f in repo.git.diff(merge_base, head)[:300]],  # GitHub's cap
    }
    return Response(200, body, headers)


def _compare_side(repo: Repo, name: str) -> str | None:
    owner, colon, ref = name.partition(":")
    if colon and owner.lower() != repo.owner.lower():
        return None  # cross-repository compares are not modelled
    return repo.git.resolve_commit(ref if colon else name)


def get_contents(state: State, req: Request, repo: Repo) -> Response:
    doc = "https://docs.github.com/rest/repos/contents#get-repository-content"
    if repo.git.is_empty():
        raise ApiError(404, "This repository is empty.", doc=doc)
    ref = req.arg("ref") or repo.default_branch
    commit = repo.git.resolve_commit(ref)
    if commit is None:
        raise ApiError(404, f"No commit found for the ref {ref}", doc=doc)
    path = unquote(req.params.get("path", "")).strip("/")
    tree = repo.git.read_commit(commit).tree
    if not path:
        entries = repo.git.ls_tree(tree)
        return Response(200, [content_json(req.links, repo, e, ref, None) for e in entries])
    found = repo.git.ls_tree(tree, path=path)
    entry = next((e for e in found if e.path == path), None)
    if entry is None:
        raise not_found(doc)
    if entry.type == "tree":
        children = [replace(e, path=f"{path}/{e.path}") for e in repo.git.ls_tree(entry.sha)]
        return Response(200, [content_json(req.links, repo, e, ref, None) for e in children])
    data = repo.git.read_blob(entry.sha) if entry.type == "blob" else None
    return Response(200, content_json(req.links, repo, entry, ref, data))


def branch_json(state: State, req: Request, repo: Repo, name: str, sha: str) -> dict[str, Any]:
    api = req.links.repo_api(repo.full_name)
    return {
        "name": name,
        "commit": commit_json(state, req.links, repo, repo.git.read_commit(sha)),
        "_links": {"self": f"{api}/branches/{name}",
                   "html": f"{req.links.repo_html(repo.full_name)}/tree/{name}"},
        "protected": name in repo.protected,
        "protection": {"enabled": name in repo.protected, "required_status_checks": {
            "enforcement_level": "off", "contexts": [], "checks": []}},
        "protection_url": f"{api}/branches/{name}/protection",
    }


def list_branches(state: State, req: Request, repo: Repo) -> Response:
    found = sorted(repo.git.refs("refs/heads/").items())
    chunk, headers = paginate(req, found)
    body = [{"name": n.removeprefix("refs/heads/"), "commit": {
        "sha": s, "url": f"{req.links.repo_api(repo.full_name)}/commits/{s}"},
        "protected": n.removeprefix("refs/heads/") in repo.protected} for n, s in chunk]
    return Response(200, body, headers)


def get_branch(state: State, req: Request, repo: Repo) -> Response:
    name = unquote(req.params["branch"])
    sha = repo.git.read_ref(f"refs/heads/{name}")
    if sha is None:
        raise ApiError(404, "Branch not found",
                       doc="https://docs.github.com/rest/branches/branches#get-a-branch")
    return Response(200, branch_json(state, req, repo, name, sha))
