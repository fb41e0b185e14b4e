"""What the repair steps share: the repository as read at the start, the files an attempt
works from, and the test command's request over them."""

from __future__ import annotations

from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.state import Attempt, RunState
from selfcorrect_action.repair.files import frozen_reason
from selfcorrect_action.repair.records import RepairRecord
from selfcorrect_action.repair.repository import Snapshot
from selfcorrect_action.repair.test_run import request_for
from selfcorrect_action.sandbox.models import ExecutionRequest


def repository(deps: Deps) -> Snapshot:
    if deps.repository is None:
        raise AssertionError("a repair step ran without the repository in its deps")
    return deps.repository


def record(state: RunState) -> RepairRecord:
    if state.repair is None:
        raise AssertionError("a repair step ran on a state without its repair record")
    return state.repair


def originals(state: RunState, deps: Deps) -> dict[str, str]:
    """The files the repair may rewrite, as the repository holds them."""
    snapshot = repository(deps)
    return {path: snapshot.text(path) for path in record(state).allowed}


def current_files(state: RunState, deps: Deps, base: Attempt | None) -> dict[str, str]:
    """The allowed files as the attempt `base` left them (the originals when None)."""
    files = originals(state, deps)
    if base is not None:
        files.update({path: text for path, text in base.files.items() if path in files})
    return files


def placed(deps: Deps, rewritten: dict[str, str]) -> dict[str, bytes]:
    """The whole repository with the rewritten files in place."""
    files = dict(repository(deps).files)
    files.update({path: text.encode("utf-8") for path, text in rewritten.items()})
    return files


def test_request(state: RunState, deps: Deps, rewritten: dict[str, str]) -> ExecutionRequest:
    return request_for(placed(deps, rewritten), state.spec.test_command, state.contract,
                       runtime=state.runtime)


def frozen_tests(deps: Deps) -> list[str]:
    """The repository's test files and conftests: what a rewrite must never name."""
    return [path for path in repository(deps).files if path.endswith(".py")
            and frozen_reason(path) is not None]
