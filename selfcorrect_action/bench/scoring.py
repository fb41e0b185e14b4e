"""One completion of one problem, judged as selfcorrect judges a `kind: function` candidate:
its frozen test run in the sandbox (the engine's own command: by default across the tests'
boundary, the candidate in a process of its own), then the engine's verdict on that run
(evaluation/spec_tests.py: junit parsed as hostile input, pytest's exit status agreeing
with it, the failure classified).

Only the tests' run is made: the loop also runs a candidate on its own first, which for a
HumanEval module (definitions only) shows nothing the test run does not, so the benchmark
leaves it out for speed (the mutants mode's repairs go through the loop, both runs and all).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from selfcorrect_action.bench.problems import Problem
from selfcorrect_action.bench.testfile import frozen_test
from selfcorrect_action.choices import Runtime
from selfcorrect_action.evaluation.junit import (
    PYTEST_JUNIT_PATH,
    boundary_pytest_argv,
    pytest_argv,
)
from selfcorrect_action.evaluation.plain_tests import plain_runnable
from selfcorrect_action.evaluation.spec_tests import TestsVerdict, judge_test_run
from selfcorrect_action.sandbox.models import (
    Boundary,
    ExecutionRequest,
    ExecutionResult,
    InputFile,
    Limits,
)
from selfcorrect_action.spec import Isolation

# The reference harness gives each check 3 s; ours includes pytest's start in a container.
TEST_TIMEOUT_S = 10.0
LIMITS = Limits()
# What a sandbox that runs HumanEval's candidates as scripts preloads before the first one
# came: nothing (its problems import the standard library only), not the data libraries.
HUMANEVAL_PRELOAD: tuple[str, ...] = ()


@dataclass(frozen=True)
class Score:
    passed: bool
    category: str | None = None
    evidence: str = ""
    duration_ms: int = 0  # the test run inside the sandbox

    @classmethod
    def of(cls, verdict: TestsVerdict, result: ExecutionResult) -> Score:
        return cls(passed=verdict.passed,
                   category=verdict.category.value if verdict.category else None,
                   evidence=verdict.evidence, duration_ms=result.duration_ms)


def frozen_tests(problem: Problem) -> dict[str, str]:
    """The frozen tests of `problem`, as a RunState holds them (name -> text)."""
    return {problem.test_file_name: frozen_test(problem)}


@functools.lru_cache(maxsize=1024)
def plain_tests(problem: Problem) -> bool:
    """Whether the problem's frozen tests need nothing of pytest's (evaluation/
    plain_tests.py), decided once per problem: every sample of it has the same tests."""
    return plain_runnable(frozen_tests(problem)) is None


def tests_request(problem: Problem, module_source: str, runtime: Runtime, *,
                 isolation: Isolation = "process", plain: bool = True) -> ExecutionRequest:
    """The test run the loop makes (loop/execute.py): across the tests' boundary, or with
    the candidate imported into pytest's process (the cheats' control run)."""
    files = [InputFile(path=problem.file_name, data=module_source.encode()),
             *(InputFile(path=name, data=text.encode())
               for name, text in frozen_tests(problem).items())]
    tests = [problem.test_file_name]
    if isolation == "in-process":
        return ExecutionRequest(argv=pytest_argv(tests), files=files,
                                timeout_s=TEST_TIMEOUT_S, limits=LIMITS, runtime=runtime)
    plain = plain and plain_tests(problem)
    return ExecutionRequest(
        argv=boundary_pytest_argv(tests, plain=plain), files=files, timeout_s=TEST_TIMEOUT_S,
        limits=LIMITS, runtime=runtime, artifact_paths=[PYTEST_JUNIT_PATH],
        boundary=Boundary(candidate=problem.file_name, module=problem.module, tests=tests))


def judge(problem: Problem, result: ExecutionResult) -> Score:
    return Score.of(judge_test_run(result, candidate=problem.file_name), result)
