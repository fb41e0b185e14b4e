"""Before a repair spends anything: the repository read once (bounded), the files the
globs let it rewrite, the requirements' text, and the limits its test runs take. The
repository is read here and carried to the loop, so every run of the test command places
the same files, whatever happens in the work tree meanwhile."""

from __future__ import annotations

from dataclasses import dataclass

from selfcorrect_action.errors import UsageError
from selfcorrect_action.repair.files import writable
from selfcorrect_action.repair.records import RepairRecord
from selfcorrect_action.repair.repository import Snapshot, read_snapshot
from selfcorrect_action.repair.test_run import request_for
from selfcorrect_action.sandbox.models import Limits
from selfcorrect_action.spec import LoadedSpec

# A repair's test command runs a whole suite: a longer default than a script's 30 s, used
# unless the spec writes contract.timeout_s.
DEFAULT_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class RepairInputs:
    repository: Snapshot
    record: RepairRecord
    requirements: str | None
    limits: Limits


def repair_inputs(loaded: LoadedSpec) -> RepairInputs:
    spec = loaded.spec
    snapshot = read_snapshot(loaded.root)
    allowed = [path for path in writable(spec.files, snapshot.files) if _text(snapshot, path)]
    if not allowed:
        raise UsageError(
            f"files: {', '.join(spec.files)} match no file of {loaded.root} that a repair may "
            "rewrite (Python source, UTF-8, not a test or conftest)",
            hint="run `selfcorrect validate` on the spec: it names each glob's problem")
    requirements = None
    if spec.requirements is not None:
        requirements = (loaded.root / spec.requirements).read_text(encoding="utf-8")
    record = RepairRecord(allowed=allowed, repository_files=len(snapshot.files),
                          repository_bytes=snapshot.total_bytes, listed_by=snapshot.listed_by,
                          left_out=snapshot.left_out[:100])
    limits = request_for(snapshot.files, spec.test_command, spec.contract).limits
    return RepairInputs(snapshot, record, requirements, limits)


def repair_contract_timeout(loaded: LoadedSpec) -> float:
    contract = loaded.spec.contract
    return contract.timeout_s if "timeout_s" in contract.model_fields_set else DEFAULT_TIMEOUT_S


def _text(snapshot: Snapshot, path: str) -> bool:
    try:
        snapshot.text(path)
    except UnicodeDecodeError:
        return False
    return True
