"""PyGithubForge against the GitHub stand-in, through the real PyGithub client: the happy
path of every Forge method (checked in the stand-in's state and its bare git repository),
retries and the waits they ask for, writes that stay single when GitHub applied a request
but answered with an error, and the ForgeErrors users see."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest

from selfcorrect_action.github.forge import (
    CheckRun,
    CheckRunOutput,
    DraftsRefused,
    FileChange,
    Forge,
    ForgeError,
    Permission,
)
from selfcorrect_action.github.pygithub_forge import PyGithubForge
from tests.fakes.github_server import (
    APP_LOGIN,
    APP_TOKEN,
    BOT_LOGIN,
    DEFAULT_REPO,
    READ_TOKEN,
    WRITE_TOKEN,
    FakeGitHub,
)
from tests.unit.github.conftest import MakeForge

REPO_PATH = f"/repos/{DEFAULT_REPO}"


def main_sha(gh: FakeGitHub) -> str:
    return gh.refs(DEFAULT_REPO)["refs/heads/main"]


def raised(call: Callable[[], object]) -> ForgeError:
    with pytest.raises(ForgeError) as caught:
        call()
    return caught.value


# -- the seam -------------------------------------------------------------------------------

def test_it_is_a_forge_and_constructing_makes_no_request(fake_github: FakeGitHub) -> None:
    forge: Forge = PyGithubForge(DEFAULT_REPO, token=WRITE_TOKEN, api_url=fake_github.api_url)
    assert forge.repository == DEFAULT_REPO
    assert fake_github.requests == []
    assert forge.default_branch() == "main"


def test_a_bad_repository_name_or_no_token_fails_at_once() -> None:
    assert "owner/name" in raised(lambda: PyGithubForge("hello", token=WRITE_TOKEN)).message
    assert "no GitHub token" in raised(lambda: PyGithubForge(DEFAULT_REPO, token=" ")).message


# -- reads ----------------------------------------------------------------------------------

def test_issue_and_pull_request(fake_github: FakeGitHub, forge: PyGithubForge) -> None:
    number = fake_github.add_issue(DEFAULT_REPO, "Make a chart", "of sales", user="alice",
                                   labels=["selfcorrect"])
    issue = forge.issue(number)
    assert (issue.number, issue.title, issue.body, issue.author) == (
        number, "Make a chart", "of sales", "alice")
    assert issue.labels == ("selfcorrect",) and not issue.is_pull_request
    assert issue.html_url.endswith(f"/{DEFAULT_REPO}/issues/{number}")

    head = fake_github.add_branch(DEFAULT_REPO, "topic", files={
        "new.py": "print(1)\n", "README.md": "changed\n"})
    pr_number = fake_github.add_pull(DEFAULT_REPO, "topic", title="Topic", body=None,
                                     draft=True)
    pull = forge.pull_request(pr_number)
    assert (pull.number, pull.title, pull.body, pull.head_branch, pull.head_sha) == (
        pr_number, "Topic", "", "topic", head)
    assert (pull.head_repository, pull.base_branch, pull.draft, pull.state) == (
        DEFAULT_REPO, "main", True, "open")
    assert forge.issue(pr_number).is_pull_request
    assert sorted(forge.pull_request_files(pr_number)) == ["README.md", "new.py"]


def test_pull_request_files_skip_removed_ones(fake_github: FakeGitHub,
                                              forge: PyGithubForge) -> None:
    fake_github.add_branch(DEFAULT_REPO, "cleanup", files={"README.md": None, "a/b.py": "b"})
    number = fake_github.add_pull(DEFAULT_REPO, "cleanup")
    assert forge.pull_request_files(number) == ["a/b.py"]


def test_branch_head_and_its_author_login(fake_github: FakeGitHub,
                                          forge: PyGithubForge) -> None:
    assert forge.branch_head("no-such-branch") is None
    fake_github.add_user("octocat")
    sha = fake_github.commit_files(DEFAULT_REPO, "human/work", {"h.txt": "hi\n"},
                                   message="A human's commit", author="octocat")
    head = forge.branch_head("human/work")
    assert head is not None
    assert (head.sha, head.message, head.author_login) == (sha, "A human's commit", "octocat")


def test_whether_a_branch_is_protected(fake_github: FakeGitHub,
                                      forge: PyGithubForge) -> None:
    fake_github.add_branch(DEFAULT_REPO, "develop")
    assert forge.branch_protected("develop") is False
    fake_github.protect_branch(DEFAULT_REPO, "develop")
    assert forge.branch_protected("develop") is True
    assert forge.branch_protected("no-such-branch") is False


def test_read_file(fake_github: FakeGitHub, forge: PyGithubForge) -> None:
    fake_github.add_branch(DEFAULT_REPO, "docs", files={"docs/ünï.md": "héllo ✓\n"})
    assert forge.read_file("docs/ünï.md", "docs") == "héllo ✓\n"
    assert forge.read_file("README.md", "main") == "# hello-world\n"
    assert forge.read_file("docs/ünï.md", "main") is None  # not on that branch
    assert forge.read_file("README.md", "no-such-ref") is None
    assert forge.read_file("docs", "docs") is None  # a directory


def test_read_file_over_a_megabyte_comes_from_its_blob(fake_github: FakeGitHub,
                                                        forge: PyGithubForge) -> None:
    blob = fake_github.git(DEFAULT_REPO, "rev-parse", "main:README.md").strip()
    # What GitHub answers for a file of 1-100 MB: no content, encoding "none".
    big = {"type": "file", "encoding": "none", "content": "", "size": 2_000_000,
           "name": "README.md", "path": "README.md", "sha": blob}
    fake_github.fail("GET", f"{REPO_PATH}/contents/README.md", 200, body=big)
    assert forge.read_file("README.md", "main") == "# hello-world\n"
    assert len(fake_github.requests_to("GET", f"{REPO_PATH}/git/blobs/{blob}")) == 1


@pytest.mark.parametrize(("role", "legacy"), [
    ("admin", "admin"), ("maintain", "write"), ("write", "write"), ("triage", "read"),
    ("read", "read"), ("none", "none")])
def test_permission_of_each_role(fake_github: FakeGitHub, forge: PyGithubForge, role: str,
                                 legacy: str) -> None:
    fake_github.add_collaborator(DEFAULT_REPO, "alice", role)
    assert forge.permission("alice") == Permission(login="alice", permission=legacy,
                                                   role_name=role)


def test_permission_of_the_owner_an_outsider_and_an_unknown_user(
        fake_github: FakeGitHub, forge: PyGithubForge) -> None:
    assert forge.permission("octo-org").role_name == "admin"
    fake_github.add_user("bystander")
    assert forge.permission("bystander").permission == "read"  # a public repository
    assert forge.permission("nobody-at-all") == Permission(login="nobody-at-all",
                                                           permission="none")
    # One request per answer: PyGithub's helpers would make two.
    assert len(fake_github.requests_to("GET", f"{REPO_PATH}/collaborators/*/permission")) == 3


# -- comments -------------------------------------------------------------------------------

def test_comments_create_find_and_edit(fake_github: FakeGitHub, forge: PyGithubForge) -> None:
    number = fake_github.add_issue(DEFAULT_REPO, "Task")
    assert forge.find_comment(number, "<!-- selfcorrect -->") is None
    first = forge.create_comment(number, "one <!-- selfcorrect -->")
    fake_github.add_comment(DEFAULT_REPO, number, "unrelated")
    second = forge.create_comment(number, "two <!-- selfcorrect -->")
    assert (second.author, second.body) == (BOT_LOGIN, "two <!-- selfcorrect -->")
    assert second.id > first.id and second.html_url
    assert forge.find_comment(number, "<!-- selfcorrect -->") == second  # the newest
    edited = forge.edit_comment(first.id, "edited <!-- selfcorrect -->")
    assert (edited.id, edited.body) == (first.id, "edited <!-- selfcorrect -->")
    assert [c.body for c in fake_github.comments(DEFAULT_REPO, number)] == [
        "edited <!-- selfcorrect -->", "unrelated", "two <!-- selfcorrect -->"]


def test_a_marker_in_someone_elses_comment_is_not_ours(
    fake_github: FakeGitHub, forge: PyGithubForge
) -> None:
    """Anyone can paste a hidden marker: a comment is ours only if our account wrote it,
    and an empty marker finds nothing (it is in every body)."""
    number = fake_github.add_issue(DEFAULT_REPO, "Spoofed")
    mine = forge.create_comment(number, "report <!-- selfcorrect:report x -->")
    fake_github.add_user("mallory")
    fake_github.add_comment(DEFAULT_REPO, number, "fake <!-- selfcorrect:report x -->",
                            user="mallory")
    assert forge.find_comment(number, "<!-- selfcorrect:report x -->") == mine
    assert forge.find_comment(number, "") is None
    assert forge.identity() == BOT_LOGIN


# -- who the token is ------------------------------------------------------------------------

def test_an_apps_installation_token_is_told_apart_from_the_actions_bot(
    fake_github: FakeGitHub, make_forge: MakeForge
) -> None:
    """GET /user refuses an installation token; GraphQL's viewer names it. Before, the
    forge took it for github-actions[bot] and missed the app's own comments."""
    number = fake_github.add_issue(DEFAULT_REPO, "Task")
    fake_github.add_comment(DEFAULT_REPO, number, "app's <!-- selfcorrect:report a -->",
                            user=APP_LOGIN)
    fake_github.add_comment(DEFAULT_REPO, number, "bot's <!-- selfcorrect:report a -->",
                            user=BOT_LOGIN)
    app = make_forge(token=APP_TOKEN)
    found = app.find_comment(number, "<!-- selfcorrect:report a -->")
    assert found is not None and found.author == APP_LOGIN
    assert app.identity() == APP_LOGIN
    assert [r.status for r in fake_github.requests_to("GET", "/user")] == [403]
    assert len(fake_github.requests_to("POST", "/graphql")) == 1  # asked once, then known
    actions = make_forge(token=WRITE_TOKEN)
    found = actions.find_comment(number, "<!-- selfcorrect:report a -->")
    assert found is not None and found.author == BOT_LOGIN


