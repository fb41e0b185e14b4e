"""The repair loop over fakes at its two seams (a scripted model, a test suite at the sandbox
seam): the baseline before any model call, whole-file answers and what is refused, the
reviewer, regressions, flaky tests, and the packet the next attempt reads; under both
orchestrators (the LangGraph graph of a repair has the baseline and review nodes too)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.llm.models import ChatRequest, ChatResponse, ModelTiers
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.orchestrator import run_loop
from selfcorrect_action.loop.repair.execute import tampering_verdict
from selfcorrect_action.loop.state import RunState, Status, Strategy
from selfcorrect_action.repair.records import RepairRecord
from selfcorrect_action.repair.repository import Snapshot
from selfcorrect_action.sandbox.models import ExecutionRequest, ExecutionResult
from selfcorrect_action.spec import Budget, TaskSpec
from selfcorrect_action.taxonomy import Category
from tests.fakes.repair_sandbox import Outcomes, SuiteSandbox
from tests.fakes.scripted_llm import ScriptedLLM
from tests.orchestration import ORCHESTRATORS, use_orchestrator

BUGGY = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
FIXED = BUGGY.replace("a - b", "a + b")
BROKEN_MUL = FIXED.replace("a * b", "a ** b")
TESTS = "from pkg.core import add, mul\n\ndef test_add():\n    assert add(2, 2) == 4\n"
ADD, MUL, OTHER = "tests/test_core.py::test_add", "tests/test_core.py::test_mul", \
    "tests/test_core.py::test_other"
PLAN = ("plan", json.dumps({"approach": "add subtracts instead of adding",
                            "files": ["pkg/core.py"]}))
APPROVE = ("review", json.dumps({"verdict": "approve", "reasons": "fixes the operator"}))
REJECT = ("review", json.dumps({"verdict": "reject",
                                "reasons": "hard-codes the test's expected value"}))


@pytest.fixture(autouse=True, params=ORCHESTRATORS)
def _orchestrator(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch,
                  tmp_path: Path) -> None:
    use_orchestrator(request.param, sys.modules[__name__], monkeypatch,
                     tmp_path / "checkpoints.sqlite")


def answer(path: str, text: str, purpose: str = "generate") -> tuple[str, str]:
    return purpose, f"The fix.\n\nFile: {path}\n```python\n{text}```\n"


def suite(files: dict[str, str]) -> Outcomes:
    core = files["pkg/core.py"]
    failing = ("failed", "assert -0 == 4\n  where -0 = add(2, 2)")
    return {ADD: ("passed", "") if "a + b" in core else failing,
            MUL: ("passed", "") if "a * b" in core else ("failed", "assert 16 == 8"),
            OTHER: ("passed", "")}


def repair_state(*, review: bool = True, failing_tests: list[str] | None = None,
                 budget: Budget | None = None) -> RunState:
    spec = TaskSpec(prompt="add(2, 2) returns 0", kind="repair", files=["pkg/*.py"],
                    review=review, failing_tests=failing_tests or [],
                    budget=budget or Budget(patch_attempts=3, rethink_attempts=2))
    record = RepairRecord(allowed=["pkg/core.py"], repository_files=3, repository_bytes=100,
                          listed_by="walk")
    return RunState(run_id="r", started_at="t0", spec_source="fix.yml", spec=spec,
                    output_name="", contract=spec.contract, models=ModelTiers(), repair=record)


def repair_deps(llm: ScriptedLLM, sandbox: SuiteSandbox, tmp_path: Path) -> Deps:
    files = {"pkg/__init__.py": b"", "pkg/core.py": BUGGY.encode(),
             "tests/test_core.py": TESTS.encode()}
    return Deps(llm=llm, sandbox=sandbox, work_root=tmp_path, now=lambda: "t1",
                repository=Snapshot(tmp_path, files, "walk"))


def run(tmp_path: Path, answers: list[tuple[str, str]], *,
        outcomes: Callable[[dict[str, str]], Outcomes] = suite,
        **state_options: Any) -> tuple[RunState, SuiteSandbox, ScriptedLLM]:
    sandbox = SuiteSandbox(outcomes)
    llm = ScriptedLLM(list(answers))
    final = run_loop(repair_state(**state_options), repair_deps(llm, sandbox, tmp_path))
    assert llm.answers == [], "every scripted answer was asked for"
    return final, sandbox, llm


def test_a_repair_passes_when_its_target_passes_and_nothing_regresses(tmp_path: Path) -> None:
    final, sandbox, llm = run(tmp_path, [PLAN, answer("pkg/core.py", FIXED), APPROVE])

    assert final.status is Status.PASSED, final.stop_reason
    assert final.repair is not None and final.repair.baseline is not None
    assert final.repair.baseline.passing == [MUL, OTHER]
    assert final.repair.baseline.failing == [ADD] and final.repair.targets == [ADD]
    [attempt] = final.attempts
    assert attempt.files == {"pkg/core.py": FIXED} and attempt.code == ""
    assert "-    return a - b\n+    return a + b\n" in attempt.diff
    assert attempt.review is not None and attempt.review.approved
    assert attempt.progress.layer == 3 and attempt.regressions == []
    # Two baseline runs of the unchanged repository, then the attempt's run.
    assert len(sandbox.requests) == 3
    assert {f.path: f.data for f in sandbox.requests[0].files}["pkg/core.py"] == BUGGY.encode()
    assert {f.path: f.data for f in sandbox.requests[2].files}["pkg/core.py"] == FIXED.encode()
    assert [r.purpose for r in llm.requests] == ["plan", "generate", "review"]
    assert llm.requests[2].tier == "review"
    assert "-    return a - b" in llm.requests[2].messages[1].content  # the reviewer reads the diff


def test_the_baseline_runs_before_any_model_call(tmp_path: Path) -> None:
    sandbox = SuiteSandbox(suite)
    calls: list[str] = []

    class Watching(ScriptedLLM):
        def complete(self, request: ChatRequest) -> ChatResponse:
            calls.append(f"llm after {len(sandbox.requests)} runs")
            return super().complete(request)

    llm = Watching([PLAN, answer("pkg/core.py", FIXED), APPROVE])
    run_loop(repair_state(), repair_deps(llm, sandbox, tmp_path))
    assert calls[0] == "llm after 2 runs"


@pytest.mark.parametrize(("path", "said"), [
    ("tests/test_core.py", "tests/test_core.py is frozen (a test file"),
    ("pkg/other.py", "pkg/other.py is not a file of the repository that `files:`"),
    ("conftest.py", "conftest.py is frozen (a conftest.py plugs into pytest"),
])
def test_an_answer_touching_a_frozen_file_is_refused_and_never_runs(
        tmp_path: Path, path: str, said: str) -> None:
    hostile = ("generate", f"File: {path}\n```python\ndef test_add():\n    pass\n```\n"
               f"File: pkg/core.py\n```python\n{FIXED}```\n")
    final, sandbox, _ = run(tmp_path, [PLAN, hostile, answer("pkg/core.py", FIXED, "repair"),
                                       APPROVE])
    first = final.attempts[0]
    assert first.verdict is not None and first.verdict.category is Category.CONTRACT
    assert said in first.verdict.evidence and "refused, not run" in first.verdict.evidence
    assert first.execution is None and first.review is None
    assert first.rejected and "File: pkg/core.py" in first.rejected[0].text
    assert final.status is Status.PASSED and len(sandbox.requests) == 3


def test_a_regression_fails_the_attempt_naming_the_test(tmp_path: Path) -> None:
    final, _, llm = run(tmp_path, [PLAN, answer("pkg/core.py", BROKEN_MUL), APPROVE,
                                   answer("pkg/core.py", FIXED, "repair"), APPROVE])
    first = final.attempts[0]
    assert first.verdict is not None and first.verdict.category is Category.CONTRACT
    assert first.verdict.evidence == (f"regression: {MUL} passed at baseline and failed now: "
                                      "assert 16 == 8")
    assert first.regressions == [MUL] and first.progress.layer == 2
    assert first.packet is not None and first.packet.failing_tests[0].test_id == MUL
    repair_prompt = llm.requests[3].messages[1].content
    assert "regression" in repair_prompt and BROKEN_MUL.splitlines()[-1] in repair_prompt
    assert final.status is Status.PASSED and final.attempts[1].strategy is Strategy.PATCH


def test_a_rejection_by_the_reviewer_is_a_semantic_attempt_that_never_runs(
        tmp_path: Path) -> None:
    final, sandbox, llm = run(tmp_path, [PLAN, answer("pkg/core.py", FIXED), REJECT,
                                         answer("pkg/core.py", FIXED + "\n"), APPROVE])
    first = final.attempts[0]
    assert first.verdict is not None and first.verdict.category is Category.SEMANTIC
    assert first.verdict.evidence == ("rejected by the reviewer: hard-codes the test's "
                                      "expected value")
    assert first.execution is None and first.review is not None and not first.review.approved
    assert first.packet is not None
    assert first.packet.judge_reasoning == "hard-codes the test's expected value"
    assert final.attempts[1].strategy is Strategy.RETHINK
    assert final.status is Status.PASSED and len(sandbox.requests) == 3
    assert final.usage.llm_calls == len(llm.requests) == 5  # the reviews are counted too


def test_review_false_runs_every_change_without_a_reviewer(tmp_path: Path) -> None:
    final, _, llm = run(tmp_path, [PLAN, answer("pkg/core.py", FIXED)], review=False)
    assert final.status is Status.PASSED
    assert final.attempts[0].review is None
    assert [r.purpose for r in llm.requests] == ["plan", "generate"]


def test_flaky_tests_are_named_and_left_out_of_the_regression_check(tmp_path: Path) -> None:
    runs = [0]

    def flaky(files: dict[str, str]) -> Outcomes:
        runs[0] += 1
        outcomes = suite(files)
        outcomes[OTHER] = ("passed", "") if runs[0] == 1 else ("failed", "timing")
        return outcomes

    final, _, _ = run(tmp_path, [PLAN, answer("pkg/core.py", FIXED), APPROVE],
                      outcomes=flaky)
    assert final.repair is not None and final.repair.baseline is not None
    assert final.repair.baseline.flaky == [OTHER]
    assert final.status is Status.PASSED  # OTHER failed after the fix: flaky, not a regression


def test_nothing_failing_at_baseline_stops_before_any_model_call(tmp_path: Path) -> None:
    final, sandbox, llm = run(tmp_path, [], outcomes=lambda files: {OTHER: ("passed", "")})
    assert final.status is Status.STOPPED and llm.requests == []
    assert final.stop_reason.startswith("no test fails at baseline (1 passed")
    assert len(sandbox.requests) == 2


def test_targets_already_passing_leave_nothing_to_repair(tmp_path: Path) -> None:
    final, _, _ = run(tmp_path, [], failing_tests=[MUL])
    assert final.status is Status.STOPPED
    assert final.stop_reason == "every target test already passes at baseline: nothing to repair"


def test_failing_tests_that_name_no_test_end_the_run_as_bad_usage(tmp_path: Path) -> None:
    final, _, _ = run(tmp_path, [], failing_tests=["tests/test_core.py::test_nope"])
    assert final.status is Status.ERROR and final.error_exit_code == 2
    assert "failing_tests: tests/test_core.py::test_nope named no test among the 3" in (
        final.stop_reason)
    assert final.repair is not None and final.repair.baseline is not None  # kept for the audit


def test_given_failing_tests_are_the_targets(tmp_path: Path) -> None:
    final, _, _ = run(tmp_path, [PLAN, answer("pkg/core.py", FIXED), APPROVE],
                      failing_tests=["tests/test_core.py"])
    assert final.repair is not None and final.repair.targets == [ADD, MUL, OTHER]
    assert final.status is Status.PASSED


def test_a_baseline_that_cannot_be_read_ends_the_run_as_bad_usage(tmp_path: Path) -> None:
    class NoReport(SuiteSandbox):
        def run(self, request: ExecutionRequest, artifact_dir: Path) -> ExecutionResult:
            return super().run(request, artifact_dir).model_copy(update={"artifacts": []})

    llm = ScriptedLLM([])
    final = run_loop(repair_state(), repair_deps(llm, NoReport(suite), tmp_path))
    assert final.status is Status.ERROR and final.error_exit_code == 2
    assert final.stop_reason.startswith("baseline run 1: the test command wrote no pytest "
                                        "report")
    assert "hint: the unchanged repository's tests must run" in final.stop_reason


def test_a_run_that_changes_the_repositorys_files_fails(tmp_path: Path) -> None:
    sandbox = SuiteSandbox(suite, changed=lambda files: ["tests/test_core.py"]
                           if "a + b" in files["pkg/core.py"] else [])
    llm = ScriptedLLM([PLAN, answer("pkg/core.py", FIXED), APPROVE])
    final = run_loop(repair_state(budget=Budget(patch_attempts=0, rethink_attempts=0)),
                     repair_deps(llm, sandbox, tmp_path))
    verdict = final.attempts[0].verdict
    assert verdict is not None and not verdict.passed
    assert "the test run changed files of the repository (tests/test_core.py)" in (
        verdict.evidence)
    assert final.status is Status.EXHAUSTED


def test_a_rewrite_that_adds_tampering_is_refused_before_it_runs(tmp_path: Path) -> None:
    tampering = FIXED + "\nimport sys\nFRAME = sys._getframe(1)\n"
    final, sandbox, _ = run(tmp_path, [PLAN, answer("pkg/core.py", tampering), APPROVE,
                                       answer("pkg/core.py", FIXED, "repair"), APPROVE])
    first = final.attempts[0]
    assert first.verdict is not None and "sys._getframe" in first.verdict.evidence
    assert first.execution is None and len(sandbox.requests) == 3


def test_only_tampering_the_rewrite_adds_counts() -> None:
    original = "import sys\n\ndef caller():\n    return sys._getframe(1)\n"
    fixed = original.replace("(1)", "(2)")
    assert tampering_verdict({"pkg/x.py": original}, {"pkg/x.py": fixed}, []) is None
    refused = tampering_verdict({"pkg/x.py": original},
                                {"pkg/x.py": fixed + "import os\nos._exit(0)\n"}, [])
    assert refused is not None and "pkg/x.py: os._exit" in refused.evidence


def test_an_unparsable_rewrite_is_a_syntax_failure_and_the_same_change_twice_a_cycle(
        tmp_path: Path) -> None:
    broken = FIXED.replace("def mul(a, b):", "def mul(a, b)")
    final, sandbox, _ = run(
        tmp_path, [PLAN, answer("pkg/core.py", broken), answer("pkg/core.py", broken, "repair"),
                   answer("pkg/core.py", FIXED, "repair"), APPROVE])
    first, second = final.attempts[:2]
    assert first.verdict is not None and first.verdict.category is Category.SYNTAX
    assert "pkg/core.py:5" in first.verdict.evidence
    assert second.cycle_of == 1
    assert final.status is Status.PASSED and len(sandbox.requests) == 3


# What pytest 9 wrote (`--tb=short`, junit xunit1) for two tests of BUGGY: an assertion in
# the test, with both sides' values, and an exception raised inside pkg/core.py.
ADD_STRINGS = "tests/test_core.py::test_add_strings"
ASSERTED = ("tests/test_core.py:5: in test_add\n    assert add(2, 2) == 4\n"
            "E   assert 0 == 4\nE    +  where 0 = add(2, 2)")
RAISED = ('tests/test_core.py:9: in test_add_strings\n    assert add("ab", "c") == "abc"\n'
          "           ^^^^^^^^^^^^^^\npkg/core.py:2: in add\n    return a - b\n"
          "           ^^^^^\nE   TypeError: unsupported operand type(s) for -: 'str' and 'str'")


def with_tracebacks(files: dict[str, str]) -> Outcomes:
    fixed = "a + b" in files["pkg/core.py"]
    return {ADD: ("passed", "") if fixed else ("failed", ASSERTED),
            ADD_STRINGS: ("passed", "") if fixed else ("failed", RAISED),
            MUL: ("passed", ""), OTHER: ("passed", "")}


def test_the_packet_carries_the_assertion_and_the_frame_inside_an_allowed_file(
        tmp_path: Path) -> None:
    still_buggy = BUGGY + "\n# touched\n"
    final, _, llm = run(tmp_path, [PLAN, answer("pkg/core.py", still_buggy), APPROVE,
                                   answer("pkg/core.py", FIXED, "repair"), APPROVE],
                        outcomes=with_tracebacks)
    assert final.repair is not None and final.repair.targets == [ADD, ADD_STRINGS]
    packet = final.attempts[0].packet
    assert packet is not None and packet.file_name == "pkg/core.py"
    # The frame inside the file the repair may rewrite, by its path in the repository, with
    # its source line: the other test's traceback passes through no allowed file.
    assert packet.location == "pkg/core.py:2 in add: return a - b"
    asserted, raised = packet.failing_tests
    # The assertion with expected (4) and actual (0, what add(2, 2) returned).
    assert (asserted.test_id, asserted.message) == (ADD, "assert 0 == 4")
    assert asserted.detail.endswith("E   assert 0 == 4\nE    +  where 0 = add(2, 2)")
    assert raised.test_id == ADD_STRINGS and raised.message.startswith("TypeError: unsupported")
    # ...and the repair generation is told all of it.
    told = llm.requests[3].messages[1].content
    assert "Where it failed in pkg/core.py\npkg/core.py:2 in add: return a - b\n" in told
    assert "E   assert 0 == 4\nE    +  where 0 = add(2, 2)" in told
    assert final.status is Status.PASSED


def test_a_whole_file_answer_gets_room_for_the_whole_file() -> None:
    from selfcorrect_action.loop.repair.generate import answer_tokens

    assert answer_tokens({"a.py": "x = 1\n"}) == 6000  # a script's answer, at least
    # 90,000 characters are about 30,000 tokens (3 a token, the budget's estimate): the
    # answer may be that and a quarter more, plus a margin.
    assert answer_tokens({"a.py": "x" * 60_000, "b.py": "y" * 30_000}) == 38_500


def test_a_plan_naming_files_it_may_not_rewrite_twice_leaves_the_run_to_go_on(
        tmp_path: Path) -> None:
    outside = ("plan", json.dumps({"approach": "rewrite the tests",
                                   "files": ["tests/test_core.py"]}))
    final, _, _ = run(tmp_path, [outside, outside, answer("pkg/core.py", FIXED), APPROVE])
    assert final.plan is not None and final.plan.skipped.startswith(
        "skipped: the plan answer was unusable twice")
    assert final.plan.files == ["pkg/core.py"] and len(final.plan.rejected) == 2
    assert "tests/test_core.py may not be rewritten" in final.plan.rejected[0].reason
    assert final.status is Status.PASSED


def test_a_reviewer_answer_unreadable_twice_rejects(tmp_path: Path) -> None:
    garbled = ("review", "looks good to me!")
    final, sandbox, _ = run(tmp_path, [PLAN, answer("pkg/core.py", FIXED), garbled, garbled],
                            budget=Budget(patch_attempts=0, rethink_attempts=0))
    (attempt,) = final.attempts
    assert attempt.review is not None and not attempt.review.approved
    assert attempt.review.raw_verdict == "unreadable"
    assert attempt.verdict is not None and attempt.verdict.category is Category.SEMANTIC
    assert "failing closed" in attempt.verdict.evidence
    assert len(sandbox.requests) == 2 and final.status is Status.EXHAUSTED
