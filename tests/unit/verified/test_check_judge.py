"""`selfcorrect check --judge`'s pure parts (verified/check_judge.py, issue 36 item 2): what
is said before anything is spent, what a judged re-verification's state makes the result
(verdict, reasons, tokens, cost; nothing when the judge was not asked), the check's total;
and the state a judged re-verification runs (verified/reverify.py: the judge on, the
tiers a run of the spec resolves)."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.loop.state import JudgeOutcome, RunState, Status, Usage, end_run
from selfcorrect_action.records import evolve
from selfcorrect_action.spec import load_spec
from selfcorrect_action.verified.check import CheckStatus
from selfcorrect_action.verified.check_judge import (
    announcement,
    judge_result,
    said_of,
    total,
    total_said,
)
from selfcorrect_action.verified.results import CheckResult, JudgeResult
from selfcorrect_action.verified.reverify import reverify_state

JUDGE = ModelTiers(cheap="openai/c", strong="openai/s", judge="openai/j")
SECRET = "sk-live-0123456789abcdef"


@pytest.fixture
def state(tmp_path: Path) -> RunState:
    (tmp_path / ".git").mkdir()
    (tmp_path / "task.yml").write_text("prompt: Print the totals.\noutput: totals.py\n"
                                       "judge: false\n")
    loaded = load_spec(tmp_path / "task.yml", root=tmp_path)
    return reverify_state(loaded, None, "print(1)\n", judged_by=JUDGE)


def judged(state: RunState, outcome: JudgeOutcome | None, *, cost_known: bool = True
           ) -> RunState:
    attempt = evolve(state.attempts[-1], {"judge": outcome})
    usage = Usage(tokens=1500, cost_usd=0.00123456, cost_known=cost_known, llm_calls=1)
    return evolve(state, {"attempts": [attempt], "usage": usage})


def test_a_judged_reverification_asks_the_judge_whatever_the_spec_says(
        state: RunState, tmp_path: Path) -> None:
    assert state.spec.judge is True  # the spec said `judge: false`: --judge asks all the same
    assert state.models == JUDGE
    plain = reverify_state(load_spec(tmp_path / "task.yml", root=tmp_path), None, "x = 1\n")
    assert plain.spec.judge is False and plain.models == ModelTiers()


def test_the_judges_pass_with_its_cost(state: RunState) -> None:
    done = judged(state, JudgeOutcome(passed=True, reasoning="prints the totals",
                                      raw_verdict="pass"))
    assert judge_result(done, secrets=[]) == JudgeResult(
        verdict="pass", reasoning="prints the totals", model="openai/j", calls=1,
        tokens=1500, cost_usd=0.001235)


def test_the_judges_fail_keeps_its_unmet_criteria_and_hides_secrets(state: RunState
                                                                    ) -> None:
    done = judged(state, JudgeOutcome(
        passed=False, reasoning=f"prints {SECRET} instead", unmet_criteria=["per region"],
        raw_verdict="fail"), cost_known=False)
    result = judge_result(done, secrets=[SECRET])
    assert result is not None and result.verdict == "fail"
    assert result.reasoning.endswith("(unmet: per region)")
    assert SECRET not in result.reasoning
    assert result.cost_usd is None  # a model without a known price


def test_a_judge_the_budget_stopped_did_not_answer(state: RunState) -> None:
    done = end_run(judged(state, None), Status.EXHAUSTED, "token budget: 10 of 10 used")
    result = judge_result(done, secrets=[])
    assert result is not None
    assert (result.verdict, result.reasoning) == (None, "token budget: 10 of 10 used")
    assert said_of(result) == "the judge: no answer, 1,500 tokens, $0.0012"


def test_no_judge_asked_when_the_sandbox_failed_first(state: RunState) -> None:
    assert judge_result(judged(state, None), secrets=[]) is None


def test_what_is_said_before_anything_is_spent() -> None:
    assert announcement([]) == "--judge: no stale spec, no model asked"
    assert "no model asked" in announcement(["a.yml"], no_engine=True)
    said = announcement([".selfcorrect/tasks/a.yml", ".selfcorrect/tasks/b.yml"])
    assert said.startswith("--judge asks a model: 2 stale specs (.selfcorrect/tasks/a.yml, ")
    assert "tokens are spent" in said


def result(judge: JudgeResult | None) -> CheckResult:
    return CheckResult(spec="a.yml", status=CheckStatus.PASSES, judge=judge)


def test_the_checks_total() -> None:
    one = JudgeResult(verdict="pass", reasoning="ok", model="m", calls=1, tokens=1000,
                      cost_usd=0.5)
    two = one.model_copy(update={"calls": 2, "tokens": 2500, "cost_usd": 0.25})
    spent = total([result(one), result(None), result(two)])
    assert total_said(spent) == ("--judge: the judge asked of 2 specs, 3 calls, 3,500 "
                                 "tokens, $0.7500")
    unpriced = total([result(one), result(two.model_copy(update={"cost_usd": None}))])
    assert unpriced is not None and unpriced.cost_usd is None
    assert total([result(None)]) is None
    assert total_said(None) == "--judge: no model asked, 0 tokens"
