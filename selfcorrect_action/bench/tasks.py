"""A HumanEval problem as a task for the loop: `kind: function`, the module the frozen test
imports as its output, every contract field written (so no plan call is made), no judge
(the frozen test is the oracle), the default retry budget."""

from __future__ import annotations

import uuid

from selfcorrect_action.bench.problems import Problem
from selfcorrect_action.bench.scoring import LIMITS, TEST_TIMEOUT_S, frozen_tests
from selfcorrect_action.choices import Runtime
from selfcorrect_action.contract import ExecutionContract
from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.loop.deps import utc_now
from selfcorrect_action.loop.state import RunState
from selfcorrect_action.spec import Budget, TaskSpec, user_contract_fields
from selfcorrect_action.templating import render


def task_spec(problem: Problem, budget: Budget | None = None) -> TaskSpec:
    contract = ExecutionContract(
        artifacts=[], stdout_contains=[], timeout_s=TEST_TIMEOUT_S, memory_mb=LIMITS.memory_mb,
        success_criteria=[f"the published HumanEval test of {problem.task_id} passes"],
    )
    return TaskSpec(prompt=render("reports/bench_humaneval_task.md.j2", problem=problem),
                    kind="function", output=problem.file_name, contract=contract,
                    judge=False, budget=budget or Budget())


def initial_state(problem: Problem, models: ModelTiers, runtime: Runtime, *,
                  replayed: bool = False, budget: Budget | None = None) -> RunState:
    spec = task_spec(problem, budget)
    return RunState(
        run_id=uuid.uuid4().hex[:12], started_at=utc_now(),
        spec_source=f"humaneval:{problem.task_id}", spec=spec,
        user_contract_fields=sorted(user_contract_fields(spec)),
        output_name=problem.file_name, contract=spec.contract, tests=frozen_tests(problem),
        models=models, runtime=runtime, replayed=replayed,
    )
