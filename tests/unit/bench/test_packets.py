"""What a repair packet carried, measured: pytest's rewritten assertions and unittest's."""

from __future__ import annotations

from selfcorrect_action.bench.packets import packet_facts
from selfcorrect_action.loop.state import RepairPacket, Strategy
from selfcorrect_action.taxonomy import Category, TestOutcome


def packet(message: str, detail: str = "") -> RepairPacket:
    return RepairPacket(attempt=1, max_attempts=3, strategy=Strategy.PATCH,
                        category=Category.CONTRACT, evidence="tests failed", failing_tests=[
                            TestOutcome(test_id="t::x", outcome="failed", message=message,
                                        detail=detail)])


def test_pytest_and_unittest_assertions_count_with_both_sides() -> None:
    for message in ("assert 3 == 4", "AssertionError: assert 3 == 4",
                    "AssertionError: Lists differ: [1, 2] != [1, 3]", "AssertionError: 3 != 4"):
        facts = packet_facts(packet(message))
        assert facts.assertion and facts.expected_vs_actual, message


def test_an_exception_is_no_assertion() -> None:
    facts = packet_facts(packet("ZeroDivisionError: division by zero"))
    assert not facts.assertion and not facts.expected_vs_actual
    assert facts.tokens > 0
