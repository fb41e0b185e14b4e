"""A committed script re-verified with no model call (issue 36): the loop's own execute and
evaluate steps in the real sandbox, under runc and runsc: a script and a function that pass,
and an input that lost a column failing with the category and evidence a run would give."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfcorrect_action.choices import Runtime
from selfcorrect_action.contract import ExecutionContract
from selfcorrect_action.loop.state import Status
from selfcorrect_action.spec import load_spec
from selfcorrect_action.taxonomy import Category
from selfcorrect_action.verified.build import record_for
from selfcorrect_action.verified.fingerprint import fingerprint
from selfcorrect_action.verified.record import ImageRecord
from selfcorrect_action.verified.reverify import reverify, reverify_state

pytestmark = pytest.mark.docker

SCRIPT = """\
import csv

with open("sales.csv", newline="") as handle:
    rows = list(csv.DictReader(handle))
totals = {}
for row in rows:
    totals[row["region"]] = totals.get(row["region"], 0) + int(row["amount"])
with open("totals.csv", "w", newline="") as out:
    writer = csv.writer(out)
    writer.writerow(["region", "total"])
    for region, total in sorted(totals.items()):
        writer.writerow([region, total])
"""
SPEC = """\
prompt: Sum sales.csv's amount per region into totals.csv.
output: scripts/totals.py
inputs: [data/sales.csv]
tests: [tests/test_totals.py]
judge: false
contract:
  artifacts:
    - {path: totals.csv, kind: csv, columns: [region, total]}
"""
TESTS = """\
import csv


def test_the_totals():
    with open("totals.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows == [{"region": "north", "total": "5"}, {"region": "south", "total": "2"}]
"""


def _repo(root: Path) -> Path:
    (root / ".git").mkdir(parents=True)
    for path, text in {"task.yml": SPEC, "scripts/totals.py": SCRIPT,
                       "data/sales.csv": "region,amount\nnorth,2\nsouth,2\nnorth,3\n",
                       "tests/test_totals.py": TESTS}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def test_a_committed_script_passes_again_and_fails_on_a_lost_column(
        sandbox: object, runtime: Runtime, tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    loaded = load_spec(root / "task.yml", root=root)
    passed = reverify(reverify_state(loaded, None, SCRIPT, runtime=runtime), loaded,
                      sandbox, tmp_path / "work1")  # type: ignore[arg-type]
    assert passed.last is not None and passed.last.verdict is not None
    assert passed.last.verdict.passed, passed.last.verdict.evidence
    assert [o.outcome for o in passed.last.tests] == ["passed"]
    assert passed.usage.tokens == 0 and passed.last.llm_calls == []

    (root / "data/sales.csv").write_text("region\nnorth\nsouth\n")
    failed = reverify(reverify_state(loaded, None, SCRIPT, runtime=runtime), loaded,
                      sandbox, tmp_path / "work2")  # type: ignore[arg-type]
    verdict = failed.last.verdict if failed.last else None
    assert verdict is not None and not verdict.passed
    assert verdict.category is Category.RUNTIME and "amount" in verdict.evidence


def test_the_record_s_contract_and_model_tests_are_used_the_spec_s_own_fields_win(
        sandbox: object, tmp_path: Path) -> None:
    """A function spec without tests of its own: the tests a model wrote, as recorded; the
    contract as planned, but for the field the spec writes."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "task.yml").write_text("prompt: add(a, b)\nkind: function\noutput: add.py\n"
                                   "judge: false\ncontract: {timeout_s: 7}\n")
    (root / "add.py").write_text("def add(a, b):\n    return a + b\n")
    loaded = load_spec(root / "task.yml", root=root)
    base = reverify_state(loaded, None, "def add(a, b):\n    return a + b\n")
    planned = base.model_copy(update={
        "contract": ExecutionContract(timeout_s=20, memory_mb=384),
        "tests": {"test_add.py": "from add import add\n\ndef test_add():\n"
                                 "    assert add(2, 3) == 5\n"},
        "tests_written_by_plan": True, "status": Status.PASSED})
    record = record_for(loaded, planned, script=(root / "add.py").read_text(),
                        now=fingerprint(loaded), image=ImageRecord(tag="t"))

    state = reverify_state(loaded, record, "def add(a, b):\n    return a - b\n")
    assert state.contract.timeout_s == 7 and state.contract.memory_mb == 384
    assert state.tests_written_by_plan and list(state.tests) == ["test_add.py"]
    done = reverify(state, loaded, sandbox, tmp_path / "work")  # type: ignore[arg-type]
    assert done.last is not None and done.last.verdict is not None
    assert not done.last.verdict.passed and "assert" in done.last.verdict.evidence