def test_a_given_bot_login_is_taken_without_asking(fake_github: FakeGitHub,
                                                   make_forge: MakeForge) -> None:
    app = make_forge(token=APP_TOKEN, bot_login=APP_LOGIN)
    assert app.identity() == APP_LOGIN
    assert fake_github.requests == []


def test_a_persons_token_is_its_user(fake_github: FakeGitHub, make_forge: MakeForge) -> None:
    fake_github.add_token("ghp_maria_0123456789", "maria")
    assert make_forge(token="ghp_maria_0123456789").identity() == "maria"
    assert fake_github.requests_to("POST", "/graphql") == []


def test_when_nothing_answers_who_the_token_is_its_first_comment_tells(
    fake_github: FakeGitHub, make_forge: MakeForge
) -> None:
    """An Enterprise server without GraphQL: the Actions bot until the forge's first
    comment shows who wrote it (GitHub's answer names the author and the app)."""
    fake_github.fail("POST", "/graphql", 404, times=None)
    number = fake_github.add_issue(DEFAULT_REPO, "Task")
    app = make_forge(token=APP_TOKEN)
    assert app.identity() == BOT_LOGIN
    made = app.create_comment(number, "report <!-- selfcorrect:report b -->")
    assert made.author == APP_LOGIN and app.identity() == APP_LOGIN
    assert app.find_comment(number, "<!-- selfcorrect:report b -->") == made


