"""The behaviour probe's pure parts, and a whole probe run here in the test process."""

from __future__ import annotations

import time

from selfcorrect_action.bench import behaviour_probe as probe


def test_outcomes_compare_type_and_repr_and_catch_everything() -> None:
    assert probe.outcome(lambda x: x + 1, ((1,), {})) == ("ok", "int", "2")
    assert probe.outcome(lambda x: x / 0, ((1,), {})) == ("raise", "ZeroDivisionError")
    assert probe.outcome(lambda: exit(0), ((), {})) == ("raise", "SystemExit")
    assert probe.outcome(lambda: True, ((), {})) != probe.outcome(lambda: 1, ((), {}))


def test_a_slow_call_times_out() -> None:
    def spin() -> None:
        while True:
            pass
    started = time.monotonic()
    assert probe.outcome(spin, ((), {}), limit_s=0.05) == ("timeout",)
    assert time.monotonic() - started < 2


def test_arguments_are_copied_so_a_mutating_call_cannot_change_the_next() -> None:
    data = [3, 1, 2]
    probe.outcome(lambda xs: xs.sort(), ((data,), {}))
    assert data == [3, 1, 2]


def test_variations_keep_the_type_and_are_deduplicated() -> None:
    assert probe.variants(True) == [False]
    assert probe.variants(5) == [6, 4, 0, -5]
    assert "" in probe.variants("ab") and [] in probe.variants([1])
    calls = probe.perturbed([((1, "a"), {}), ((1, "a"), {})], "seed", 100)
    assert len(calls) == len({repr(c) for c in calls})
    assert ((1, "a"), {}) not in calls  # a variation is never the call itself
    assert calls == probe.perturbed([((1, "a"), {}), ((1, "a"), {})], "seed", 100)
    assert len(probe.perturbed([((1, "a"), {})], "seed", 3)) == 3


def test_first_difference_skips_inputs_the_original_rejects() -> None:
    calls: list[probe.Call] = [((0,), {}), ((1,), {}), ((2,), {})]
    baseline = [("raise", "ValueError"), ("ok", "int", "1"), ("ok", "int", "2")]
    assert probe.first_difference(lambda x: x, calls, baseline, time.monotonic() + 5) is None
    assert probe.first_difference(lambda x: 1, calls, baseline, time.monotonic() + 5) == 2


def test_a_probe_tells_a_test_visible_change_from_an_invisible_one() -> None:
    canonical = "def f(x):\n    if x > 10:\n        return 0\n    return x * 2\n"
    job = {
        "module": "m", "entry_point": "f", "canonical": canonical, "helpers": "",
        "test": "def check(candidate):\n    assert candidate(3) == 6\n", "seed": "t",
        "mutants": {
            "wrong_arithmetic": ["def f(x):\n    if x > 10:\n        return 0\n    return x + 2\n"],
            "flipped_comparison": [canonical,  # equivalent: skipped, the next site is taken
                                   "def f(x):\n    if x > 10 or x == 4:\n        return 0\n"
                                   "    return x * 2\n"],
        },
    }
    found = probe.probe(job)
    assert found["tested_inputs"] == 1
    assert found["kinds"]["wrong_arithmetic"] == [
        {"site": 0, "changed": True, "where": "test", "input": "((3,), {})"}]
    flipped = found["kinds"]["flipped_comparison"]
    assert flipped[0] == {"site": 0, "changed": False}
    assert flipped[1]["changed"] is True and flipped[1]["where"] == "perturbed"
