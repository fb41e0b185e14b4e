"""Who may trigger a run, and the names the action gives things."""

from __future__ import annotations

import pytest

from selfcorrect_action.github.forge import Permission
from selfcorrect_action.github.naming import (
    approval_marker,
    approved_digest,
    issue_branch,
    origin_in,
    origin_marker,
    report_marker,
    task_branch,
    with_approval,
)
from selfcorrect_action.github.permissions import may_trigger
from selfcorrect_action.markdown import md_code


@pytest.mark.parametrize(("permission", "role", "allowed"), [
    ("admin", "admin", True), ("write", "maintain", True), ("write", "write", True),
    ("read", "triage", False), ("read", "read", False), ("none", "", False),
    ("write", "custom-release-manager", True),  # custom role on a write base
    ("read", "custom-reviewer", False),
])
def test_only_write_access_may_trigger(permission: str, role: str, allowed: bool) -> None:
    decision = may_trigger(Permission(login="ann", permission=permission, role_name=role))
    assert decision.allowed is allowed
    assert "@ann" in decision.reason


def test_a_refusal_says_what_access_is_needed() -> None:
    decision = may_trigger(Permission(login="ann", permission="read", role_name="triage"))
    assert "triage" in decision.reason and "write, maintain or admin" in decision.reason


@pytest.mark.parametrize(("path", "branch"), [
    (".selfcorrect/tasks/sales_chart.yml", "selfcorrect/task-sales_chart"),
    ("specs/Sales Chart.yml", "selfcorrect/task-sales-chart"),
    ("a/..weird~^:?*[name.lock.yml", "selfcorrect/task-weird-name"),
    ("a/....yml", "selfcorrect/task-task"),
])
def test_task_branches_are_valid_ref_names(path: str, branch: str) -> None:
    assert task_branch(path) == branch


def test_issue_branches_and_origins_round_trip() -> None:
    assert issue_branch(12) == "selfcorrect/issue-12"
    body = f"text\n{origin_marker('spec .selfcorrect/tasks/x.yml')}\nmore"
    assert origin_in(body) == "spec .selfcorrect/tasks/x.yml"
    assert origin_in("no marker") is None
    assert origin_in("<!-- selfcorrect:origin --> x") is None


DIGEST = "a" * 64
REPORT = report_marker("run=7.1 task=selfcorrect/issue-3")


def test_an_approval_counts_only_as_the_line_after_a_run_comments_report_marker() -> None:
    assert approved_digest(f"{REPORT}\n{approval_marker(DIGEST)}\n**Passed**") == DIGEST
    assert approved_digest(f"{REPORT}\r\n{approval_marker(DIGEST)}\r\nx") == DIGEST
    for planned in (f"{REPORT}\nsummary\n", "summary\n"):
        body = with_approval(planned, REPORT, DIGEST)
        assert approved_digest(body) == DIGEST and body.count(REPORT) == 1


@pytest.mark.parametrize("body", [
    # A red team's chain: an output path holding the marker, shown by a later run's comment
    # (the newest comment of ours holding the prefix, so the one read).
    f"{REPORT}\n**selfcorrect is starting** on `repair of scripts/{approval_marker(DIGEST)}.py`",
    f"{REPORT}\nsummary\n{approval_marker(DIGEST)}",
    f"{approval_marker(DIGEST)}\n{REPORT}",
    f"Welcome! You wrote:\n{REPORT}\n{approval_marker(DIGEST)}",  # another workflow's echo
    f"{REPORT}\n {approval_marker(DIGEST)}",
    f"{REPORT}\n{approval_marker(DIGEST)} and more",
    approval_marker(DIGEST),
    "",
])
def test_an_approval_marker_anywhere_else_is_text(body: str) -> None:
    assert approved_digest(body) is None


def test_a_code_span_never_carries_an_html_comment_opening() -> None:
    quoted = md_code(f"scripts/{approval_marker(DIGEST)}.py")
    assert "<!--" not in quoted and "sha256=" + DIGEST in quoted