def test_every_request_names_the_api_version(fake_github: FakeGitHub,
                                             make_forge: MakeForge) -> None:
    forge = make_forge(token=APP_TOKEN)
    forge.identity()
    forge.default_branch()
    forge.find_open_pull_request("selfcorrect/issue-1")
    versions = {r.headers.get("x-github-api-version") for r in fake_github.requests}
    assert versions == {"2022-11-28"}, versions


def test_find_comment_reads_every_page(fake_github: FakeGitHub, forge: PyGithubForge) -> None:
    number = fake_github.add_issue(DEFAULT_REPO, "Busy")
    for i in range(250):
        marked = i in (3, 240)
        fake_github.add_comment(DEFAULT_REPO, number, f"#{i}" + (" <!-- m -->" if marked else ""),
                                user=BOT_LOGIN)
    found = forge.find_comment(number, "<!-- m -->")
    assert found is not None and found.body == "#240 <!-- m -->"
    pages = fake_github.requests_to("GET", f"{REPO_PATH}/issues/{number}/comments")
    assert [r.query.get("page", "1") for r in pages] == ["1", "2", "3"]


# -- labels ---------------------------------------------------------------------------------

def test_labels_are_idempotent(fake_github: FakeGitHub, forge: PyGithubForge) -> None:
    number = fake_github.add_issue(DEFAULT_REPO, "Task")
    for _ in range(2):
        forge.ensure_label("selfcorrect:running", color="#fbca04", description="working")
    label = fake_github.label(DEFAULT_REPO, "selfcorrect:running")
    assert label is not None and (label.color, label.description) == ("fbca04", "working")
    assert len(fake_github.requests_to("POST", f"{REPO_PATH}/labels")) == 1
    forge.add_labels(number, ["selfcorrect:running", "a/b"])
    forge.add_labels(number, ["selfcorrect:running"])
    forge.add_labels(number, [])
    assert fake_github.labels(DEFAULT_REPO, number) == ["selfcorrect:running", "a/b"]
    forge.remove_label(number, "a/b")  # a slash in a name is quoted
    forge.remove_label(number, "a/b")  # no longer on the issue
    forge.remove_label(number, "never-existed")
    assert fake_github.labels(DEFAULT_REPO, number) == ["selfcorrect:running"]


def test_a_label_made_meanwhile_is_success(fake_github: FakeGitHub, forge: PyGithubForge) -> None:
    fake_github.add_label(DEFAULT_REPO, "selfcorrect:passed")
    # GitHub says it is missing, then that it exists: another run made it in between.
    fake_github.fail("GET", f"{REPO_PATH}/labels/*", 404)
    forge.ensure_label("selfcorrect:passed", color="0e8a16", description="passed")
    assert [r.status for r in fake_github.requests_to("POST", f"{REPO_PATH}/labels")] == [422]


# -- commits and branches -------------------------------------------------------------------

def commit(forge: PyGithubForge, parent: str, files: list[FileChange], message: str) -> str:
    """A commit of `files` on `parent`, as apply.py makes one: the tree, then the commit."""
    return forge.write_commit(parent, forge.write_tree(parent, files), message)


