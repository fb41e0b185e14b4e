"""The judge fails closed."""

from __future__ import annotations

from selfcorrect_action.loop.judge import JudgeAnswer, outcome_of


def test_a_clean_pass_passes() -> None:
    outcome = outcome_of(JudgeAnswer(verdict="pass", reasoning="all good"))
    assert outcome.passed and outcome.reasoning == "all good"


def test_a_fail_fails_with_its_reasons() -> None:
    outcome = outcome_of(JudgeAnswer(verdict="fail", reasoning="wrong order",
                                 unmet_criteria=["sorted descending"]))
    assert not outcome.passed and outcome.unmet_criteria == ["sorted descending"]


def test_a_pass_with_unmet_criteria_is_ambiguous_and_fails() -> None:
    outcome = outcome_of(JudgeAnswer(verdict="pass", reasoning="mostly",
                                 unmet_criteria=["title missing"]))
    assert not outcome.passed
    assert "failed closed" in outcome.reasoning


def test_blank_unmet_items_are_ignored() -> None:
    assert outcome_of(JudgeAnswer(verdict="pass", reasoning="ok", unmet_criteria=["  "])).passed
