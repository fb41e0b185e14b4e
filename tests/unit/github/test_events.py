"""Events to triggers: a pure function of payloads shaped like GitHub's."""

from __future__ import annotations

from typing import Any

import pytest

from selfcorrect_action.github.events import (
    Dispatch,
    FixComment,
    Ignored,
    IssueLabeled,
    Pushed,
    RegenerateComment,
    ResumeComment,
    RetryComment,
    Scheduled,
    SpecsChanged,
    retry_guidance,
    trigger_for,
)

REPO = {"full_name": "octo-org/hello", "name": "hello", "owner": {"login": "octo-org"}}


def user(login: str, kind: str = "User") -> dict[str, Any]:
    return {"login": login, "id": 1, "type": kind}


def labeled(label: str = "selfcorrect", **issue: Any) -> dict[str, Any]:
    return {"action": "labeled", "label": {"name": label, "color": "fff"},
            "issue": {"number": 12, "title": "Chart", "body": "prompt: x", "user": user("ann"),
                      **issue},
            "repository": REPO, "sender": user("maria")}


def comment(body: str, *, author: dict[str, Any] | None = None, on_pr: bool = True,
            action: str = "created") -> dict[str, Any]:
    issue: dict[str, Any] = {"number": 7, "title": "t", "body": "", "user": user("ann")}
    if on_pr:
        issue["pull_request"] = {"url": "https://api.github.com/repos/octo-org/hello/pulls/7"}
    return {"action": action, "issue": issue, "repository": REPO,
            "comment": {"id": 99, "body": body, "user": author or user("maria")},
            "sender": author or user("maria")}


def test_the_trigger_label_starts_an_issue_run() -> None:
    trigger = trigger_for("issues", labeled(), trigger_label="selfcorrect")
    assert trigger == IssueLabeled(repository="octo-org/hello", actor="maria", number=12,
                                   title="Chart", body="prompt: x")


def test_the_labeler_not_the_author_is_the_actor() -> None:
    trigger = trigger_for("issues", labeled(), trigger_label="selfcorrect")
    assert isinstance(trigger, IssueLabeled) and trigger.actor == "maria"


@pytest.mark.parametrize(("payload", "why"), [
    (labeled("bug"), "the label 'bug' was added"),
    ({**labeled(), "action": "opened"}, "only adding"),
    (labeled(pull_request={"url": "x"}), "pull request, not an issue"),
])
def test_other_issue_events_are_ignored(payload: dict[str, Any], why: str) -> None:
    trigger = trigger_for("issues", payload, trigger_label="selfcorrect")
    assert isinstance(trigger, Ignored) and why in trigger.reason


def test_a_null_body_is_an_empty_body() -> None:
    trigger = trigger_for("issues", labeled(body=None), trigger_label="selfcorrect")
    assert isinstance(trigger, IssueLabeled) and trigger.body == ""


def test_a_retry_comment_carries_its_guidance() -> None:
    trigger = trigger_for("issue_comment", comment("/selfcorrect retry use a log scale\n"
                                                   "and label the axes"),
                          trigger_label="selfcorrect")
    assert isinstance(trigger, RetryComment)
    assert trigger.guidance == "use a log scale\nand label the axes"
    assert (trigger.number, trigger.on_pull_request, trigger.comment_id) == (7, True, 99)


@pytest.mark.parametrize(("payload", "why"), [
    (comment("/selfcorrect retry", author=user("github-actions[bot]", "Bot")), "bot"),
    (comment("/selfcorrect retry", author=user("renovate[bot]", "User")), "bot"),
    (comment("<!-- selfcorrect:report x -->\n/selfcorrect retry"), "marker"),
    (comment("please /selfcorrect retry"), "not a /selfcorrect retry"),
    (comment("> /selfcorrect retry\nno"), "not a /selfcorrect retry"),
    (comment("/selfcorrect retry", action="edited"), "only a new comment"),
])
def test_comments_that_must_not_start_a_run(payload: dict[str, Any], why: str) -> None:
    trigger = trigger_for("issue_comment", payload, trigger_label="selfcorrect")
    assert isinstance(trigger, Ignored) and why in trigger.reason


def test_guidance_is_bounded_and_crlf_is_read() -> None:
    assert retry_guidance("/selfcorrect retry\r\nfix it\r\n") == "fix it"
    assert retry_guidance("/selfcorrect retry") == ""
    assert retry_guidance("/selfcorrect  retry   x") == "x"
    assert retry_guidance("/selfcorrect retryx") is None
    assert len(retry_guidance("/selfcorrect retry " + "a" * 10_000) or "") == 4000