def test_commits_create_branch_and_a_second_commit(fake_github: FakeGitHub,
                                                        forge: PyGithubForge) -> None:
    base = main_sha(fake_github)
    first = commit(forge, base, [
        FileChange(path="tools/chart.py", content="print('chart')\n"),
        FileChange(path=".selfcorrect/runs/r1/AUDIT.md", content="# Audit ✓\n"),
        FileChange(path="tests/test_chart.py", content="print('chart')\n"),
    ], "selfcorrect: chart")
    assert "selfcorrect/issue-1" not in fake_github.refs(DEFAULT_REPO, "refs/heads/")
    forge.create_branch("selfcorrect/issue-1", first)

    def show(spec: str) -> str:
        return fake_github.git(DEFAULT_REPO, "show", spec)

    assert show("selfcorrect/issue-1:tools/chart.py") == "print('chart')\n"
    assert show("selfcorrect/issue-1:.selfcorrect/runs/r1/AUDIT.md") == "# Audit ✓\n"
    assert show("selfcorrect/issue-1:README.md") == "# hello-world\n"
    assert fake_github.git(DEFAULT_REPO, "rev-parse", f"{first}^").strip() == base
    # The same content twice is one blob.
    assert len(fake_github.requests_to("POST", f"{REPO_PATH}/git/blobs")) == 2

    second = commit(forge, first, [FileChange(path="tools/chart.py", content="v2\n")],
                                "selfcorrect: chart v2")
    forge.move_branch("selfcorrect/issue-1", second)
    assert show("selfcorrect/issue-1:tools/chart.py") == "v2\n"
    assert show("selfcorrect/issue-1:tests/test_chart.py") == "print('chart')\n"  # kept
    assert fake_github.git(DEFAULT_REPO, "rev-parse", f"{second}^").strip() == first
    head = forge.branch_head("selfcorrect/issue-1")
    assert head is not None and (head.sha, head.message) == (second, "selfcorrect: chart v2")
    assert head.author_login == BOT_LOGIN
    forge.move_branch("selfcorrect/issue-1", second)  # already there: nothing to do


def test_a_branch_is_deleted_only_where_it_still_points(fake_github: FakeGitHub,
                                                         forge: PyGithubForge) -> None:
    base = main_sha(fake_github)
    forge.create_branch("selfcorrect/gone", base)
    assert forge.delete_ref("refs/heads/selfcorrect/gone", base)
    assert "refs/heads/selfcorrect/gone" not in fake_github.refs(DEFAULT_REPO)
    assert forge.delete_ref("refs/heads/selfcorrect/gone", base)  # already gone: fine
    forge.create_branch("selfcorrect/kept", base)
    pushed = fake_github.commit_files(DEFAULT_REPO, "selfcorrect/kept", {"mine.py": "x"})
    assert not forge.delete_ref("refs/heads/selfcorrect/kept", base)
    assert fake_github.refs(DEFAULT_REPO)["refs/heads/selfcorrect/kept"] == pushed


def test_a_refused_draft_is_its_own_error(fake_github: FakeGitHub,
                                          forge: PyGithubForge) -> None:
    fake_github.set_visibility(DEFAULT_REPO, private=True, plan="free")
    sha = commit(forge, main_sha(fake_github), [FileChange(path="a.py", content="x")], "m")
    forge.create_branch("selfcorrect/issue-3", sha)
    with pytest.raises(DraftsRefused) as caught:
        forge.create_pull_request(head_branch="selfcorrect/issue-3", base_branch="main",
                                  title="t", body="b", draft=True)
    assert caught.value.status == 422 and "GitHub Free and Pro" in (caught.value.hint or "")
    made = forge.create_pull_request(head_branch="selfcorrect/issue-3", base_branch="main",
                                     title="t", body="b", draft=False)
    assert not made.draft


def test_create_branch_twice(fake_github: FakeGitHub, forge: PyGithubForge) -> None:
    base = main_sha(fake_github)
    other = fake_github.commit_files(DEFAULT_REPO, "elsewhere", {"x": "x"})
    forge.create_branch("twice", base)
    forge.create_branch("twice", base)  # already at that sha: success
    error = raised(lambda: forge.create_branch("twice", other))
    assert error.status == 422 and "Reference already exists" in error.message
    assert error.hint is not None and f"already exists at {base[:7]}" in error.hint
    assert fake_github.refs(DEFAULT_REPO)["refs/heads/twice"] == base


