"""The one place that turns how a run ended into an exit code (cli.main maps the expected
exceptions with each exception's own exit_code)."""

from __future__ import annotations

from selfcorrect_action.errors import SIGNAL_EXIT_CODES, interruption
from selfcorrect_action.loop.state import RunState, Status

__all__ = ["SIGNAL_EXIT_CODES", "exit_code"]

EXIT_PASSED = 0
EXIT_FAILED = 1  # not passed within budget, stopped without progress, problems found
EXIT_USAGE = 2  # bad usage or a bad input file
EXIT_INFRASTRUCTURE = 3  # the sandbox, the LLM API or another piece of infrastructure
# Cancelled runs exit with SIGNAL_EXIT_CODES: 130 for SIGINT (and a caller's cancel), 143
# for SIGTERM.

_FOR_STATUS = {
    Status.PASSED: EXIT_PASSED,
    Status.EXHAUSTED: EXIT_FAILED,
    Status.STOPPED: EXIT_FAILED,
    Status.ERROR: EXIT_INFRASTRUCTURE,
}


def exit_code(state: RunState) -> int:
    if state.status is Status.ERROR and state.error_exit_code is not None:
        return state.error_exit_code
    if state.status is Status.CANCELLED:
        return interruption(state.interrupted_by or "SIGINT").exit_code
    return _FOR_STATUS.get(state.status, EXIT_INFRASTRUCTURE)
