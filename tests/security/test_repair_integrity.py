"""A rewrite that gets past the static tampering scan still cannot pass a repair: run
against the example repository's own suite in the real sandbox, a rewrite that rewrites the
tests at import time is caught because the run changed the repository's files, and one
that forges the junit report after pytest wrote it is caught because pytest's exit status
then disagrees with the report. Neither change fixes the bug: only cheating could pass."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.orchestrator import run_loop
from selfcorrect_action.loop.repair.execute import tampering_verdict
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.repair.files import writable
from selfcorrect_action.repair.records import RepairRecord
from selfcorrect_action.repair.repository import Snapshot, read_snapshot
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.spec import Budget, TaskSpec
from tests.fakes.scripted_llm import ScriptedLLM

EXAMPLE = Path(__file__).parents[2] / "examples" / "repair" / "calc"
CORE = "src/calc/core.py"
# Names what it touches only through strings it builds, so the static scan sees no test
# file named: the run-time guard must catch it.
REWRITE_TESTS = '''
import pathlib as _p
for _f in _p.Path(".").rglob("t" + "est" + "_*.py"):
    _f.write_text("def test_nothing():\\n    pass\\n")
'''
# A thread that waits for pytest's report and overwrites it with one where every test
# passed (the targets included): exit status 1, since pytest saw the real failures.
FORGE_REPORT = '''
import threading as _t, time as _time, os as _os, re as _re
def _forge():
    _path = bytes.fromhex("2f776f726b2f2e73656c66636f7272656374"
                          "2f7265706169722d6a756e69742e786d6c").decode()
    for _ in range(200):
        _time.sleep(0.05)
        try:
            _text = open(_path).read()
        except OSError:
            continue
        if "</testsuites>" in _text and "<failure" in _text:
            open(_path, "w").write(_re.sub(r"<failure[^>]*>.*?</failure>", "", _text,
                                           flags=_re.S))
            return
_t.Thread(target=_forge, daemon=False).start()
'''


def _state(snapshot: Snapshot) -> RunState:
    spec = TaskSpec(prompt="mean() is wrong", kind="repair", files=["src/calc/*.py"],
                    budget=Budget(patch_attempts=0, rethink_attempts=0))
    return RunState(
        run_id="r", started_at="t", spec_source="fix.yml", spec=spec, output_name="",
        contract=spec.contract.model_copy(update={"timeout_s": 120}), models=ModelTiers(),
        repair=RepairRecord(allowed=writable(spec.files, snapshot.files),
                            repository_files=len(snapshot.files),
                            repository_bytes=snapshot.total_bytes, listed_by="walk"))


@pytest.mark.parametrize(("payload", "caught_by"), [
    (REWRITE_TESTS, "the test run changed files of the repository (tests/test_core.py)"),
    (FORGE_REPORT, "disagrees with its report"),
], ids=["rewrites-the-tests", "forges-the-report"])
def test_a_rewrite_past_the_static_scan_still_cannot_pass(
        sandbox: Sandbox, tmp_path: Path, payload: str, caught_by: str) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "calc")
    snapshot = read_snapshot(tmp_path / "calc")
    original = snapshot.text(CORE)
    hostile = original + payload
    assert tampering_verdict({CORE: original}, {CORE: hostile}, ["tests/test_core.py"]) is None
    llm = ScriptedLLM([
        ("plan", json.dumps({"approach": "make the tests pass", "files": [CORE]})),
        ("generate", f"File: {CORE}\n````python\n{hostile}````\n"),
        ("review", json.dumps({"verdict": "approve", "reasons": "looks fine"}))])

    final = run_loop(_state(snapshot), Deps(llm=llm, sandbox=sandbox,
                                            work_root=tmp_path / "work", repository=snapshot))

    assert final.status is not Status.PASSED
    (attempt,) = final.attempts
    assert attempt.verdict is not None and not attempt.verdict.passed
    assert caught_by in attempt.verdict.evidence, attempt.verdict.evidence