def test_move_branch_after_a_human_pushed(fake_github: FakeGitHub, forge: PyGithubForge) -> None:
    base = main_sha(fake_github)
    ours = commit(forge, base, [FileChange(path="a.py", content="1")], "selfcorrect: 1")
    forge.create_branch("selfcorrect/issue-2", ours)
    mine = commit(forge, ours, [FileChange(path="a.py", content="2")], "selfcorrect: 2")
    fake_github.add_user("octocat")
    human = fake_github.commit_files(DEFAULT_REPO, "selfcorrect/issue-2", {"fix.py": "ok"},
                                     author="octocat")
    error = raised(lambda: forge.move_branch("selfcorrect/issue-2", mine))
    assert error.status == 422
    assert "a commit was pushed to selfcorrect/issue-2 meanwhile" in error.message
    assert fake_github.refs(DEFAULT_REPO)["refs/heads/selfcorrect/issue-2"] == human
    missing = raised(lambda: forge.move_branch("no-such-branch", mine))
    assert missing.status == 404 and "no branch no-such-branch" in (missing.hint or "")


# -- pull requests --------------------------------------------------------------------------

def test_pull_request_find_create_and_edit(fake_github: FakeGitHub, forge: PyGithubForge) -> None:
    fake_github.add_branch(DEFAULT_REPO, "selfcorrect/issue-3", files={"c.py": "c"})
    assert forge.find_open_pull_request("selfcorrect/issue-3") is None
    made = forge.create_pull_request(head_branch="selfcorrect/issue-3", base_branch="main",
                                     title="Chart", body="Closes #3", draft=True)
    assert (made.title, made.body, made.draft, made.head_branch) == (
        "Chart", "Closes #3", True, "selfcorrect/issue-3")
    assert forge.find_open_pull_request("selfcorrect/issue-3") == made
    edited = forge.edit_pull_request(made.number, title="Chart v2", body="Closes #3 (v2)")
    assert (edited.number, edited.title, edited.body) == (made.number, "Chart v2",
                                                          "Closes #3 (v2)")
    # Creating it again finds the open one instead of failing on GitHub's duplicate 422.
    again = forge.create_pull_request(head_branch="selfcorrect/issue-3", base_branch="main",
                                      title="Chart", body="x", draft=False)
    assert again.number == made.number
    assert [p.title for p in fake_github.pulls(DEFAULT_REPO)] == ["Chart v2"]


def test_a_422_lists_githubs_validation_errors(forge: PyGithubForge) -> None:
    error = raised(lambda: forge.create_pull_request(
        head_branch="no-such-branch", base_branch="main", title="T", body="", draft=False))
    assert error.status == 422
    assert "creating the pull request for no-such-branch failed" in error.message
    assert error.hint == "GitHub's validation errors: PullRequest.head: invalid"


# -- retries --------------------------------------------------------------------------------

@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_a_5xx_once_is_retried(fake_github: FakeGitHub, forge: PyGithubForge,
                               waits: list[float], status: int) -> None:
    number = fake_github.add_issue(DEFAULT_REPO, "Flaky")
    fake_github.fail_server_error("GET", f"{REPO_PATH}/issues/{number}", status=status)
    assert forge.issue(number).title == "Flaky"
    assert waits == [1.0]


def test_a_persistent_5xx_gives_up_after_5_attempts(fake_github: FakeGitHub,
                                                    forge: PyGithubForge,
                                                    waits: list[float]) -> None:
    fake_github.fail_server_error("GET", f"{REPO_PATH}/branches/*", status=503, times=None)
    error = raised(lambda: forge.branch_head("main"))
    assert error.status == 503
    assert error.message == ("reading the branch main failed: GitHub answered 503: Service "
                             "Unavailable (after 5 attempts)")
    assert error.hint is not None and "githubstatus.com" in error.hint
    assert waits == [1.0, 2.0, 4.0, 8.0]
    assert len(fake_github.requests_to("GET", f"{REPO_PATH}/branches/*")) == 5


def test_backoff_has_full_jitter(fake_github: FakeGitHub, make_forge: MakeForge,
                                 waits: list[float]) -> None:
    fake_github.fail_server_error("GET", f"{REPO_PATH}/branches/*", times=3)
    make_forge(jitter=lambda: 0.25).branch_head("main")
    assert waits == [0.25, 0.5, 1.0]


def test_a_4xx_is_not_retried(fake_github: FakeGitHub, forge: PyGithubForge,
                              waits: list[float]) -> None:
    error = raised(lambda: forge.issue(999))
    assert (error.status, waits) == (404, [])
    assert error.message == "reading issue #999 failed: GitHub answered 404: Not Found"
    assert len(fake_github.requests_to("GET", f"{REPO_PATH}/issues/999")) == 1


def test_no_answer_and_a_timeout_are_retried(fake_github: FakeGitHub, make_forge: MakeForge,
                                             waits: list[float]) -> None:
    number = fake_github.add_issue(DEFAULT_REPO, "Unreliable network")
    fake_github.hang_up("GET", f"{REPO_PATH}/issues/{number}")
    forge = make_forge(timeout_s=0.2)  # rounded up to PyGithub's whole second
    assert forge.issue(number).title == "Unreliable network"
    fake_github.delay("GET", f"{REPO_PATH}/issues/{number}", 1.5)
    started = time.monotonic()
    assert forge.issue(number).title == "Unreliable network"
    assert 0.9 < time.monotonic() - started < 1.5
    assert waits == [1.0, 1.0]