def test_dispatch_takes_the_forms_tasks_input() -> None:
    payload = {"ref": "refs/heads/main", "inputs": {"tasks": " specs/*.yml "},
               "repository": REPO, "sender": user("maria")}
    assert trigger_for("workflow_dispatch", payload, trigger_label="x") == Dispatch(
        repository="octo-org/hello", actor="maria", ref="refs/heads/main", tasks="specs/*.yml")
    no_inputs = {**payload, "inputs": None}
    trigger = trigger_for("workflow_dispatch", no_inputs, trigger_label="x")
    assert isinstance(trigger, Dispatch) and trigger.tasks is None


def test_a_pull_request_from_a_fork_is_recognised() -> None:
    payload: dict[str, Any] = {
        "action": "synchronize", "number": 5, "repository": REPO, "sender": user("outsider"),
        "pull_request": {"number": 5, "head": {"sha": "abc", "ref": "x",
                                               "repo": {"full_name": "outsider/hello"}}}}
    trigger = trigger_for("pull_request", payload, trigger_label="x")
    assert isinstance(trigger, SpecsChanged) and trigger.from_fork
    payload["pull_request"]["head"]["repo"] = None  # the fork was deleted
    trigger = trigger_for("pull_request", payload, trigger_label="x")
    assert isinstance(trigger, SpecsChanged) and trigger.from_fork


def test_closed_pull_requests_and_unknown_events_are_ignored() -> None:
    closed = {"action": "closed", "repository": REPO, "pull_request": {"number": 1}}
    assert isinstance(trigger_for("pull_request", closed, trigger_label="x"), Ignored)
    unknown = trigger_for("push", {}, trigger_label="x")
    assert isinstance(unknown, Ignored) and "push" in unknown.reason


def test_garbage_payloads_do_not_crash() -> None:
    for name in ("issues", "issue_comment", "pull_request", "workflow_dispatch"):
        for payload in ({}, {"issue": "x", "comment": 3, "label": []}, {"action": None}):
            trigger_for(name, payload, trigger_label="selfcorrect")


def test_the_label_is_matched_as_github_matches_names() -> None:
    assert isinstance(trigger_for("issues", labeled("SelfCorrect"), trigger_label="selfcorrect"),
                      IssueLabeled)


def test_pull_request_target_is_not_validated_on_the_base_checkout() -> None:
    payload = {"action": "opened", "number": 5, "repository": REPO,
               "pull_request": {"number": 5, "head": {"sha": "a", "repo": None}}}
    trigger = trigger_for("pull_request_target", payload, trigger_label="x")
    assert isinstance(trigger, Ignored) and "base branch" in trigger.reason


def test_a_fix_comment_on_a_pull_request_carries_its_guidance() -> None:
    trigger = trigger_for("issue_comment", comment("/selfcorrect fix keep the API\nthanks"),
                          trigger_label="selfcorrect")
    assert trigger == FixComment(repository="octo-org/hello", actor="maria", number=7,
                                 on_pull_request=True, comment_id=99,
                                 guidance="keep the API\nthanks")


def test_a_fix_comment_on_an_issue_is_handed_on_to_be_answered() -> None:
    trigger = trigger_for("issue_comment", comment("/selfcorrect fix", on_pr=False),
                          trigger_label="selfcorrect")
    assert isinstance(trigger, FixComment) and not trigger.on_pull_request


@pytest.mark.parametrize("body", ["/selfcorrect fixit", "> /selfcorrect fix", "please "
                                  "/selfcorrect fix"])
def test_what_is_not_the_fix_command_is_ignored(body: str) -> None:
    trigger = trigger_for("issue_comment", comment(body), trigger_label="selfcorrect")
    assert isinstance(trigger, Ignored)
    assert ("/selfcorrect retry, /selfcorrect resume, /selfcorrect fix or /selfcorrect "
            "regenerate") in trigger.reason


def test_a_bots_fix_comment_is_ignored() -> None:
    trigger = trigger_for("issue_comment", comment(
        "/selfcorrect fix", author=user("github-actions[bot]", "Bot")),
        trigger_label="selfcorrect")
    assert isinstance(trigger, Ignored) and "bot" in trigger.reason


@pytest.mark.parametrize(("body", "specs", "guidance"), [
    ("/selfcorrect regenerate", (), ""),
    ("/selfcorrect regenerate .selfcorrect/tasks/sales.yml", (".selfcorrect/tasks/sales.yml",),
     ""),
    # Pasted paths: backticks, quotes and ./ come off; a name given twice counts once.
    ("/selfcorrect regenerate `./a.yml` 'b.yml' a.yml\r\nkeep the colours\r\n",
     ("a.yml", "b.yml"), "keep the colours"),
])
def test_a_regenerate_comment_names_its_specs_and_guidance(
        body: str, specs: tuple[str, ...], guidance: str) -> None:
    trigger = trigger_for("issue_comment", comment(body), trigger_label="selfcorrect")
    assert trigger == RegenerateComment(repository="octo-org/hello", actor="maria", number=7,
                                        on_pull_request=True, comment_id=99, specs=specs,
                                        guidance=guidance)


