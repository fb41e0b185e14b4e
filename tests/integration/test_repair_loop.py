"""The repair loop against the real sandbox and a real repository's own pytest suite: the
baseline, a hostile answer refused, a regression caught, a fix that passes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.orchestrator import run_loop
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.repair.files import writable
from selfcorrect_action.repair.records import RepairRecord
from selfcorrect_action.repair.repository import read_snapshot
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.spec import TaskSpec
from selfcorrect_action.taxonomy import Category
from tests.fakes.scripted_llm import ScriptedLLM

FIXTURE = Path(__file__).parents[2] / "examples" / "repair" / "calc"
CORE = "src/calc/core.py"
MEAN, MEAN_OF_ONE = "tests/test_core.py::test_mean", "tests/test_core.py::test_mean_of_one"


def file_answer(path: str, text: str, purpose: str) -> tuple[str, str]:
    return purpose, f"File: {path}\n```python\n{text}```\n"


def test_a_repair_on_a_real_suite_refuses_the_hostile_catches_the_regression_and_passes(
        sandbox: Sandbox, tmp_path: Path) -> None:
    repo = tmp_path / "calc"
    shutil.copytree(FIXTURE, repo)
    snapshot = read_snapshot(repo)
    original = snapshot.text(CORE)
    fixed = original.replace("(len(values) + 1)", "len(values)")
    # Fixes mean, breaks clamp: the targets pass, two tests that passed now fail.
    regressing = fixed.replace("max(low, min(value, high))", "min(low, max(value, high))")
    cheat_tests = "def test_mean():\n    pass\n\n\ndef test_mean_of_one():\n    pass\n"
    spec = TaskSpec(prompt="mean() is wrong", kind="repair", files=["src/calc/*.py"])
    state = RunState(
        run_id="r", started_at="t0", spec_source="fix.yml", spec=spec, output_name="",
        contract=spec.contract.model_copy(update={"timeout_s": 120}), models=ModelTiers(),
        repair=RepairRecord(allowed=writable(spec.files, snapshot.files),
                            repository_files=len(snapshot.files),
                            repository_bytes=snapshot.total_bytes,
                            listed_by=snapshot.listed_by))
    llm = ScriptedLLM([
        ("plan", json.dumps({"approach": "mean divides by len + 1", "files": [CORE]})),
        file_answer("tests/test_core.py", cheat_tests, "generate"),
        file_answer(CORE, regressing, "repair"),
        ("review", json.dumps({"verdict": "approve", "reasons": "fixes the divisor"})),
        file_answer(CORE, fixed, "generate"),  # a contract miss after a patch: rethought
        ("review", json.dumps({"verdict": "approve", "reasons": "fixes the divisor"})),
    ])

    final = run_loop(state, Deps(llm=llm, sandbox=sandbox, work_root=tmp_path / "work",
                                 repository=snapshot))

    assert final.status is Status.PASSED, final.stop_reason
    assert final.repair is not None and final.repair.baseline is not None
    assert final.repair.targets == [MEAN, MEAN_OF_ONE]
    assert len(final.repair.baseline.passing) == 6
    hostile, regression, passing = final.attempts
    assert hostile.verdict is not None and hostile.execution is None
    assert "tests/test_core.py is frozen" in hostile.verdict.evidence
    assert regression.verdict is not None and regression.verdict.category is Category.CONTRACT
    assert regression.regressions == [f"tests/test_core.py::test_clamp[{case}]"
                                      for case in ("11-10", "5-5")]
    assert regression.verdict.evidence.startswith(
        "regression: tests/test_core.py::test_clamp[11-10] passed at baseline and failed now: "
        "assert 0 == 10")
    assert passing.verdict is not None and passing.verdict.passed
    assert passing.files == {CORE: fixed}
    assert passing.execution is not None and passing.execution.exit_code == 0
