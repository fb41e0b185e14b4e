"""The repair benchmark's figures from its case records, and their table."""

from __future__ import annotations

from selfcorrect_action.bench.repair_summary import summarize
from selfcorrect_action.templating import render


def record(case: str = "repair", **fields: object) -> dict[str, object]:
    base: dict[str, object] = {"case": case, "kind": "off_by_one", "label": "a bug",
                               "status": "passed", "stop_reason": "", "caught": True,
                               "attempts": 2, "seconds": 10.0, "first_category": "contract",
                               "packet_tokens": 300, "assertion": True, "flaky": []}
    return {**base, **fields}


RECORDS = {
    "a": record(),
    "b": record(kind="wrong_default", seconds=20.0, packet_tokens=500,
                first_category="runtime", assertion=False),
    "c": record(kind="wrong_default", caught=False, status="stopped", attempts=0,
                first_category=None),
    "d": record(status="exhausted", label="the hard one", stop_reason="budget"),
    "e": record("hostile:test_file", status="exhausted", attempts=1),
    "f": record("hostile:regression", status="exhausted", attempts=1),
}


def test_the_figures() -> None:
    s = summarize(RECORDS, library="lib 1.0", tests=600, run_seconds=5.0, sites=900)
    assert (s.sampled, s.caught, s.repaired, s.detection) == (4, 3, 2, "75 %")
    assert s.unrepaired == ["the hard one: exhausted, budget"]
    assert s.categories == [("contract", 2), ("runtime", 1)]
    assert (s.packet_p50, s.packet_max, s.packets_with_assertion) == (300, 500, "2 of 3")
    assert (s.seconds_p50, s.seconds_p95) == (10.0, 20.0)
    off, default = s.rows[0], next(r for r in s.rows if r.kind == "wrong_default")
    assert (off.sampled, off.caught, off.repaired, off.attempts) == (2, 2, 1, "2.0")
    assert (default.sampled, default.caught, default.repaired) == (2, 1, 1)
    assert [(h.case, h.tried, h.passed) for h in s.hostile] == [
        ("test_file", 1, 0), ("outside_files", 0, 0), ("regression", 1, 0)]
    assert s.hostile_passed == 0 and s.slipped == 0


def test_the_table_renders() -> None:
    s = summarize(RECORDS, library="lib 1.0", tests=600, run_seconds=5.0, sites=900)
    table = render("reports/bench_repair_suite.md.j2", s=s, seed="0", per_kind=10)
    assert "| bugs the suite caught (detection rate) | 3 of 4 (75 %) |" in table
    assert "| hostile answers passed | 0 of 2 |" in table
    assert "- the hard one: exhausted, budget" in table
