"""Write plans between jobs: saved under a name from their branch or task, and loaded back
only as plans (a folder where a plan should be is named, with what to do)."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfcorrect_action.action.writes.plan import PlannedComment, WritePlan
from selfcorrect_action.action.writes.store import load_plans, save_plan
from selfcorrect_action.errors import UsageError
from selfcorrect_action.github.naming import report_marker

PLAN = WritePlan(repository="o/r", task="#3 refusal", status="none", comment=PlannedComment(
    number=3, marker=report_marker("run=1.1 task=t"), body="words"))


def test_a_saved_plan_loads_back_as_it_was(tmp_path: Path) -> None:
    path = save_plan(PLAN, tmp_path / "plans")
    assert path.name == "3_refusal.json"
    assert load_plans(tmp_path / "plans") == [(path, PLAN)]


def test_a_folder_where_a_plan_should_be_is_named(tmp_path: Path) -> None:
    (tmp_path / "odd.json").mkdir()
    with pytest.raises(UsageError, match=r"odd\.json: is a folder, not a file"):
        load_plans(tmp_path)
