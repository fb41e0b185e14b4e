"""Who may trigger a run, and the names the action gives things."""

from __future__ import annotations

import pytest

from selfcorrect_action.github.forge import Permission
from selfcorrect_action.github.naming import (
    issue_branch,
    origin_in,
    origin_marker,
    task_branch,
)
from selfcorrect_action.github.permissions import may_trigger


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
