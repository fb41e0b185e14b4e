"""A re-verification's contract (verified/reverify.py): the record's, as the plan completed
it, with each top-level field the spec writes taken whole from the spec, as the plan step
merges them. A spec that writes `artifacts` names `artifacts.0.kind` among its fields too,
which is no field of the contract: it used to crash `selfcorrect check` (issue 36)."""

from __future__ import annotations

from pathlib import Path

from selfcorrect_action.contract import ArtifactSpec, ExecutionContract
from selfcorrect_action.spec import load_spec
from selfcorrect_action.verified.record import FileDigest, ImageRecord, VerifiedRecord
from selfcorrect_action.verified.reverify import reverify_state

SHA = "a" * 64
SPEC = """\
prompt: Total sales.csv per region into totals.csv.
output: totals.py
contract:
  artifacts:
    - {path: totals.csv, kind: csv, columns: [region, total]}
"""


def test_a_written_artifacts_list_wins_whole_and_the_planned_rest_stays(
        tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "task.yml").write_text(SPEC)
    planned = ExecutionContract(timeout_s=20, artifacts=[
        ArtifactSpec(path="totals.csv", kind="csv", columns=["region"], min_rows=1)])
    record = VerifiedRecord(
        spec="task.yml", kind="script", prompt_sha256=SHA, fields_sha256=SHA,
        script=FileDigest(path="totals.py", sha256=SHA), image=ImageRecord(tag="t"),
        selfcorrect_version="0.1.0", run_id="r1", verified_at="2026-12-07T00:00:00+00:00",
        contract=planned)
    loaded = load_spec(tmp_path / "task.yml", root=tmp_path)

    contract = reverify_state(loaded, record, "print(1)\n").contract

    assert contract.artifacts == loaded.spec.contract.artifacts
    assert contract.artifacts[0].columns == ["region", "total"]
    assert contract.timeout_s == 20
