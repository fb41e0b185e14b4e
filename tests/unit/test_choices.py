"""choices.py names, import-light, values the heavier modules define again."""

from __future__ import annotations

from selfcorrect_action.choices import RUN_STATUSES
from selfcorrect_action.loop.state import Status


def test_the_run_statuses_are_the_loops_own() -> None:
    # The history's --status choices come from RUN_STATUSES (cli_history.py); a status the
    # loop gains must be one a user can filter by.
    assert tuple(status.value for status in Status) == RUN_STATUSES
