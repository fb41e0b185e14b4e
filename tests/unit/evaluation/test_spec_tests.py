"""How a frozen test that failed at the boundary is classified (evaluation/spec_tests.py)."""

from __future__ import annotations

import pytest

from selfcorrect_action.evaluation.spec_tests import _category
from selfcorrect_action.taxonomy import Category, TestOutcome


@pytest.mark.parametrize(("message", "category"), [
    ("selfcorrect_boundary.CandidateHung: the candidate did not answer in time during the "
     "call: it hung or ran too long", Category.RESOURCE),
    ("selfcorrect_boundary.CandidateCrashed: the candidate's process ended during the call "
     "(exit status 0)", Category.RUNTIME),
    ("selfcorrect_boundary.CandidateCrashed: the candidate's process ended during the call "
     "(killed by signal 9)", Category.RESOURCE),
    ("selfcorrect_boundary.CandidateRefused: the candidate raised builtins.SystemExit('0')",
     Category.RUNTIME),
    ("selfcorrect_boundary.NotPlainData: arithmetic (sub) between the candidate's x.Thing "
     "object and a float is not made", Category.CONTRACT),
    ("selfcorrect_boundary.ProtocolBroken: the candidate's process sent a reply of "
     "73,400,347 bytes", Category.RUNTIME),
    ("selfcorrect_boundary.SomethingNew: later", Category.RUNTIME),
])
def test_boundary_failures_have_their_category(message: str, category: Category) -> None:
    outcome = TestOutcome(test_id="test_it.py::test_a", outcome="failed", message=message)
    assert _category(outcome, "two_sum.py") is category


def test_an_assertion_is_still_a_contract_failure_and_a_raise_in_the_candidate_runtime() -> None:
    assertion = TestOutcome(test_id="t.py::a", outcome="failed", message="assert 1 == 2",
                            detail="../tests/t.py:3: in a\n    assert f() == 2\nE   assert 1 == 2")
    assert _category(assertion, "two_sum.py") is Category.CONTRACT
    raised = TestOutcome(
        test_id="t.py::a", outcome="failed", message="ZeroDivisionError: division by zero",
        detail="../tests/t.py:3: in a\n    f()\n../candidate/two_sum.py:2: in f\n    1 / 0\n"
               "E   ZeroDivisionError: division by zero")
    assert _category(raised, "two_sum.py") is Category.RUNTIME
