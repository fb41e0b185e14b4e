"""Plan: fills gaps only, clamps what it fills, never opens the network."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from selfcorrect_action.contract import ArtifactSpec, ExecutionContract
from selfcorrect_action.loop.plan import PlanAnswer, PlannedContract, merge_contract
from selfcorrect_action.network_rules import NetworkRules


def test_user_fields_are_kept_and_gaps_filled() -> None:
    user = ExecutionContract(timeout_s=12, artifacts=[ArtifactSpec(path="a.png", kind="png")])
    planned = PlannedContract(
        timeout_s=99, artifacts=[ArtifactSpec(path="b.csv", kind="csv")],
        success_criteria=["it works"], stdout_contains=["done"],
    )
    merged, filled = merge_contract(user, {"timeout_s", "artifacts", "artifacts.0.path"},
                                    planned)
    assert merged.timeout_s == 12
    assert [a.path for a in merged.artifacts] == ["a.png"]
    assert merged.success_criteria == ["it works"]
    assert merged.stdout_contains == ["done"]
    assert filled == ["stdout_contains", "success_criteria"]


def test_planned_limits_are_clamped() -> None:
    merged, _ = merge_contract(ExecutionContract(), set(),
                               PlannedContract(timeout_s=3600, memory_mb=16000))
    assert merged.timeout_s == 300
    assert merged.memory_mb == 2048


def test_the_planner_cannot_open_the_network() -> None:
    merged, filled = merge_contract(ExecutionContract(), set(), PlannedContract(network="open"))
    assert merged.network == "none"
    assert "network" not in filled


def test_null_fields_leave_the_default() -> None:
    merged, filled = merge_contract(ExecutionContract(), set(), PlannedContract())
    assert merged == ExecutionContract()
    assert filled == []


def test_plan_answers_are_strict() -> None:
    with pytest.raises(ValidationError):
        PlanAnswer.model_validate({"approach": "x", "contract": {"colour": "red"}})
    with pytest.raises(ValidationError):
        PlanAnswer.model_validate({"approach": ""})


@pytest.mark.parametrize(
    ("tests", "problem"),
    [("def test_x(:\n", "does not parse"), ("def helper():\n    pass\n", "defines no test")],
)
def test_written_tests_must_be_real_tests(tests: str, problem: str) -> None:
    with pytest.raises(ValidationError, match=problem):
        PlanAnswer.model_validate({"approach": "x", "tests": tests})


def test_an_approach_that_echoes_the_prompt_or_our_placeholder_is_a_parrot() -> None:
    from selfcorrect_action.loop.plan import parrots

    asked = ("Plan how to meet this task. Task: Read sales.csv and plot units per product. "
             '"approach": "2-6 sentences: how the program will do it, which libraries, '
             'which files it writes"')
    assert parrots("2-6 sentences: how the program will do it, which libraries, which "
                   "files it writes", asked)  # what SmolLM2 answered
    assert parrots("Read sales.csv and plot units per product.", asked)
    assert not parrots("Load sales.csv with pandas, group by product, sum the units, sort "
                       "them descending and draw the bars with matplotlib into chart.png.",
                       asked)
    assert not parrots("Use csv.", asked)  # too short to tell


def test_a_planned_allow_list_is_never_applied() -> None:
    """The planner may answer with a network (an allow list included); only a person opens
    it (issue 19)."""
    planned = PlannedContract(network=NetworkRules(allow=["api.example.com"]))
    merged, filled = merge_contract(ExecutionContract(), set(), planned)
    assert merged.network == "none" and "network" not in filled
