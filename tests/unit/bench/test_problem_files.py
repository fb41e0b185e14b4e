"""HumanEval problems as selfcorrect sees them: the frozen test file, the task, a model's
one-shot answer as a module, the repair packet's facts, the batch container's settings."""

from __future__ import annotations

import ast

import pytest

from selfcorrect_action.bench.model_mode import completion_module
from selfcorrect_action.bench.packets import packet_facts
from selfcorrect_action.bench.problems import Problem, load_problems
from selfcorrect_action.bench.tasks import initial_state
from selfcorrect_action.bench.testfile import free_names, frozen_test, prompt_helpers
from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.loop.plan import CONTRACT_FIELDS
from selfcorrect_action.loop.state import RepairPacket, Strategy
from selfcorrect_action.sandbox.batch import batch_container_config
from selfcorrect_action.sandbox.config import PoolKey, container_config
from selfcorrect_action.sandbox.models import Limits
from selfcorrect_action.taxonomy import Category, TestOutcome

PROBLEMS = {p.task_id: p for p in load_problems()}


def test_all_164_problems_load_in_order() -> None:
    assert list(PROBLEMS)[:2] == ["HumanEval/0", "HumanEval/1"] and len(PROBLEMS) == 164
    assert PROBLEMS["HumanEval/12"].file_name == "humaneval_12.py"


@pytest.mark.parametrize("task", ["HumanEval/0", "HumanEval/32", "HumanEval/33",
                                  "HumanEval/38"])
def test_every_frozen_test_parses_and_imports_the_candidate_as_a_spec_does(task: str) -> None:
    problem = PROBLEMS[task]
    text = frozen_test(problem)
    tree = ast.parse(text)
    assert any(isinstance(n, ast.FunctionDef) and n.name == f"test_{problem.module}"
               for n in tree.body)
    assert f"from {problem.module} import {problem.entry_point} as candidate_function" in text


def test_helpers_come_from_the_prompt_and_the_entry_point_by_name_from_the_candidate() -> None:
    assert free_names(PROBLEMS["HumanEval/32"].test) == {"poly"}
    assert "def poly(" in frozen_test(PROBLEMS["HumanEval/32"])
    assert "def find_zero(" not in frozen_test(PROBLEMS["HumanEval/32"])
    assert "sort_third = candidate_function" in frozen_test(PROBLEMS["HumanEval/33"])
    assert prompt_helpers(PROBLEMS["HumanEval/0"].prompt, set()) == ""


def test_the_task_skips_the_plan_and_the_judge() -> None:
    state = initial_state(PROBLEMS["HumanEval/3"], ModelTiers(), "runc")
    assert set(CONTRACT_FIELDS) <= set(state.user_contract_fields)
    assert state.spec.kind == "function" and not state.spec.judge
    assert state.output_name == "humaneval_3.py" and list(state.tests) == ["test_humaneval_3.py"]


@pytest.mark.parametrize(("answer", "expected"), [
    ("```python\ndef add(a, b):\n    return a + b\n```", "return a + b"),
    ("    return a + b\n", "    return a + b"),
    ("return a + b", "    return a + b"),
])
def test_one_shot_answers_become_modules(answer: str, expected: str) -> None:
    problem = Problem("HumanEval/9", 'def add(a, b):\n    """Add."""\n', "", "", "add")
    source = completion_module(problem, answer)
    namespace: dict[str, object] = {}
    exec(source, namespace)
    assert namespace["add"](2, 3) == 5  # type: ignore[operator]
    assert expected in source


def test_packet_facts_see_the_rewritten_assertion() -> None:
    failing = TestOutcome(test_id="t.py::test_x", outcome="failed", message="assert 3 == 4",
                          detail="E   assert 3 == 4\nE    +  where 3 = f(1)")
    packet = RepairPacket(attempt=1, max_attempts=6, strategy=Strategy.PATCH,
                          category=Category.CONTRACT, evidence="tests failed",
                          failing_tests=[failing])
    facts = packet_facts(packet)
    assert facts.assertion and facts.expected_vs_actual and 0 < facts.tokens < 1500
    bare = packet.model_copy(update={"failing_tests": [failing.model_copy(update={
        "message": "ValueError: x", "detail": "E   ValueError: x"})]})
    assert not packet_facts(bare).assertion


def test_a_batch_container_differs_from_a_single_ones_in_three_settings_only() -> None:
    key = PoolKey(image="i", runtime="runc", limits=Limits())
    single = container_config(key, session="s", expires_at=1, idle_timeout_s=5)
    batch = batch_container_config(key, session="s", expires_at=1, idle_timeout_s=5)
    assert single["user"] == "10001:10001" and single["cap_drop"] == ["ALL"]
    assert "cap_add" not in single
    assert batch["user"] == "0:0" and batch["cap_add"] == ["SETUID", "SETGID"]
    assert "mode=1733" in batch["tmpfs"]["/work"] and "mode=0700" in batch["tmpfs"]["/tmp"]
    same = {k for k in single if single[k] == batch.get(k)}
    assert set(single) - same == {"user", "tmpfs"}
    assert batch["security_opt"] == ["no-new-privileges:true"] and batch["read_only"]
    assert batch["network_mode"] == "none"
