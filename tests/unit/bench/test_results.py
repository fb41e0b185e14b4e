"""results.json: keyed by run and item, merged item by item, resumed, written atomically."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfcorrect_action.bench import results as r
from selfcorrect_action.errors import UsageError


def test_a_rerun_skips_what_is_done_and_fresh_starts_over() -> None:
    key = r.run_key("canonical", "strict", "runc", "n3")
    results = r.started_run(r.Results(), key, "canonical", {"workers": 2}, fresh=False)
    results = r.with_item(results, key, "HumanEval/1", {"passed": True})
    assert r.todo(["HumanEval/0", "HumanEval/1", "HumanEval/2"], results, key) == [
        "HumanEval/0", "HumanEval/2"]
    resumed = r.started_run(results, key, "canonical", {"workers": 4}, fresh=False)
    assert resumed.runs[key].items == {"HumanEval/1": {"passed": True}}
    assert len(resumed.runs[key].segments) == 2 and resumed.runs[key].settings == {"workers": 4}
    fresh = r.started_run(results, key, "canonical", {}, fresh=True)
    assert fresh.runs[key].items == {} and len(fresh.runs[key].segments) == 1


def test_runs_are_kept_apart_by_key() -> None:
    one, other = r.run_key("canonical", "strict", "runc"), r.run_key("canonical", "batch", "runc")
    results = r.started_run(r.started_run(r.Results(), one, "canonical", {}, fresh=False),
                            other, "canonical", {}, fresh=False)
    results = r.with_item(results, one, "HumanEval/0", {"passed": False})
    assert r.todo(["HumanEval/0"], results, other) == ["HumanEval/0"]
    assert r.todo(["HumanEval/0"], results, "never/started") == ["HumanEval/0"]


def test_the_store_writes_after_every_item_and_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "out" / "results.json"
    store = r.Store(path)
    store.start("k", "samples", {"limit": 1}, fresh=False)
    store.put("k", "HumanEval/0", {"passed": True})
    store.put_extra("k", "reference", {"wall_s": 1.0})
    store.end_segment("k", 1, 2.5)
    again = r.Store(path)
    run = again.run("k")
    assert run.items == {"HumanEval/0": {"passed": True}}
    assert run.extras["reference"] == {"wall_s": 1.0}
    assert run.segments[-1].items == 1 and run.segments[-1].wall_s == 2.5
    assert [p.name for p in path.parent.iterdir()] == ["results.json"]  # no partial left


def test_a_file_that_is_not_ours_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"kind": "something else"}))
    with pytest.raises(UsageError, match="not a results file"):
        r.load(path)