def test_nothing_listening_gives_up_with_the_api_url_in_the_hint(make_forge: MakeForge,
                                                                 waits: list[float]) -> None:
    error = raised(lambda: make_forge(api_url="http://127.0.0.1:9").default_branch())
    assert error.status is None and "no answer from GitHub (ConnectionError" in error.message
    assert error.hint is not None and "http://127.0.0.1:9" in error.hint
    assert len(waits) == 4


@pytest.mark.parametrize("status", [403, 429])
def test_a_primary_rate_limit_waits_until_the_reset(fake_github: FakeGitHub,
                                                    make_forge: MakeForge,
                                                    waits: list[float], status: int) -> None:
    fault = fake_github.fail_rate_limit("GET", f"{REPO_PATH}/issues/*", status=status,
                                        reset_in=30)
    reset = int(fault.headers["X-RateLimit-Reset"])
    number = fake_github.add_issue(DEFAULT_REPO, "Busy day")
    assert make_forge(clock=lambda: reset - 30.0).issue(number).title == "Busy day"
    assert waits == [31.0]  # until the reset, and a second more


def test_a_secondary_rate_limit_waits_retry_after_or_a_minute(fake_github: FakeGitHub,
                                                              forge: PyGithubForge,
                                                              waits: list[float]) -> None:
    number = fake_github.add_issue(DEFAULT_REPO, "Bursty")
    fake_github.fail_secondary_rate_limit("POST", f"{REPO_PATH}/issues/*/comments",
                                          retry_after=7)
    fake_github.fail_secondary_rate_limit("POST", f"{REPO_PATH}/issues/*/comments",
                                          retry_after=None)
    forge.create_comment(number, "finally")
    assert waits == [7.0, 60.0]
    assert len(fake_github.comments(DEFAULT_REPO, number)) == 1


def test_retry_after_is_honoured_on_a_5xx_and_any_403(fake_github: FakeGitHub,
                                                     forge: PyGithubForge,
                                                     waits: list[float]) -> None:
    fake_github.fail("GET", f"{REPO_PATH}/branches/*", 503, headers={"Retry-After": "3"})
    fake_github.fail("GET", f"{REPO_PATH}/branches/*", 403, headers={"Retry-After": "5"})
    assert forge.branch_head("main") is not None
    assert waits == [3.0, 5.0]


def test_a_wait_longer_than_max_wait_gives_up_at_once(fake_github: FakeGitHub,
                                                      make_forge: MakeForge,
                                                      waits: list[float]) -> None:
    fault = fake_github.fail_rate_limit("GET", f"{REPO_PATH}/issues/*", reset_in=3600)
    reset = int(fault.headers["X-RateLimit-Reset"])
    forge = make_forge(clock=lambda: reset - 3600.0, max_wait_s=120)
    error = raised(lambda: forge.issue(1))
    assert error.status == 403 and waits == []
    assert error.message.startswith(
        "reading issue #1 failed: GitHub asks us to wait 3601 s before trying again (its "
        "hourly rate limit), longer than the 120 s we wait; it answered 403: API rate limit "
        "exceeded")
    fake_github.fail_secondary_rate_limit("GET", f"{REPO_PATH}/issues/*", retry_after=600)
    error = raised(lambda: forge.issue(1))
    assert "wait 600 s before trying again (its secondary rate limit)" in error.message
    assert waits == []


# -- writes GitHub applied but answered with an error ---------------------------------------

@pytest.mark.parametrize("fault", ["502", "hang-up"])
def test_a_pull_request_applied_before_a_failure_is_made_once(
        fake_github: FakeGitHub, forge: PyGithubForge, waits: list[float], fault: str) -> None:
    fake_github.add_branch(DEFAULT_REPO, "selfcorrect/issue-12", files={"x.py": "x"})
    if fault == "502":
        fake_github.fail("POST", f"{REPO_PATH}/pulls", 502, after_apply=True)
    else:
        fake_github.hang_up("POST", f"{REPO_PATH}/pulls", after_apply=True)
    made = forge.create_pull_request(head_branch="selfcorrect/issue-12", base_branch="main",
                                     title="Fix", body="b", draft=False)
    pulls = fake_github.pulls(DEFAULT_REPO)
    assert [(p.number, p.head) for p in pulls] == [(made.number, "octo-org:selfcorrect/issue-12")]
    assert len(fake_github.requests_to("POST", f"{REPO_PATH}/pulls")) == 1
    assert waits == [1.0]


