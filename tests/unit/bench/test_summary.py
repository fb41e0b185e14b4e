"""What a run adds up to, and the gate."""

from __future__ import annotations

from typing import Any

import pytest

from selfcorrect_action.bench import summary
from selfcorrect_action.bench.results import RunRecord, Segment


def run(items: dict[str, Any], extras: dict[str, Any] | None = None,
        segments: list[tuple[int, float]] | None = None,
        mode: str = "canonical") -> RunRecord:
    return RunRecord(mode=mode, settings={"isolation": "strict", "runtime": "runc",
                                          "workers": 2},
                     items=items, extras=extras or {},
                     segments=[Segment(started_at="t", items=n, wall_s=w)
                               for n, w in segments or []])


def test_side_by_side_counts_agreement_and_lists_disagreements() -> None:
    record = run({"A": {"passed": True}, "B": {"passed": False, "category": "contract",
                                                "evidence": "assert 1 == 2"}},
                 {"reference": {"wall_s": 2.0, "verdicts": {
                     "A": {"passed": True, "result": "passed"},
                     "B": {"passed": True, "result": "passed"}}},
                  "bare": {"wall_s": 5.0}}, [(2, 6.0)])
    s = summary.side_by_side(record, ["A", "B"])
    assert (s.ours_passed, s.reference_passed, s.agreement) == (1, 2, 1)
    assert [d.key for d in s.disagreements] == ["B"] and s.disagreements[0].category == "contract"
    assert s.vs_reference == 3.0 and s.vs_bare == pytest.approx(1.2)
    assert s.headline == 50.0


def test_a_resumed_run_has_no_wall_time_to_compare() -> None:
    record = run({"A": {"passed": True}, "B": {"passed": True}}, segments=[(1, 3.0), (1, 3.0)])
    assert summary.side_by_side(record, ["A", "B"]).ours_wall_s is None
    assert summary.side_by_side(record, ["A", "B"]).vs_bare is None


def test_mutation_detection_repairs_and_cheats() -> None:
    items = {
        "T/0": {"kinds": {"off_by_one": {"site": 0, "sites_checked": 1, "where": "test"},
                          "missing_return": {"site": None, "sites_checked": 2},
                          "flipped_comparison": {"site": 1, "sites_checked": 2,
                                                 "where": "perturbed"}}},
        "T/0:off_by_one": {"passed": False, "category": "contract"},
        "T/0:flipped_comparison": {"passed": True, "label": "x < 1 -> x > 1"},
        "T/0:off_by_one:repair": {"passed": True, "attempts": 2, "packet_tokens": 300,
                                  "assertion": True, "expected_vs_actual": True},
        "T/0:cheat:pytest_hook": {"passed": False},
        "T/0:control:pytest_hook": {"passed": True},
    }
    m = summary.mutation(run(items, mode="mutants"), ["T/0"])
    rows = {row.kind: row for row in m.kinds}
    assert (rows["off_by_one"].mutants, rows["off_by_one"].caught) == (1, 1)
    assert rows["missing_return"].equivalent_only == 1 and rows["missing_return"].mutants == 0
    assert rows["flipped_comparison"].missed == 1
    assert m.total.detection == 50.0 and m.categories == {"contract": 1}
    assert m.repairs.passed == 1 and m.repairs.attempts == {2: 1}
    hook = next(row for row in m.cheats if row.name == "pytest_hook")
    assert (hook.passed, hook.control_passed) == (0, 1) and m.cheats_passed == 0


def test_model_run_pass_rates_and_cost_per_solved() -> None:
    items = {
        "A": {"oneshot": {"passed": True}, "loop": {"passed": True, "attempts": 1,
                                                    "tokens": 900, "cost_usd": 0.01}},
        "B": {"oneshot": {"passed": False, "category": "contract"},
              "loop": {"passed": True, "attempts": 3, "tokens": 2100, "cost_usd": 0.03}},
        "C": {"oneshot": {"passed": False, "category": "runtime"},
              "loop": {"passed": False, "attempts": 6, "tokens": 3000, "cost_usd": 0.02,
                       "final_category": "runtime", "status": "exhausted"}},
    }
    r = summary.model_run(run(items, mode="model"), ["A", "B", "C"])
    assert (r.oneshot_passed, r.loop_passed) == (1, 2)
    assert r.tokens_per_solved == 3000.0 and r.cost_per_solved == pytest.approx(0.03)
    assert dict((c, (o, lp)) for c, o, lp in r.categories) == {"contract": (1, 0),
                                                               "runtime": (1, 1)}


