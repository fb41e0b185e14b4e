"""What a repair packet told the model, measured: its size in tokens (estimated as the loop
budgets them) and whether it carried the failing assertion with both sides' values."""

from __future__ import annotations

import re
from dataclasses import dataclass

from selfcorrect_action.loop.budget import estimate_tokens
from selfcorrect_action.loop.feedback import render_packet
from selfcorrect_action.loop.state import RepairPacket

# pytest's rewritten assertion: `assert 3 == 4`, `assert 'ab' != 'ab'`, `assert False`...;
# unittest's: `AssertionError: Lists differ: [1] != [2]`, `AssertionError: 3 != 4`.
_ASSERTION = re.compile(
    r"(?:^|\n)\s*(?:E\s+)?(?:AssertionError: (?:assert )?|assert )(?P<rest>.+)")
_COMPARISON = re.compile(r".+? (?:==|!=|<=|>=|<|>|is not|is|not in|in) .+")


@dataclass(frozen=True)
class PacketFacts:
    tokens: int
    assertion: bool  # a failing test's assertion is in the packet
    expected_vs_actual: bool  # ...as a comparison with both sides' values shown


def packet_facts(packet: RepairPacket) -> PacketFacts:
    text = render_packet(packet)
    assertion = comparison = False
    for test in packet.failing_tests:
        for found in _ASSERTION.finditer(f"{test.message}\n{test.detail}"):
            assertion = True
            comparison = comparison or bool(_COMPARISON.fullmatch(found["rest"].strip()))
    return PacketFacts(tokens=estimate_tokens(text), assertion=assertion,
                       expected_vs_actual=comparison)
