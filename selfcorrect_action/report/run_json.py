"""run.json: the whole run state, redacted and versioned, and reading it back.

It is RunState dumped as it is (loop/state.py), so a later tool (a re-render of AUDIT.md, a
dashboard) reads exactly what the loop recorded. Two things differ from the live state:

- every string is redacted (secrets of the run, token-shaped strings), like every report,
  except the schema's own words (statuses, categories, outcomes...): a secret that spells
  "exhausted" must not turn the state into one that no longer validates;
- ArtifactRecord.host_path is dropped (null), in the attempts' executions and a repair's
  baseline runs alike. It named a file in the runner's temp dir, deleted when the run ends:
  elsewhere it points at nothing, and it tells readers of a public PR where the runner keeps
  its files. Whether the file was copied out is still told by `rejected` (None when it was)
  and the execution's `artifact_note`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from selfcorrect_action.errors import UsageError
from selfcorrect_action.loop.state import SCHEMA_VERSION, Attempt, RunState
from selfcorrect_action.records import evolve, schema_words
from selfcorrect_action.redact import redact_data
from selfcorrect_action.sandbox.models import ExecutionResult

RUN_JSON = "run.json"
# Where a repository keeps each run the action committed: <RUNS_DIR>/<run id>/run.json and
# AUDIT.md (action/writes/ writes them, `history import` reads them back).
RUNS_DIR = ".selfcorrect/runs"


class RunJsonError(UsageError):
    """A run.json this version cannot read: not JSON, another schema version, or invalid."""


def run_json(state: RunState, *, secrets: Sequence[str]) -> str:
    """The state as pretty JSON (schema_version first), redacted, without host paths."""
    data = without_host_paths(state).model_dump(mode="json")
    # The dump is this code's schema whatever the field holds: say so, first in the file.
    data = {"schema_version": SCHEMA_VERSION, **data}
    redacted = redact_data(data, secrets=secrets, keep=schema_words(RunState))
    return json.dumps(redacted, indent=2, ensure_ascii=False) + "\n"


def load_run_json(text: str) -> RunState:
    """Read a run.json back; RunJsonError says what is wrong and what to do."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RunJsonError(f"run.json is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise RunJsonError("run.json must hold a JSON object (a run state)")
    version = data.get("schema_version")
    # `type is int`: JSON true would pass `== 1`.
    if type(version) is not int or version not in READABLE_VERSIONS:
        raise RunJsonError(
            f"run.json has schema version {version!r}; this selfcorrect reads versions "
            f"{', '.join(str(v) for v in READABLE_VERSIONS)}",
            hint="read it with the selfcorrect version that wrote it, or re-run the task",
        )
    data = upgraded(data)
    try:
        return RunState.model_validate(data)
    except ValidationError as exc:
        problem = f"run.json does not match schema version {SCHEMA_VERSION}:\n{exc}"
        raise RunJsonError(problem) from exc


# 9 only added fields with defaults (issue 36: the version, the input and test digests,
# the image, the final check): a version 8 run is the same run, recording none of them.
# 10 only added `resumes` (issue 37): a version 9 run was never resumed. 11 only added
# `prompt_trimmed`, `context_tokens`, `profile_reason` and `profile_open` (issue 38).
READABLE_VERSIONS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, SCHEMA_VERSION)


def upgraded(data: dict[str, Any]) -> dict[str, Any]:
    """A run.json of any readable version as the current schema describes the same run."""
    if data.get("schema_version") == 1:
        spec = data.get("spec")
        if isinstance(spec, dict):
            # Before version 2 the frozen tests always imported the candidate into pytest.
            data = {**data, "spec": {**spec, "isolation": spec.get("isolation", "in-process")}}
        data = {**data, "schema_version": 2}
    # Versions 3 to 6 only added fields with defaults (kind repair, the small-model fields,
    # the run's origin; the network's mapping and connection log; the orchestrator, plain
    # before; version 5 each execution's start, cold before; version 6 the run's redraws,
    # none before): a version 2 to 5 run is the same.
    if data.get("schema_version") in (2, 3, 4, 5, 6):
        spec = data.get("spec")
        if isinstance(spec, dict):
            # Before version 7 every test run was pytest's: a resumed run goes on that way.
            data = {**data, "spec": {**spec, "tests_runner": spec.get("tests_runner", "pytest")}}
    if data.get("schema_version") in (2, 3, 4, 5, 6, 7):
        data = _cancelled_as_such(data)
    return {**data, "schema_version": SCHEMA_VERSION}


def _cancelled_as_such(data: dict[str, Any]) -> dict[str, Any]:
    """Before version 8 a cancelled run (SIGINT, SIGTERM, a caller's cancel) ended as
    `error`, only its `interrupted_by` telling it from an infrastructure failure."""
    if data.get("status") == "error" and data.get("interrupted_by"):
        return {**data, "status": "cancelled"}
    return data


def redacted_state(state: RunState, *, secrets: Sequence[str], shapes: bool = True
                   ) -> RunState:
    """A copy with every string redacted, for reports that escape text after quoting it (an
    escaped `ghp\\_…` no longer looks like a token, so redaction must come first).
    `shapes=False`: a state read from a run.json, redacted when it was written, is searched
    for the secrets known now only (a linear pass, however large the file)."""
    data = without_host_paths(state).model_dump(mode="json")
    return RunState.model_validate(redact_data(data, secrets=secrets, keep=schema_words(RunState),
                                               shapes=shapes))


def without_host_paths(state: RunState) -> RunState:
    attempts = [_attempt_without_host_paths(attempt) for attempt in state.attempts]
    changes: dict[str, Any] = {"attempts": attempts}
    repair = state.repair
    if repair is not None and repair.baseline is not None:
        # A repair's baseline runs of the test command keep their junit report's host copy.
        runs = [_result_without_host_paths(run) for run in repair.baseline.runs]
        changes["repair"] = evolve(repair, {"baseline": evolve(repair.baseline,
                                                               {"runs": runs})})
    return evolve(state, changes)


def _attempt_without_host_paths(attempt: Attempt) -> Attempt:
    return attempt.model_copy(
        update={
            "execution": _result_without_host_paths(attempt.execution),
            "test_execution": _result_without_host_paths(attempt.test_execution),
        }
    )


def _result_without_host_paths(result: ExecutionResult | None) -> ExecutionResult | None:
    if result is None:
        return None
    artifacts = [evolve(record, {"host_path": None}) for record in result.artifacts]
    return evolve(result, {"artifacts": artifacts})