def test_model_run_syntax_share_tokens_and_seconds_per_problem() -> None:
    items: dict[str, dict[str, dict[str, Any]]] = {
        "A": {"oneshot": {"passed": False, "category": "syntax", "tokens": 100,
                          "seconds": 2.0},
              "loop": {"passed": False, "attempts": 3, "tokens": 900, "seconds": 10.0,
                       "cost_usd": 0, "categories": ["syntax", "runtime", "syntax"]}},
        "B": {"oneshot": {"passed": True, "tokens": 50, "seconds": 1.0},
              "loop": {"passed": True, "attempts": 1, "tokens": 150, "seconds": 3.0,
                       "cost_usd": 0, "categories": [None]}},
    }
    r = summary.model_run(run(items, mode="model"), ["A", "B"])
    assert (r.loop_attempts, r.syntax_attempts, r.syntax_share) == (4, 2, 50.0)
    assert r.tokens_per_problem == 600.0 and r.seconds_per_problem == 8.0
    # Records of a version that kept no seconds: the figure is unknown, not zero.
    for record in items.values():
        for part in record.values():
            del part["seconds"]
    assert summary.model_run(run(items, mode="model"), ["A", "B"]).seconds_per_problem is None


@pytest.mark.parametrize(("headline", "gate", "failed"), [
    (80.0, None, False), (80.0, 80.0, False), (79.9, 80.0, True), (None, 10.0, True),
])
def test_the_gate(headline: float | None, gate: float | None, failed: bool) -> None:
    assert summary.gate_failed(headline, gate) is failed


def test_every_mode_renders_its_table_and_plot(tmp_path) -> None:
    from selfcorrect_action.bench.options import BenchOptions
    from selfcorrect_action.bench.run import render_run

    canonical = run({"A": {"passed": True}}, {"reference": {"wall_s": 1.0, "verdicts": {
        "A": {"passed": True, "result": "passed"}}}, "bare": {"wall_s": 2.0}}, [(1, 1.5)])
    rendered = render_run(BenchOptions(), canonical, ["A"], "selfcorrect bench humaneval",
                          tmp_path / "c")
    assert "| selfcorrect (strict) | 1/1 | 1/1 | 1.50 s |" in rendered.markdown
    assert "selfcorrect / bare container loop 0.75 x" in rendered.markdown
    assert rendered.png is not None and rendered.png.stat().st_size > 1000
    mutants = render_run(BenchOptions(mode="mutants"), run({}, mode="mutants"), ["T/0"],
                         "cmd", tmp_path / "m")
    assert "| all | 0 | 0 | 0 | 0 | 0 | n/a |" in mutants.markdown
    model = render_run(BenchOptions(mode="model", gate=50), run({"A": {
        "oneshot": {"passed": False, "category": "contract"},
        "loop": {"passed": True, "attempts": 2, "tokens": 10, "cost_usd": 0.0}}}, mode="model"),
        ["A"], "cmd", tmp_path / "x")
    assert "| the loop | 100.0% (1/1) | 2.00 |" in model.markdown
    assert "The loop's attempts: 0, of which 0 (n/a) failed as `syntax`" in model.markdown
    assert "against a floor of 50.0%: passed" in model.markdown and model.headline == 100.0


def _started(start: str, items: dict[str, Any], wall_s: float) -> RunRecord:
    record = run(items, {"reference": {"wall_s": 1.0, "verdicts": {
        key: {"passed": True, "result": "passed"} for key in items}},
        "bare": {"wall_s": 2.0}, "bare_no_network": {"wall_s": 1.0}}, [(len(items), wall_s)])
    return record.model_copy(update={"settings": {**record.settings, "start": start}})


def test_cold_and_warm_of_one_invocation_share_a_table(tmp_path) -> None:
    from selfcorrect_action.bench.run import render_starts

    same = {"A": {"passed": True}, "B": {"passed": False, "category": "contract"}}
    runs = [_started("cold", same, 4.0), _started("warm", same, 3.0)]
    starts = summary.starts(runs, ["A", "B"])
    assert [row.start for row in starts.rows] == ["cold", "warm"]
    assert starts.differing == [] and starts.warm_vs_cold == 0.75 and starts.headline == 50.0
    rendered = render_starts(runs, ["A", "B"], "cmd", tmp_path / "both")
    text = rendered.markdown
    assert "| selfcorrect (strict, cold) | 1/2 | 1/2 | 4.00 s | 0.5 | 4.00 x | 2.00 x | 4.00 x |" \
        in text
    assert "| selfcorrect (strict, warm) | 1/2 | 1/2 | 3.00 s | 0.7 | 3.00 x | 1.50 x | 3.00 x |" \
        in text
    assert "Warm / cold: 0.75 x" in text and "is the same cold and warm" in text
    assert rendered.png is not None and rendered.png.stat().st_size > 1000


def test_a_verdict_that_differs_between_starts_is_named() -> None:
    cold = _started("cold", {"A": {"passed": True}, "B": {"passed": True}}, 4.0)
    # B failed warm; C was not scored cold (a resumed run): only B is named.
    warm = _started("warm", {"A": {"passed": True},
                             "B": {"passed": False, "category": "runtime"},
                             "C": {"passed": True}}, 3.0)
    starts = summary.starts([cold, warm], ["A", "B", "C"])
    assert starts.differing == ["B"]
    assert starts.rows[0].ours_wall_s is None  # two of the three scored: not comparable
