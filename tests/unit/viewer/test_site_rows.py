"""The site index's rows (issue 38): runs of one spec told apart by the task's first words
and the run id, the spec's file name before its folder, what a repair changed in the
script column; redacted, bounded and escaped whatever the run.json holds. And the
`breakable` filter that lets a path wrap after / - _ and nowhere else."""

from __future__ import annotations

from pathlib import Path

from selfcorrect_action.history.entry import SOURCE_IMPORT, SOURCE_RUN, entry_for
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.report.run_json import load_run_json
from selfcorrect_action.viewer import site
from selfcorrect_action.viewer.html import breakable
from selfcorrect_action.viewer.repair import what_changed
from tests.unit.report.runs import ENV_SECRET, exhausted_run, passing_run
from tests.unit.viewer.hostile import MARKUP, hostile_run_json
from tests.unit.viewer.html_checks import parse, structure_problems
from tests.unit.viewer.repair_runs import repair_run

SPEC = "/home/me/inflection/.selfcorrect/tasks/fix_ordinal.yml"


def _row(state: RunState, *, secrets: list[str] | None = None) -> site.SiteRow:
    entry = entry_for(state, source=SOURCE_RUN, location="")
    return site.site_row(entry, f"runs/{state.run_id}.html", state, secrets=secrets or [])


def _repair(tmp_path: Path, run_id: str, prompt: str, status: Status) -> RunState:
    state = repair_run(tmp_path)
    return state.model_copy(update={
        "run_id": run_id, "spec_source": SPEC, "status": status,
        "spec": state.spec.model_copy(update={"prompt": prompt})})


def test_runs_of_one_repair_spec_are_told_apart(tmp_path: Path) -> None:
    fixed = _row(_repair(tmp_path, "a1", "ordinal(11) says 11st\nand more", Status.PASSED))
    failed = _row(_repair(tmp_path, "b2", "ordinal(12) says 12nd", Status.EXHAUSTED))
    assert (fixed.spec_name, fixed.spec_folder) == (
        "fix_ordinal.yml", "/home/me/inflection/.selfcorrect/tasks")
    assert (fixed.task, failed.task) == ("ordinal(11) says 11st", "ordinal(12) says 12nd")
    assert fixed.script == "changed pkg/core.py"
    assert failed.script == "repair of pkg/*.py: no change passed"
    page = parse(site.site_index([fixed, failed], title="history"))
    assert structure_problems(page) == []
    for words in ("ordinal(11) says 11st", "ordinal(12) says 12nd", "changed pkg/core.py",
                  "fix_ordinal.yml", "a1", "b2"):
        assert words in page.text, words


def test_a_script_runs_row_names_its_script_and_a_prompt_run_its_source(
        tmp_path: Path) -> None:
    row = _row(passing_run(tmp_path))
    assert row.script == "scripts/sales_chart.py" == what_changed(passing_run(tmp_path))
    assert (row.spec_name, row.spec_folder) == ("sales-chart.yml", ".selfcorrect/tasks")
    assert row.task.startswith("Read sales.csv and plot")
    prompt = _row(exhausted_run().model_copy(update={"spec_source": "--prompt"}))
    assert (prompt.spec_name, prompt.spec_folder) == ("--prompt", "")


def test_a_run_that_could_not_be_read_keeps_what_the_history_says(tmp_path: Path) -> None:
    entry = entry_for(passing_run(tmp_path), source=SOURCE_RUN, location="")
    row = site.site_row(entry, "", None, secrets=[])
    assert (row.task, row.script, row.result_class) == ("", entry.title, "passed")


def test_the_task_is_redacted_bounded_and_escaped() -> None:
    state = load_run_json(hostile_run_json(attempts=2, huge=1_000))
    secret = state.model_copy(update={"spec": state.spec.model_copy(update={
        "prompt": f"use {ENV_SECRET} " + "x" * 10_000})})
    assert ENV_SECRET not in _row(secret, secrets=[ENV_SECRET]).task
    assert len(_row(secret).task) <= site.TASK_CHARS
    entry = entry_for(state, source=SOURCE_IMPORT, location="")
    hostile = site.site_row(entry, "runs/x.html", state, secrets=[])
    assert hostile.task.startswith(MARKUP[:60])
    page = parse(site.site_index([hostile], title="history"))
    assert structure_problems(page) == []
    assert len(page.all("script")) == 1, "the index's own filter script, nothing of the run"
    assert MARKUP[:60] in page.text  # as text a reader sees


def test_breakable_escapes_then_marks_the_breaks_after_slash_dash_underscore() -> None:
    assert str(breakable("tests/test_core.py::test_clamp[11-10]")) == \
        "tests/<wbr>test_<wbr>core.py::test_<wbr>clamp[11-<wbr>10]"
    assert str(breakable("a3f9c0d1e2b4")) == "a3f9c0d1e2b4"  # a hash: no break inside
    assert str(breakable("- item / x")) == "- item / x"  # only between characters
    assert str(breakable("</td><script>")) == "&lt;/<wbr>td&gt;&lt;script&gt;"