@pytest.mark.parametrize("fault", ["502", "hang-up"])
def test_a_comment_applied_before_a_failure_is_made_once(
        fake_github: FakeGitHub, forge: PyGithubForge, fault: str) -> None:
    number = fake_github.add_issue(DEFAULT_REPO, "Task")
    path = f"{REPO_PATH}/issues/{number}/comments"
    forge.create_comment(number, "an older run's report")
    if fault == "502":
        fake_github.fail("POST", path, 502, after_apply=True)
    else:
        fake_github.hang_up("POST", path, after_apply=True)
    made = forge.create_comment(number, "report <!-- selfcorrect:run=7 -->")
    assert [c.id for c in fake_github.comments(DEFAULT_REPO, number)][-1] == made.id
    assert len(fake_github.comments(DEFAULT_REPO, number)) == 2
    assert len(fake_github.requests_to("POST", path)) == 2  # the older one, and ours once


def test_a_comment_not_applied_before_a_failure_is_sent_again(
        fake_github: FakeGitHub, forge: PyGithubForge) -> None:
    number = fake_github.add_issue(DEFAULT_REPO, "Task")
    fake_github.fail("POST", f"{REPO_PATH}/issues/{number}/comments", 502)
    made = forge.create_comment(number, "report")
    assert [c.id for c in fake_github.comments(DEFAULT_REPO, number)] == [made.id]


def test_branch_writes_applied_before_a_failure_succeed(fake_github: FakeGitHub,
                                                        forge: PyGithubForge) -> None:
    base = main_sha(fake_github)
    fake_github.fail("POST", f"{REPO_PATH}/git/refs", 502, after_apply=True)
    forge.create_branch("flaky", base)
    assert len(fake_github.requests_to("POST", f"{REPO_PATH}/git/refs")) == 1
    after = commit(forge, base, [FileChange(path="f.txt", content="f")], "f")
    fake_github.fail("PATCH", f"{REPO_PATH}/git/refs/heads/flaky", 502, after_apply=True)
    forge.move_branch("flaky", after)
    assert fake_github.refs(DEFAULT_REPO)["refs/heads/flaky"] == after
    assert len(fake_github.requests_to("PATCH", f"{REPO_PATH}/git/refs/heads/flaky")) == 1


def test_commits_retry_each_step(fake_github: FakeGitHub, forge: PyGithubForge,
                                        waits: list[float]) -> None:
    fake_github.fail("POST", f"{REPO_PATH}/git/trees", 502, after_apply=True)
    fake_github.fail("POST", f"{REPO_PATH}/git/commits", 500)
    sha = commit(forge, main_sha(fake_github), [FileChange(path="deep/er/f.txt",
                                                                content="f")], "m")
    assert fake_github.git(DEFAULT_REPO, "show", f"{sha}:deep/er/f.txt") == "f"
    assert len(fake_github.requests_to("POST", f"{REPO_PATH}/git/blobs")) == 1
    assert waits == [1.0, 1.0]


# Every method, its request failing: a ForgeError, never PyGithub's exception. The repository
# itself answers, so each method's own (lazily made) requests are the ones that fail.
CHECK = CheckRunOutput(name="c", conclusion="success", title="t", summary="s",
                       external_id="e")
EVERY_METHOD: dict[str, Callable[[PyGithubForge, str], object]] = {
    "permission": lambda f, sha: f.permission("alice"),
    "issue": lambda f, sha: f.issue(1),
    "pull_request": lambda f, sha: f.pull_request(1),
    "pull_request_files": lambda f, sha: f.pull_request_files(1),
    "find_comment": lambda f, sha: f.find_comment(1, "<!-- m -->"),
    "create_comment": lambda f, sha: f.create_comment(1, "b"),
    "edit_comment": lambda f, sha: f.edit_comment(1, "b"),
    "ensure_label": lambda f, sha: f.ensure_label("l", color="ededed", description="d"),
    "add_labels": lambda f, sha: f.add_labels(1, ["l"]),
    "remove_label": lambda f, sha: f.remove_label(1, "l"),
    "branch_head": lambda f, sha: f.branch_head("main"),
    "write_tree": lambda f, sha: f.write_tree(sha, [FileChange(path="p", content="c")]),
    "write_commit": lambda f, sha: f.write_commit(sha, "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
                                                  "m"),
    "create_branch": lambda f, sha: f.create_branch("b", sha),
    "move_branch": lambda f, sha: f.move_branch("main", sha),
    "delete_ref": lambda f, sha: f.delete_ref("refs/heads/main", sha),
    "read_ref": lambda f, sha: f.read_ref("refs/heads/main"),
    "read_commit": lambda f, sha: f.read_commit(sha),
    "create_ref": lambda f, sha: f.create_ref("refs/heads/x", sha),
    "advance_ref": lambda f, sha: f.advance_ref("refs/heads/main", sha),
    "find_open_pull_request": lambda f, sha: f.find_open_pull_request("b"),
    "create_pull_request": lambda f, sha: f.create_pull_request(
        head_branch="b", base_branch="main", title="t", body="b", draft=False),
    "edit_pull_request": lambda f, sha: f.edit_pull_request(1, title="t", body="b"),
    "read_file": lambda f, sha: f.read_file("README.md", "main"),
    "find_check_run": lambda f, sha: f.find_check_run(sha, "c"),
    "create_check_run": lambda f, sha: f.create_check_run(sha, CHECK),
    "update_check_run": lambda f, sha: f.update_check_run(
        CheckRun(id=1, name="c", head_sha=sha, status="completed"), CHECK),
}