@pytest.mark.parametrize("body", ["/selfcorrect regenerated", "> /selfcorrect regenerate",
                                  "please /selfcorrect regenerate"])
def test_what_is_not_the_regenerate_command_is_not_taken_for_it(body: str) -> None:
    trigger = trigger_for("issue_comment", comment(body), trigger_label="selfcorrect")
    assert not isinstance(trigger, RegenerateComment)


def test_a_schedule_is_the_scheduled_update() -> None:
    """GitHub's schedule event holds the cron line and the workflow: no repository, no
    sender."""
    payload = {"schedule": "23 5 * * 1", "workflow": ".github/workflows/update.yml"}
    trigger = trigger_for("schedule", payload, trigger_label="selfcorrect")
    assert trigger == Scheduled(repository="", actor="(schedule)", cron="23 5 * * 1")


def _push(**changes: object) -> dict[str, object]:
    """As a workflow's event holds a push: commits without their files."""
    return {"ref": "refs/heads/main", "before": "a" * 40, "after": "c" * 40,
            "forced": False, "deleted": False, "commits": [{"id": "c" * 40}],
            "repository": {"full_name": "octo-org/hello"}, "sender": {"login": "maria"},
            **changes}


def test_a_push_names_the_commits_its_files_are_compared_between() -> None:
    trigger = trigger_for("push", _push(), trigger_label="selfcorrect")
    assert trigger == Pushed(repository="octo-org/hello", actor="maria",
                             ref="refs/heads/main", before="a" * 40, after="c" * 40)


@pytest.mark.parametrize("changes", [
    {"forced": True},  # what was there before may not be an ancestor
    {"before": "0" * 40},  # a new branch: no "before" to compare with
])
def test_a_push_with_nothing_to_compare_with_checks_everything(
        changes: dict[str, object]) -> None:
    trigger = trigger_for("push", _push(**changes), trigger_label="selfcorrect")
    assert isinstance(trigger, Pushed) and trigger.fresh


def test_a_deleted_branch_is_ignored() -> None:
    trigger = trigger_for("push", _push(deleted=True, after="0" * 40),
                          trigger_label="selfcorrect")
    assert isinstance(trigger, Ignored)


@pytest.mark.parametrize(("body", "more"), [
    ("/selfcorrect resume", {}),
    ("  /selfcorrect   resume\r\nthanks!", {}),
    ("/selfcorrect resume more attempts 2", {"more_attempts": 2}),
    ("/selfcorrect resume more attempts 2 more tokens 50000 more usd $0.5",
     {"more_attempts": 2, "more_tokens": 50000, "more_usd": 0.5}),
    ("/selfcorrect resume MORE Attempts 20", {"more_attempts": 20}),
])
def test_a_resume_comment_carries_the_budget_it_adds(body: str, more: dict[str, Any]) -> None:
    trigger = trigger_for("issue_comment", comment(body), trigger_label="selfcorrect")
    assert isinstance(trigger, ResumeComment)
    assert (trigger.number, trigger.on_pull_request, trigger.actor) == (7, True, "maria")
    assert trigger.problem == ""
    assert {name: getattr(trigger, name) for name in more} == more


@pytest.mark.parametrize(("body", "problem"), [
    ("/selfcorrect resume please", "`please` is not something resume takes"),
    ("/selfcorrect resume more attempts 21", "at most 20"),
    ("/selfcorrect resume more attempts 1.5", "`more attempts 1.5`"),
    ("/selfcorrect resume more usd nan", "`more usd nan`"),
    ("/selfcorrect resume more tokens 0", "above 0"),
    ("/selfcorrect resume more coffee 2", "`more coffee 2` is not something"),
])
def test_a_resume_line_it_cannot_read_is_answered_not_run(body: str, problem: str) -> None:
    trigger = trigger_for("issue_comment", comment(body), trigger_label="selfcorrect")
    assert isinstance(trigger, ResumeComment) and problem in trigger.problem


@pytest.mark.parametrize("body", ["/selfcorrect resumed", "> /selfcorrect resume",
                                  "please /selfcorrect resume"])
def test_what_is_not_the_resume_command_is_not_one(body: str) -> None:
    trigger = trigger_for("issue_comment", comment(body), trigger_label="selfcorrect")
    assert not isinstance(trigger, ResumeComment)
