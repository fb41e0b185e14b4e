"""A re-verified spec's check run on a pull request, from a CheckResult as check_specs makes
it (tests/integration/test_pull_check.py re-verifies real scripts in Docker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfcorrect_action.action.context import ActionContext
from selfcorrect_action.action.env import ActionEnv, open_env
from selfcorrect_action.action.inputs import ActionInputs
from selfcorrect_action.action.pull_check import check_output
from selfcorrect_action.verified.check import CheckStatus
from selfcorrect_action.verified.results import CheckResult
from tests.fakes.github_server import DEFAULT_REPO, FakeGitHub
from tests.unit.github.conftest import MakeForge

SPEC = ".selfcorrect/tasks/sales chart.yml"
RECORD = ".selfcorrect/lock/sales chart.json"


@pytest.fixture
def env(tmp_path: Path, make_forge: MakeForge, fake_github: FakeGitHub) -> ActionEnv:
    context = ActionContext(event_name="pull_request", event={}, repository=DEFAULT_REPO,
                            api_url=fake_github.api_url, server_url="https://gh.example",
                            workspace=tmp_path, run_id="9", run_attempt="1", output_file=None,
                            summary_file=None)
    return open_env(context, ActionInputs(github_token="t"), make_forge(), {}, [],
                    lambda step, message: None)


@pytest.mark.parametrize("status", [CheckStatus.PASSES, CheckStatus.FAILS])
def test_a_check_run_says_how_to_reproduce_the_recorded_verdict(
        env: ActionEnv, status: CheckStatus) -> None:
    """Issue 36, item 6: the one line, quoted for a shell (the record's name has a space)."""
    result = CheckResult(spec=SPEC, status=status, record=RECORD, script="scripts/sales.py",
                         changes=["input data/sales.csv (changed)"],
                         reverified="passed" if status is CheckStatus.PASSES else "failed",
                         took_ms=1200)

    output = check_output(env, result)

    assert output is not None
    assert "`selfcorrect verify '.selfcorrect/lock/sales chart.json'`" in output.summary


@pytest.mark.parametrize(("status", "record"), [
    (CheckStatus.PASSES, None),  # the base branch holds no record yet
    (CheckStatus.ORPHANED, RECORD),  # its spec is gone: nothing to re-run
])
def test_no_verify_line_without_a_verdict_to_reproduce(
        env: ActionEnv, status: CheckStatus, record: str | None) -> None:
    output = check_output(env, CheckResult(spec=SPEC, status=status, record=record))

    assert output is not None
    assert "selfcorrect verify" not in output.summary
