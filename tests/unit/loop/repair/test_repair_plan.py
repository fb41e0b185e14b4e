"""The plan of a repair (loop/repair/plan.py): which allowed files the failing tests'
tracebacks pass through (`suspects`), what the planner is shown of them, and what the run
goes on with when the plan answer is unusable. Over the loop's two fakes (a scripted model,
a test suite at the sandbox seam) with pytest's own traceback text."""

from __future__ import annotations

import json
from pathlib import Path

from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.orchestrator import run_loop
from selfcorrect_action.loop.repair.plan import suspects
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.records import evolve
from selfcorrect_action.repair.records import Baseline
from selfcorrect_action.repair.repository import Snapshot
from selfcorrect_action.taxonomy import TestOutcome
from tests.fakes.repair_sandbox import SuiteSandbox
from tests.fakes.scripted_llm import ScriptedLLM
from tests.unit.loop.repair.test_repair_loop import (
    ADD,
    ADD_STRINGS,
    APPROVE,
    BUGGY,
    FIXED,
    PLAN,
    TESTS,
    answer,
    repair_state,
    with_tracebacks,
)

OTHER_SOURCE = "def unrelated():\n    return 'OTHER-MARKER'\n"
ALLOWED = ["pkg/core.py", "pkg/other.py"]


def state_with(allowed: list[str], failing: list[TestOutcome],
               targets: list[str] | None = None) -> RunState:
    state = repair_state()
    assert state.repair is not None
    baseline = Baseline(failing=[o.test_id for o in failing], failing_outcomes=failing)
    return evolve(state, {"repair": evolve(state.repair, {
        "allowed": allowed, "baseline": baseline,
        "targets": [o.test_id for o in failing] if targets is None else targets})})


def failed(test_id: str, detail: str) -> TestOutcome:
    return TestOutcome(test_id=test_id, outcome="failed", message="boom", detail=detail)


def no_deps(tmp_path: Path) -> Deps:
    return Deps(llm=ScriptedLLM([]), sandbox=SuiteSandbox(with_tracebacks),
                work_root=tmp_path, now=lambda: "t1")


def test_suspects_are_the_allowed_files_the_targets_tracebacks_pass_through_innermost_first(
        tmp_path: Path) -> None:
    through = failed("t::a", "tests/test_a.py:3: in test_a\n    run()\n"
                     "pkg/api.py:10: in run\n    return helper()\n"
                     "/usr/lib/python3.11/functools.py:5: in wrapper\n    ???\n"
                     "/work/pkg/core.py:2: in helper\n    return 1 / 0\n"
                     "E   ZeroDivisionError: division by zero")
    again = failed("t::b", "tests/test_a.py:8: in test_b\n    helper()\n"
                   "pkg/core.py:2: in helper\n    return 1 / 0\n"
                   "pkg/util.py:4: in inner\n    raise ValueError\nE   ValueError")
    not_a_target = failed("t::c", "tests/test_a.py:12: in test_c\n    other()\n"
                          "pkg/other.py:1: in other\n    raise KeyError\nE   KeyError")
    allowed = ["core.py", "pkg/api.py", "pkg/core.py", "pkg/other.py", "pkg/util.py"]
    state = state_with(allowed, [through, again, not_a_target], targets=["t::a", "t::b"])

    # Innermost first, each once; never the library's frames, never a non-target's files,
    # and `core.py` (an allowed file whose name merely ends the frame's path) is not
    # pkg/core.py.
    assert suspects(state, no_deps(tmp_path)) == ["pkg/core.py", "pkg/api.py", "pkg/util.py"]


def test_no_traceback_through_an_allowed_file_leaves_no_suspect(tmp_path: Path) -> None:
    asserted = failed("t::a", "tests/test_a.py:3: in test_a\n    assert f() == 4\n"
                      "E   assert 0 == 4")
    assert suspects(state_with(["pkg/core.py"], [asserted]), no_deps(tmp_path)) == []


def run_plan(tmp_path: Path, answers: list[tuple[str, str]]
             ) -> tuple[RunState, ScriptedLLM]:
    files = {"pkg/__init__.py": b"", "pkg/core.py": BUGGY.encode(),
             "pkg/other.py": OTHER_SOURCE.encode(), "tests/test_core.py": TESTS.encode()}
    state = repair_state()
    assert state.repair is not None
    state = evolve(state, {"repair": evolve(state.repair, {"allowed": ALLOWED})})
    llm = ScriptedLLM(list(answers))
    final = run_loop(state, Deps(llm=llm, sandbox=SuiteSandbox(with_tracebacks),
                                 work_root=tmp_path, now=lambda: "t1",
                                 repository=Snapshot(tmp_path, files, "walk")))
    assert llm.answers == [], "every scripted answer was asked for"
    return final, llm


def test_the_planner_reads_the_task_the_failing_tests_and_the_suspect_files_source(
        tmp_path: Path) -> None:
    final, llm = run_plan(tmp_path, [PLAN, answer("pkg/core.py", FIXED), APPROVE])
    assert final.status is Status.PASSED
    plan = llm.requests[0]
    assert (plan.purpose, plan.tier) == ("plan", "cheap")
    system, user = (message.content for message in plan.messages)
    assert system.startswith("You locate bugs in existing Python code.")
    assert "```text\nadd(2, 2) returns 0\n```" in user  # the task, fenced as data
    # Each failing target with its assertion (both sides' values) or its traceback.
    assert f"- `{ADD}` failed: assert 0 == 4\n" in user
    assert "E   assert 0 == 4\nE    +  where 0 = add(2, 2)" in user
    assert f"- `{ADD_STRINGS}` failed: TypeError: unsupported operand" in user
    assert "pkg/core.py:2: in add\n    return a - b\n" in user
    # Every file it may name, but only the source of those the tracebacks pass through.
    assert "- `pkg/core.py`\n- `pkg/other.py`\n" in user
    assert f"## `pkg/core.py`\n```python\n{BUGGY}```" in user
    assert "pkg/other.py`\n```" not in user and "OTHER-MARKER" not in user
    assert '{"approach": ' in user and "Name only files that must change" in user


def test_an_unusable_plan_goes_on_with_the_suspects_not_every_allowed_file(
        tmp_path: Path) -> None:
    outside = ("plan", json.dumps({"approach": "rewrite the tests",
                                   "files": ["tests/test_core.py"]}))
    final, llm = run_plan(tmp_path, [outside, outside, answer("pkg/core.py", FIXED), APPROVE])
    assert final.plan is not None and final.plan.files == ["pkg/core.py"]
    assert final.plan.skipped.endswith("the repair goes on with pkg/core.py")
    assert "tests/test_core.py may not be rewritten" in llm.requests[1].messages[-1].content
    assert final.status is Status.PASSED
