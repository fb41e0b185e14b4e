"""The GitHub stand-in, driven by the real PyGithub client: what it answers must be what
api.github.com answers for the calls the action makes, and its git data must be real git."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from github import (
    Auth,
    BadCredentialsException,
    Github,
    GithubException,
    GithubRetry,
    InputGitAuthor,
    InputGitTreeElement,
    RateLimitExceededException,
    UnknownObjectException,
)
from github.Repository import Repository
from urllib3.util.retry import Retry

from tests.fakes.github_server import (
    BOT_LOGIN,
    DEFAULT_REPO,
    READ_TOKEN,
    WRITE_TOKEN,
    FakeGitHub,
    seeded,
)

MakeClient = Callable[..., Github]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[FakeGitHub]:
    running = seeded(tmp_path / "github")
    try:
        yield running
    finally:
        running.stop()
    assert running.errors == [], "\n".join(running.errors)


@pytest.fixture
def make_client(server: FakeGitHub) -> Iterator[MakeClient]:
    clients: list[Github] = []

    def make(token: str | None = WRITE_TOKEN, **options: Any) -> Github:
        # PyGithub waits 0.25 s between requests and 1 s between writes unless told not to,
        # and retries through GithubRetry by default: both off unless a test asks.
        settings: dict[str, Any] = {"base_url": server.api_url, "retry": None, "timeout": 5,
                                    "seconds_between_requests": None,
                                    "seconds_between_writes": None, **options}
        auth = Auth.Token(token) if token else None
        client = Github(auth=auth, **settings)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def repo(make_client: MakeClient) -> Repository:
    return make_client().get_repo(DEFAULT_REPO)


def git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def new_branch_commit(repo: Repository, branch: str, files: dict[str, str | None]) -> str:
    """What the action does: blobs/tree/commit on top of main, then a ref for the branch."""
    main = repo.get_git_ref("heads/main").object.sha
    parent = repo.get_git_commit(main)
    elements = [InputGitTreeElement(path, "100644", "blob", content=text) if text is not None
                else InputGitTreeElement(path, "100644", "blob", sha=None)
                for path, text in files.items()]
    tree = repo.create_git_tree(elements, base_tree=parent.tree)
    commit = repo.create_git_commit(f"selfcorrect: {branch}", tree, [parent])
    repo.create_git_ref(f"refs/heads/{branch}", commit.sha)
    return commit.sha


# -- git data -------------------------------------------------------------------------------

def test_blobs_tree_commit_and_ref_make_real_git_objects(server: FakeGitHub, repo: Repository,
                                                         tmp_path: Path) -> None:
    blob = repo.create_git_blob("aGVsbG8gYmluYXJ5AA==", "base64")
    assert repo.get_git_blob(blob.sha).size == len(b"hello binary\0")
    main = repo.get_git_commit(repo.get_git_ref("heads/main").object.sha)
    tree = repo.create_git_tree([
        InputGitTreeElement(".selfcorrect/runs/abc/AUDIT.md", "100644", "blob",
                            content="# Audit\n"),
        InputGitTreeElement("tool.py", "100755", "blob", content="print('hi')\n"),
        InputGitTreeElement("data/blob.bin", "100644", "blob", sha=blob.sha),
        InputGitTreeElement("README.md", "100644", "blob", sha=None),
    ], base_tree=main.tree)
    assert sorted(e.path for e in tree.tree) == [".selfcorrect", "data", "tool.py"]
    author = InputGitAuthor("Self Correct", "bot@example.com", "2024-05-01T12:00:00Z")
    commit = repo.create_git_commit("Add the audit trail", tree, [main], author=author)
    ref = repo.create_git_ref("refs/heads/selfcorrect/abc", commit.sha)

    bare = server.repo_path(DEFAULT_REPO)
    assert git("-C", str(bare), "cat-file", "-t", commit.sha) == "commit\n"
    assert git("-C", str(bare), "rev-parse", "selfcorrect/abc") == f"{commit.sha}\n"
    assert git("-C", str(bare), "log", "-1", "--format=%an <%ae> %aI %s%n%cn",
               "selfcorrect/abc") == ("Self Correct <bot@example.com> 2024-05-01T12:00:00+00:00 "
                                      "Add the audit trail\nSelf Correct\n")
    clone = tmp_path / "clone"
    git("clone", "-q", "--branch", "selfcorrect/abc", str(bare), str(clone))
    assert (clone / ".selfcorrect/runs/abc/AUDIT.md").read_text() == "# Audit\n"
    assert (clone / "data/blob.bin").read_bytes() == b"hello binary\0"
    assert (clone / "tool.py").stat().st_mode & 0o111
    assert not (clone / "README.md").exists()
    assert ref.ref == "refs/heads/selfcorrect/abc"
    assert ref.url.endswith("/git/refs/heads/selfcorrect/abc")
    assert tree.sha == git("-C", str(bare), "rev-parse", "selfcorrect/abc^{tree}").strip()


def test_recursive_tree_and_the_rest_commit_with_its_author_login(repo: Repository) -> None:
    sha = new_branch_commit(repo, "work", {"a/b/c.txt": "deep\n"})
    paths = {e.path: e.type for e in repo.get_git_tree(sha, recursive=True).tree}
    assert paths == {"README.md": "blob", "a": "tree", "a/b": "tree", "a/b/c.txt": "blob"}
    commit = repo.get_commit("work")
    assert commit.sha == sha
    assert commit.author.login == BOT_LOGIN  # GitHub links the noreply email to the bot
    assert [(f.filename, f.status, f.additions) for f in commit.files] == [
        ("a/b/c.txt", "added", 1)]
    assert commit.commit.message == "selfcorrect: work"
    with pytest.raises(GithubException) as missing:
        repo.get_commit("no-such-branch").sha  # noqa: B018 - the read makes the request
    assert missing.value.status == 422
    assert missing.value.data["message"] == "No commit found for SHA: no-such-branch"


def test_tree_errors_are_githubs(repo: Repository) -> None:
    main = repo.get_git_commit(repo.get_git_ref("heads/main").object.sha)
    with pytest.raises(GithubException) as gone:
        repo.create_git_tree([InputGitTreeElement("nope.txt", "100644", "blob", sha=None)],
                             base_tree=main.tree)
    assert (gone.value.status, gone.value.data["message"]) == (422, "GitRPC::BadObjectState")
    with pytest.raises(GithubException) as bad:
        repo.create_git_tree([InputGitTreeElement("x", "100644", "blob", sha="f" * 40)])
    assert bad.value.status == 422


def test_ref_updates_fast_forward_force_and_delete(repo: Repository) -> None:
    first = new_branch_commit(repo, "topic", {"one.txt": "1\n"})
    ref = repo.get_git_ref("heads/topic")
    parent = repo.get_git_commit(first)
    tree = repo.create_git_tree([InputGitTreeElement("two.txt", "100644", "blob", content="2")],
                                base_tree=parent.tree)
    second = repo.create_git_commit("second", tree, [parent])
    ref.edit(second.sha)  # a fast-forward
    assert repo.get_git_ref("heads/topic").object.sha == second.sha
    main = repo.get_git_ref("heads/main").object.sha
    with pytest.raises(GithubException) as rewind:
        ref.edit(main)
    assert (rewind.value.status, rewind.value.data["message"]) == (
        422, "Update is not a fast forward")
    ref.edit(main, force=True)
    assert repo.get_git_ref("heads/topic").object.sha == main
    with pytest.raises(GithubException) as taken:
        repo.create_git_ref("refs/heads/topic", main)
    assert taken.value.data["message"] == "Reference already exists"
    ref.delete()
    with pytest.raises(UnknownObjectException):
        repo.get_git_ref("heads/topic").object  # noqa: B018


def test_a_push_with_the_git_cli_is_seen_at_once(server: FakeGitHub, repo: Repository,
                                                 tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    git("clone", "-q", str(server.repo_path(DEFAULT_REPO)), str(clone))
    (clone / "pushed.txt").write_text("from the CLI\n")
    git("add", "pushed.txt", cwd=clone)
    git("-c", "user.name=Dev", "-c", "user.email=dev@example.com", "commit", "-qm", "push",
        cwd=clone)
    git("push", "-q", "origin", "HEAD:refs/heads/pushed", cwd=clone)
    sha = git("rev-parse", "HEAD", cwd=clone).strip()
    assert repo.get_branch("pushed").commit.sha == sha
    pushed = repo.get_contents("pushed.txt", ref="pushed")
    assert not isinstance(pushed, list)
    assert pushed.decoded_content == b"from the CLI\n"
    assert next(iter(repo.get_commits(sha="pushed"))).sha == sha
    assert repo.get_commit(sha).author is None  # no account has dev@example.com


def test_contents_and_compare(server: FakeGitHub, repo: Repository) -> None:
    server.commit_files(DEFAULT_REPO, "main", {"docs/guide.md": "guide\n"})
    readme = repo.get_contents("README.md")
    assert not isinstance(readme, list)
    assert (readme.decoded_content, readme.encoding, readme.type) == (
        b"# hello-world\n", "base64", "file")
    listing = repo.get_contents("docs")
    assert isinstance(listing, list)
    assert [(c.path, c.type) for c in listing] == [("docs/guide.md", "file")]
    with pytest.raises(UnknownObjectException):
        repo.get_contents("missing.txt")
    new_branch_commit(repo, "ahead", {"new.txt": "x\n"})
    comparison = repo.compare("main", "ahead")
    assert (comparison.status, comparison.ahead_by, comparison.behind_by) == ("ahead", 1, 0)
    assert [f.filename for f in comparison.files] == ["new.txt"]
    assert len(list(comparison.commits)) == 1
    server.commit_files(DEFAULT_REPO, "main", {"later.txt": "y\n"})
    assert repo.compare("main", "ahead").status == "diverged"
    assert repo.compare("ahead", "ahead").status == "identical"
    assert repo.compare("ahead", "main").behind_by == 1


def test_an_empty_repository_answers_409(server: FakeGitHub, make_client: MakeClient) -> None:
    server.add_repo("octo-org/empty", files={})
    with pytest.raises(GithubException) as empty:
        make_client().get_repo("octo-org/empty").get_git_ref("heads/main").object  # noqa: B018
    assert (empty.value.status, empty.value.data["message"]) == (409, "Git Repository is empty.")


# -- pull requests --------------------------------------------------------------------------

def test_pull_request_create_list_duplicate_and_no_commits(server: FakeGitHub,
                                                           repo: Repository) -> None:
    sha = new_branch_commit(repo, "selfcorrect/run-1", {"chart.py": "print(1)\n"})
    pr = repo.create_pull(base="main", head="selfcorrect/run-1", title="A chart",
                          body="Audit in .selfcorrect", draft=True)
    assert (pr.number, pr.state, pr.draft, pr.user.login) == (1, "open", True, BOT_LOGIN)
    assert (pr.head.ref, pr.head.sha, pr.base.ref) == ("selfcorrect/run-1", sha, "main")
    assert pr.head.repo.full_name == DEFAULT_REPO
    assert (pr.mergeable, pr.commits, pr.changed_files, pr.additions) == (True, 1, 1, 1)
    listed = repo.get_pulls(state="open", head="octo-org:selfcorrect/run-1")
    assert [p.number for p in listed] == [1]
    assert list(repo.get_pulls(head="octo-org:other")) == []
    with pytest.raises(GithubException) as dup:
        repo.create_pull(base="main", head="selfcorrect/run-1", title="again")
    assert dup.value.status == 422
    assert dup.value.data["errors"][0]["message"] == (
        "A pull request already exists for octo-org:selfcorrect/run-1.")
    server.add_branch(DEFAULT_REPO, "empty-branch")
    with pytest.raises(GithubException) as nothing:
        repo.create_pull(base="main", head="empty-branch", title="nothing")
    assert nothing.value.data["errors"][0]["message"] == "No commits between main and empty-branch"
    assert [p.number for p in server.pulls(DEFAULT_REPO)] == [1]
    assert server.refs(DEFAULT_REPO)["refs/pull/1/head"] == sha


def test_pull_request_edit_files_and_its_issue(server: FakeGitHub, repo: Repository) -> None:
    issue_number = server.add_issue(DEFAULT_REPO, "Make me a chart")
    new_branch_commit(repo, "fix", {"a.txt": "a\n", "README.md": "# changed\n"})
    pr = repo.create_pull(base="main", head="fix", title="Fix", body="body")
    assert pr.number == issue_number + 1  # issues and PRs share one sequence
    assert sorted((f.filename, f.status) for f in pr.get_files()) == [
        ("README.md", "modified"), ("a.txt", "added")]
    pr.edit(title="Fixed", body="new body")
    assert repo.get_pull(pr.number).title == "Fixed"
    as_issue = repo.get_issue(pr.number)
    assert as_issue.pull_request is not None
    assert repo.get_issue(issue_number).pull_request is None
    note = pr.create_issue_comment("audit attached")
    assert note.html_url.endswith(f"/pull/{pr.number}#issuecomment-{note.id}")
    pr.add_to_labels("selfcorrect")
    assert [label.name for label in repo.get_pull(pr.number).labels] == ["selfcorrect"]
    pr.edit(state="closed")
    assert server.pulls(DEFAULT_REPO, "closed")[0].title == "Fixed"
    assert repo.get_pull(pr.number).state == "closed"
    issue = repo.get_issue(issue_number)
    issue.edit(state="closed", labels=["done"])
    assert (issue.state, issue.state_reason, [x.name for x in issue.labels]) == (
        "closed", "completed", ["done"])


def test_a_fork_pull_request_fetches_the_head_into_the_base(server: FakeGitHub,
                                                            repo: Repository) -> None:
    server.add_repo("contributor/hello-world", fork_of=DEFAULT_REPO)
    sha = server.commit_files("contributor/hello-world", "feature", {"f.txt": "fork\n"})
    number = server.add_pull(DEFAULT_REPO, "contributor:feature", user="contributor")
    pr = repo.get_pull(number)
    assert (pr.head.repo.full_name, pr.head.label, pr.head.sha) == (
        "contributor/hello-world", "contributor:feature", sha)
    assert pr.head.repo.fork
    assert server.git(DEFAULT_REPO, "show", f"refs/pull/{number}/head:f.txt") == "fork\n"
    assert [p.number for p in repo.get_pulls(head="contributor:feature")] == [number]


# -- comments, labels, permissions ----------------------------------------------------------

def test_comments_paginate_with_link_headers(server: FakeGitHub, repo: Repository) -> None:
    number = server.add_issue(DEFAULT_REPO, "Long thread")
    for i in range(34):
        server.add_comment(DEFAULT_REPO, number, f"comment {i}", user="alice")
    issue = repo.get_issue(number)
    mine = issue.create_comment("the 35th")
    assert (mine.user.login, mine.user.type) == (BOT_LOGIN, "Bot")
    assert mine.html_url.endswith(f"/issues/{number}#issuecomment-{mine.id}")
    bodies = [c.body for c in issue.get_comments()]
    assert len(bodies) == 35 and bodies[-1] == "the 35th"
    pages = [r.query.get("page") for r in server.requests_to(
        "GET", f"/repos/{DEFAULT_REPO}/issues/{number}/comments")]
    assert pages == [None, "2"]
    assert issue.get_comments().totalCount == 35  # read from the rel="last" link
    mine.edit("edited")
    assert server.comments(DEFAULT_REPO, number)[-1].body == "edited"
    assert repo.get_issue(number).comments == 35


def test_link_header_has_next_last_first_prev(server: FakeGitHub) -> None:
    number = server.add_issue(DEFAULT_REPO, "Thread")
    for i in range(5):
        server.add_comment(DEFAULT_REPO, number, f"c{i}")
    url = f"{server.api_url}/repos/{DEFAULT_REPO}/issues/{number}/comments?per_page=2&page=2"
    request = urllib.request.Request(url, headers={"Authorization": f"token {WRITE_TOKEN}"})
    with urllib.request.urlopen(request, timeout=5) as answer:
        links = answer.headers["Link"]
        assert answer.headers["Content-Type"] == "application/json; charset=utf-8"
        assert answer.headers["X-GitHub-Request-Id"]
    rels = {part.split('rel="')[1].rstrip('"'): part.split(">")[0].lstrip("<")
            for part in links.split(", ")}
    assert set(rels) == {"prev", "next", "last", "first"}
    assert rels["last"].endswith("per_page=2&page=3")


def test_labels_create_add_remove_and_their_errors(server: FakeGitHub, repo: Repository) -> None:
    number = server.add_issue(DEFAULT_REPO, "Label me")
    created = repo.create_label("selfcorrect: running", "fbca04", "A run is under way")
    assert (created.name, created.color, created.description) == (
        "selfcorrect: running", "fbca04", "A run is under way")
    assert repo.get_label("selfcorrect: running").color == "fbca04"
    with pytest.raises(GithubException) as exists:
        repo.create_label("Selfcorrect: Running", "ffffff")
    assert exists.value.status == 422
    assert exists.value.data["errors"] == [
        {"resource": "Label", "code": "already_exists", "field": "name"}]
    with pytest.raises(UnknownObjectException):
        repo.get_label("nope").color  # noqa: B018
    issue = repo.get_issue(number)
    issue.add_to_labels("selfcorrect: running", "brand new")
    assert server.labels(DEFAULT_REPO, number) == ["selfcorrect: running", "brand new"]
    assert server.label(DEFAULT_REPO, "brand new") is not None  # created on the fly
    issue.remove_from_labels("selfcorrect: running")
    assert [label.name for label in issue.get_labels()] == ["brand new"]
    with pytest.raises(GithubException) as absent:
        issue.remove_from_labels("selfcorrect: running")
    assert (absent.value.status, absent.value.data["message"]) == (404, "Label does not exist")
    assert not isinstance(absent.value, UnknownObjectException)


@pytest.mark.parametrize(("role", "permission"), [
    ("admin", "admin"), ("maintain", "write"), ("write", "write"), ("triage", "read"),
    ("read", "read"), ("none", "none")])
def test_collaborator_permission(server: FakeGitHub, repo: Repository, role: str,
                                 permission: str) -> None:
    server.add_collaborator(DEFAULT_REPO, "alice", role)
    assert repo.get_collaborator_permission("alice") == permission
    assert repo.get_collaborator_role_name("alice") == role


def test_permission_of_non_collaborators_and_unknown_users(server: FakeGitHub,
                                                            repo: Repository) -> None:
    server.add_user("passer-by")
    assert repo.get_collaborator_permission("passer-by") == "read"  # any account, public repo
    assert repo.get_collaborator_permission("octo-org") == "admin"  # the owner
    with pytest.raises(UnknownObjectException):
        repo.get_collaborator_permission("nobody-at-all")


# -- check runs -----------------------------------------------------------------------------

def _note(line: int) -> dict[str, str | int]:
    return {"path": "spec.yml", "start_line": line, "end_line": line,
            "annotation_level": "failure", "message": f"problem {line}"}


def test_check_runs_are_made_listed_and_updated_as_on_github(server: FakeGitHub,
                                                             repo: Repository) -> None:
    sha = new_branch_commit(repo, "selfcorrect/issue-1", {"a.py": "print(1)\n"})
    number = server.add_pull(DEFAULT_REPO, "selfcorrect/issue-1")
    made = repo.create_check_run("selfcorrect / issue #1", sha, external_id="run 1",
                                 conclusion="failure",
                                 output={"title": "t", "summary": "s",
                                         "annotations": [_note(1), _note(2)]})
    assert (made.status, made.conclusion, made.output.annotations_count) == (
        "completed", "failure", 2)
    assert made.completed_at is not None and made.app.slug == "github-actions"
    assert [p.number for p in made.pull_requests] == [number]
    made.edit(conclusion="success", output={"title": "t2", "summary": "s2",
                                            "annotations": [_note(3)]})
    again = repo.get_check_run(made.id)
    assert (again.conclusion, again.output.title, again.output.annotations_count) == (
        "success", "t2", 3)  # annotations are appended
    assert [a.start_line for a in again.get_annotations()] == [1, 2, 3]
    repo.create_check_run("selfcorrect / issue #1", sha, conclusion="failure",
                          output={"title": "t", "summary": "s"})
    commit = repo.get_commit(sha)
    assert [r.conclusion for r in commit.get_check_runs()] == ["failure"]  # latest per name
    assert len(list(commit.get_check_runs(filter="all"))) == 2
    assert [r.id for r in commit.get_check_runs(check_name="other")] == []
    assert [r.external_id for r in server.check_runs(DEFAULT_REPO, sha)] == ["run 1", ""]


def test_check_runs_refuse_what_github_refuses(server: FakeGitHub, repo: Repository,
                                               make_client: MakeClient) -> None:
    sha = repo.get_git_ref("heads/main").object.sha
    refusals: list[tuple[dict[str, Any], int, str]] = [
        ({"head_sha": "0" * 40}, 422, "No commit found for SHA: " + "0" * 40),
        ({"output": {"title": "t", "summary": "s", "annotations": [_note(1)] * 51}}, 422,
         "Invalid request.\n\nNo more than 50 items are allowed; 51 were supplied."),
        ({"output": {"summary": "s"}}, 422, 'Invalid request.\n\n"title" wasn\'t supplied.'),
        ({"output": {"title": "t", "summary": "x" * 65536}}, 422, "longer than 65535"),
        ({"output": {"title": "t", "summary": "s", "annotations": [{"path": "a"}]}}, 422,
         '"start_line", "end_line", "annotation_level", "message" weren\'t supplied.'),
        ({"conclusion": "stale"}, 422, "Validation Failed"),
        ({"conclusion": None, "status": "completed"}, 422, '"conclusion" wasn\'t supplied.'),
    ]
    for change, status, message in refusals:
        body = {"name": "c", "head_sha": sha, "conclusion": "success", **change}
        answer = requests.post(f"{server.api_url}/repos/{DEFAULT_REPO}/check-runs", json=body,
                               headers={"Authorization": f"token {WRITE_TOKEN}"}, timeout=5)
        assert (answer.status_code, message in answer.json()["message"]) == (status, True), \
            (change, answer.json())
    server.add_token("ghs_no_checks", without={"checks"})
    server.add_user("alice")
    server.add_token("ghp_alice", "alice")
    for token, message in [("ghs_no_checks", "Resource not accessible by integration"),
                           (READ_TOKEN, "Resource not accessible by integration"),
                           ("ghp_alice", "You must authenticate via a GitHub App.")]:
        with pytest.raises(GithubException) as denied:
            make_client(token).get_repo(DEFAULT_REPO).create_check_run(
                "c", sha, conclusion="success")
        assert (denied.value.status, denied.value.data["message"]) == (403, message)
    assert server.check_runs(DEFAULT_REPO) == []


# -- tokens ---------------------------------------------------------------------------------

def test_bad_or_missing_token_is_401(server: FakeGitHub, make_client: MakeClient) -> None:
    with pytest.raises(BadCredentialsException) as bad:
        make_client("ghp_wrong").get_repo(DEFAULT_REPO)
    assert bad.value.data == {"message": "Bad credentials",
                              "documentation_url": "https://docs.github.com/rest",
                              "status": "401"}
    with pytest.raises(BadCredentialsException):
        make_client(None).get_repo(DEFAULT_REPO)
    logged = server.requests[-1]
    assert logged.status == 401 and "authorization" not in logged.headers


def test_a_read_only_token_reads_but_cannot_write(server: FakeGitHub,
                                                  make_client: MakeClient) -> None:
    number = server.add_issue(DEFAULT_REPO, "From a fork")
    repo = make_client(READ_TOKEN).get_repo(DEFAULT_REPO)
    assert repo.permissions.push is False and repo.permissions.pull is True
    issue = repo.get_issue(number)
    with pytest.raises(GithubException) as denied:
        issue.create_comment("hello")
    assert (denied.value.status, denied.value.data["message"]) == (
        403, "Resource not accessible by integration")
    assert server.comments(DEFAULT_REPO, number) == []
    assert server.requests[-1].headers["authorization"] == "token ***"


def test_the_bot_cannot_get_the_authenticated_user(make_client: MakeClient,
                                                   server: FakeGitHub) -> None:
    with pytest.raises(GithubException) as denied:
        make_client().get_user().login  # noqa: B018
    assert denied.value.status == 403
    server.add_token("ghp_alice", "alice")
    assert make_client("ghp_alice").get_user().login == "alice"


# -- faults ---------------------------------------------------------------------------------

def test_a_500_is_retried_by_a_urllib3_retry(server: FakeGitHub,
                                             make_client: MakeClient) -> None:
    server.fail_server_error("GET", f"/repos/{DEFAULT_REPO}")
    retry = Retry(total=2, backoff_factor=0, status_forcelist=[500])
    assert make_client(retry=retry).get_repo(DEFAULT_REPO).full_name == DEFAULT_REPO
    assert [r.status for r in server.requests_to("GET", f"/repos/{DEFAULT_REPO}")] == [500, 200]


def test_without_retry_a_500_raises_with_githubs_body(server: FakeGitHub,
                                                      make_client: MakeClient) -> None:
    server.fail("GET", "/repos/*/*", 502)
    with pytest.raises(GithubException) as failed:
        make_client().get_repo(DEFAULT_REPO)
    assert (failed.value.status, failed.value.data["message"]) == (502, "Server Error")


def test_a_502_after_apply_still_created_the_pull_request(server: FakeGitHub,
                                                          repo: Repository) -> None:
    new_branch_commit(repo, "flaky", {"x.txt": "x\n"})
    fault = server.fail("POST", f"/repos/{DEFAULT_REPO}/pulls", 502, after_apply=True)
    with pytest.raises(GithubException) as failed:
        repo.create_pull(base="main", head="flaky", title="T")
    assert failed.value.status == 502 and fault.hits == 1
    assert [(p.number, p.head) for p in server.pulls(DEFAULT_REPO)] == [(1, "octo-org:flaky")]


def test_githubs_default_retry_replays_a_post_into_a_422(server: FakeGitHub,
                                                         make_client: MakeClient) -> None:
    """PyGithub's GithubRetry retries POST on 5xx: a PR made before a 502 comes back as the
    duplicate 422, which the action must read as "it worked"."""
    repo = make_client(retry=GithubRetry(total=3, backoff_factor=0)).get_repo(DEFAULT_REPO)
    new_branch_commit(repo, "flaky", {"x.txt": "x\n"})
    server.fail("POST", f"/repos/{DEFAULT_REPO}/pulls", 502, after_apply=True)
    with pytest.raises(GithubException) as replayed:
        repo.create_pull(base="main", head="flaky", title="T")
    assert replayed.value.status == 422
    assert [r.status for r in server.requests_to("POST", f"/repos/{DEFAULT_REPO}/pulls")] == [
        502, 422]
    assert len(server.pulls(DEFAULT_REPO)) == 1


def test_rate_limit_headers_reach_pygithub(server: FakeGitHub, make_client: MakeClient) -> None:
    gh = make_client()
    gh.get_repo(DEFAULT_REPO)
    remaining, limit = gh.rate_limiting
    assert limit == 5000 and remaining < 5000
    assert gh.rate_limiting_resettime > 0
    assert gh.get_rate_limit().resources.core.remaining == remaining  # /rate_limit is free


def test_primary_rate_limit_fault_and_an_exhausted_bucket(server: FakeGitHub,
                                                          make_client: MakeClient) -> None:
    gh = make_client()
    server.fail_rate_limit("GET", f"/repos/{DEFAULT_REPO}")
    with pytest.raises(RateLimitExceededException):
        gh.get_repo(DEFAULT_REPO)
    assert gh.rate_limiting == (0, 5000)
    server.set_rate_limit(BOT_LOGIN, limit=100, remaining=0)
    with pytest.raises(RateLimitExceededException) as exhausted:
        gh.get_repo(DEFAULT_REPO)
    assert exhausted.value.data["message"].startswith("API rate limit exceeded")


def test_429_is_not_pygithubs_rate_limit_exception(server: FakeGitHub,
                                                   make_client: MakeClient) -> None:
    server.fail_rate_limit("GET", f"/repos/{DEFAULT_REPO}", status=429)
    with pytest.raises(GithubException) as limited:
        make_client().get_repo(DEFAULT_REPO)
    assert limited.value.status == 429
    assert not isinstance(limited.value, RateLimitExceededException)


def test_secondary_rate_limit_is_retried_after_retry_after(server: FakeGitHub,
                                                           make_client: MakeClient) -> None:
    server.fail_secondary_rate_limit("GET", f"/repos/{DEFAULT_REPO}", retry_after=1)
    with pytest.raises(RateLimitExceededException):
        make_client().get_repo(DEFAULT_REPO)
    server.fail_secondary_rate_limit("GET", f"/repos/{DEFAULT_REPO}", retry_after=1)
    gh = make_client(retry=GithubRetry(total=2, backoff_factor=0))
    assert gh.get_repo(DEFAULT_REPO).name == "hello-world"
    headers = [r.status for r in server.requests_to("GET", f"/repos/{DEFAULT_REPO}")]
    assert headers == [403, 403, 200]


def test_a_delay_outlasts_the_client_timeout_and_is_still_applied(server: FakeGitHub) -> None:
    number = server.add_issue(DEFAULT_REPO, "Slow")
    server.delay("POST", f"/repos/{DEFAULT_REPO}/issues/{number}/comments", 0.6)
    url = f"{server.api_url}/repos/{DEFAULT_REPO}/issues/{number}/comments"
    request = urllib.request.Request(url, data=json.dumps({"body": "late"}).encode(),
                                     method="POST",
                                     headers={"Authorization": f"token {WRITE_TOKEN}"})
    with pytest.raises((TimeoutError, socket.timeout, urllib.error.URLError)):
        urllib.request.urlopen(request, timeout=0.2)
    deadline = threading.Event()
    for _ in range(50):
        if server.comments(DEFAULT_REPO, number):
            break
        deadline.wait(0.05)
    assert [c.body for c in server.comments(DEFAULT_REPO, number)] == ["late"]


def test_hang_up_after_apply_leaves_the_comment(server: FakeGitHub, repo: Repository) -> None:
    number = server.add_issue(DEFAULT_REPO, "Dropped")
    server.hang_up("POST", f"/repos/{DEFAULT_REPO}/issues/{number}/comments", after_apply=True)
    with pytest.raises(requests.exceptions.ConnectionError):
        repo.get_issue(number).create_comment("did it land?")
    assert [c.body for c in server.comments(DEFAULT_REPO, number)] == ["did it land?"]


# -- the server itself ----------------------------------------------------------------------

def test_bare_root_and_api_prefix_both_work(server: FakeGitHub, make_client: MakeClient) -> None:
    via_root = make_client(base_url=server.url).get_repo(DEFAULT_REPO)
    assert via_root.url == f"{server.url}/repos/{DEFAULT_REPO}"
    assert via_root.get_issues().totalCount == 0  # follows urls without the prefix
    via_prefix = make_client().get_repo(DEFAULT_REPO)
    assert via_prefix.url == f"{server.api_url}/repos/{DEFAULT_REPO}"


def test_unknown_routes_and_repositories_are_404(server: FakeGitHub,
                                                 make_client: MakeClient) -> None:
    with pytest.raises(UnknownObjectException):
        make_client().get_repo("octo-org/missing")
    request = urllib.request.Request(f"{server.api_url}/no/such/route",
                                     headers={"Authorization": f"token {WRITE_TOKEN}"})
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(request, timeout=5)
    assert missing.value.code == 404
    assert json.loads(missing.value.read())["message"] == "Not Found"


def test_conditional_requests_get_304(repo: Repository) -> None:
    assert repo.update() is False  # same ETag: GitHub answers 304 Not Modified


def test_parallel_comments_get_distinct_ids(server: FakeGitHub, repo: Repository) -> None:
    number = server.add_issue(DEFAULT_REPO, "Busy")
    issue = repo.get_issue(number)
    ids: list[int] = []
    lock = threading.Lock()

    def post(i: int) -> None:
        comment = issue.create_comment(f"parallel {i}")
        with lock:
            ids.append(comment.id)

    threads = [threading.Thread(target=post, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert len(set(ids)) == 8
    assert len(server.comments(DEFAULT_REPO, number)) == 8


def test_requests_log_keeps_bodies_and_statuses(server: FakeGitHub, repo: Repository) -> None:
    number = server.add_issue(DEFAULT_REPO, "Logged")
    repo.get_issue(number).create_comment("hello")
    posted = server.requests_to("POST", "/repos/*/issues/*/comments")
    assert [(r.body, r.status, r.login) for r in posted] == [({"body": "hello"}, 201, BOT_LOGIN)]


def test_event_payloads_match_what_the_api_serves(server: FakeGitHub,
                                                  repo: Repository) -> None:
    new_branch_commit(repo, "topic", {"t.txt": "t\n"})
    number = server.add_pull(DEFAULT_REPO, "topic", user="alice")
    comment_id = server.add_comment(DEFAULT_REPO, number, "/selfcorrect plot it", user="bob")
    event = server.event("issue_comment", DEFAULT_REPO, number=number, comment_id=comment_id)
    assert (event["action"], event["sender"]["login"]) == ("created", "bob")
    assert event["issue"]["pull_request"]["url"].endswith(f"/pulls/{number}")
    assert "permissions" not in event["repository"]
    fetched = repo.get_issue(event["issue"]["number"]).get_comment(event["comment"]["id"])
    assert fetched.body == "/selfcorrect plot it"
    opened = server.event("pull_request", DEFAULT_REPO, number=number)
    assert opened["pull_request"]["head"]["sha"] == repo.get_pull(number).head.sha