def test_every_method_raises_forge_errors(fake_github: FakeGitHub, make_forge: MakeForge,
                                          waits: list[float]) -> None:
    sha = main_sha(fake_github)
    fake_github.fail("*", re.compile(rf"{REPO_PATH}/.+"), 401, times=None)
    for method, call in EVERY_METHOD.items():
        forge = make_forge()  # a new one: its first request is for the repository
        error = raised(lambda: call(forge, sha))  # noqa: B023 - called at once
        assert (method, error.status) == (method, 401)
        assert "Bad credentials" in error.message
    assert waits == []
    assert {r.status for r in fake_github.requests_to("GET", REPO_PATH)} == {200}


# -- what users see -------------------------------------------------------------------------

def test_a_bad_token_is_401_with_its_hint(make_forge: MakeForge) -> None:
    error = raised(lambda: make_forge(token="ghp_" + "x" * 36).issue(1))
    assert error.status == 401
    assert error.message == "reading issue #1 failed: GitHub answered 401: Bad credentials"
    assert error.hint is not None and "invalid or expired" in error.hint


def test_a_read_only_token_is_403_with_the_permissions_hint(fake_github: FakeGitHub,
                                                            make_forge: MakeForge) -> None:
    number = fake_github.add_issue(DEFAULT_REPO, "From a fork")
    forge = make_forge(token=READ_TOKEN)
    assert forge.issue(number).title == "From a fork"  # reading is fine
    error = raised(lambda: forge.create_comment(number, "hi"))
    assert error.status == 403
    assert error.message == (f"commenting on #{number} failed: GitHub answered 403: Resource "
                             "not accessible by integration")
    assert error.hint is not None
    assert "permissions:" in error.hint and "issues: write" in error.hint
    assert "fork" in error.hint


def test_an_unknown_repository_is_404_with_its_hint(make_forge: MakeForge) -> None:
    error = raised(lambda: make_forge("octo-org/no-such-repo").issue(1))
    assert error.status == 404
    assert error.message.startswith("opening the repository octo-org/no-such-repo failed")
    assert error.hint is not None and "GITHUB_REPOSITORY (octo-org/no-such-repo)" in error.hint


def test_the_token_never_appears_in_a_forge_error(fake_github: FakeGitHub,
                                                  make_forge: MakeForge) -> None:
    """Even when an answer quotes it (a proxy echoing the Authorization header, say)."""
    token = WRITE_TOKEN
    echo = {"message": f"token {token} refused", "errors": [{"message": f"about {token}"}]}
    forge = make_forge(max_wait_s=5)
    number = fake_github.add_issue(DEFAULT_REPO, "Leaky")
    errors = []
    fake_github.fail("GET", f"{REPO_PATH}/issues/{number}", 500, body=echo, times=None)
    errors.append(raised(lambda: forge.issue(number)))
    fake_github.clear_faults()
    for status in (401, 403, 404, 422):
        fake_github.fail("POST", f"{REPO_PATH}/issues/*/comments", status, body=echo)
        errors.append(raised(lambda: forge.create_comment(number, "x")))
    fake_github.fail("GET", f"{REPO_PATH}/branches/*", 429, body=echo,
                     headers={"Retry-After": "3600"})
    errors.append(raised(lambda: forge.branch_head("main")))
    errors.append(raised(lambda: make_forge("octo-org/nope", token=token).issue(1)))
    errors.append(raised(lambda: make_forge(token="ghp_" + "y" * 36).issue(1)))
    assert [e.status for e in errors] == [500, 401, 403, 404, 422, 429, 404, 401]
    for error in errors:
        for text in (str(error), error.message, error.hint or ""):
            assert token not in text and "y" * 36 not in text
    assert "[REDACTED:secret]" in errors[0].message
    assert errors[4].hint == "GitHub's validation errors: about [REDACTED:secret]"


def test_the_pull_request_setting_is_named_when_github_refuses_the_pull_request(
    fake_github: FakeGitHub, forge: PyGithubForge
) -> None:
    fake_github.fail("POST", f"{REPO_PATH}/pulls", 403, body={
        "message": "GitHub Actions is not permitted to create or approve pull requests.",
        "documentation_url": "https://docs.github.com/rest"})
    sha = commit(forge, main_sha(fake_github), [FileChange(path="a.py", content="x")], "m")
    forge.create_branch("selfcorrect/issue-9", sha)
    error = raised(lambda: forge.create_pull_request(
        head_branch="selfcorrect/issue-9", base_branch="main", title="t", body="b",
        draft=False))
    assert error.status == 403 and "Allow GitHub Actions to create and approve" in (
        error.hint or "")
