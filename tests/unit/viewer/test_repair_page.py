"""A repair run's page (issue 38, item 3), read back with the HTML parser: what the audit
says of the repository, baseline, changes, reviews and regressions is on the page; the
run's own junit report is not a file the run wrote; a failed repair shows the change that
got furthest; the rewritten files are bounded. The browser test (tests/browser/
test_repair_page.py) checks what a reader sees."""

from __future__ import annotations

from pathlib import Path

from selfcorrect_action.repair.test_run import REPORT_PATH
from selfcorrect_action.report.audit import audit_markdown
from selfcorrect_action.report.view import run_view
from selfcorrect_action.sandbox.models import ArtifactRecord
from selfcorrect_action.spec import Budget
from selfcorrect_action.viewer.page import page_view, render_page
from selfcorrect_action.viewer.repair import FILE_CHARS, file_views, without_own_report
from tests.unit.loop.repair.test_repair_loop import (
    ADD,
    APPROVE,
    BROKEN_MUL,
    MUL,
    PLAN,
    answer,
    run,
)
from tests.unit.viewer.html_checks import parse, structure_problems
from tests.unit.viewer.repair_runs import repair_run


def _words(html: str) -> str:
    return " ".join(parse(html).text.split())


def test_the_page_says_what_the_audit_says_of_a_repair(tmp_path: Path) -> None:
    state = repair_run(tmp_path)
    html = render_page(state, (), secrets=[])
    words = _words(html)
    assert structure_problems(parse(html)) == []
    view = run_view(state)
    assert view.repair is not None
    audit = audit_markdown(state, secrets=[])
    for said in (view.repair.baseline, view.repair.repository, view.repair.test_command,
                 "fixes the operator", "hard-codes the test's expected value"):
        assert said in words and said in audit, said
    assert "Files to rewrite: pkg/core.py" in words
    assert "Tests: the repository's own suite, python -m pytest -q" in words
    # The baseline's table: its cells' texts, one after the other.
    assert "".join((ADD, "failed", "yes", "assert -0 == 4")) in words
    assert f"Regressions (passed at baseline, not now): {MUL}" in words
    assert "Passed. The target tests pass and no test that passed at baseline fails, with " \
        "the change of attempt 4 to pkg/core.py:" in words
    assert "The script is" not in words and "code (0 lines)" not in words
    assert "a repair's change is shown against the repository" not in words


def test_the_repairs_junit_report_is_not_a_file_the_run_wrote(tmp_path: Path) -> None:
    state = repair_run(tmp_path)
    results = [a.execution for a in state.attempts if a.execution is not None]
    assert all(REPORT_PATH in [r.path for r in result.artifacts] for result in results), \
        "the loop keeps it: the verdict is read from it"
    # A file the suite itself wrote stays listed.
    written = ArtifactRecord(path="pkg/data.txt", size=3)
    last = results[-1].model_copy(update={"artifacts": [*results[-1].artifacts, written]})
    state = state.model_copy(update={"attempts": [
        *state.attempts[:-1], state.attempts[-1].model_copy(update={"execution": last})]})
    view = page_view(state, ())
    listed = [artifact for a in view.run.attempts if a.execution
              for artifact in a.execution.artifacts]
    assert listed == ["pkg/data.txt (3 bytes)"]
    words = _words(render_page(state, (), secrets=[]))
    assert REPORT_PATH not in words and "Files the test command wrote: pkg/data.txt" in words
    assert without_own_report(repair_run(tmp_path)) is not state  # a copy, never in place


def test_a_failed_repair_shows_the_change_that_got_furthest(tmp_path: Path) -> None:
    state, _, _ = run(tmp_path, [PLAN, answer("pkg/core.py", BROKEN_MUL), APPROVE],
                      budget=Budget(patch_attempts=0, rethink_attempts=0))
    words = _words(render_page(state, (), secrets=[]))
    assert "the change of attempt 1, not applied (+2 -2 lines)" in words
    assert f"Its regressions (passed at baseline, not with the change): {MUL}" in words
    assert "+ return a ** b" in words


def test_a_rewritten_file_is_bounded(tmp_path: Path) -> None:
    attempt = repair_run(tmp_path).attempts[-1]
    huge = attempt.model_copy(update={"files": {"pkg/core.py": "x = 1\n" * 20_000}})
    (view,) = file_views(huge)
    assert len(view.text) == FILE_CHARS and view.size == "20,000 lines"
    assert view.more == f"{120_000 - FILE_CHARS:,} more characters, in run.json"


def test_audit_md_lists_no_junit_report_of_a_repair_either(tmp_path: Path) -> None:
    """AUDIT.md agrees with the page: the repair's own junit report is no file its test
    command wrote, and the interpreter note of a script run is not said of a test command."""
    from selfcorrect_action.report.audit import audit_markdown

    state = repair_run(tmp_path)
    last = state.attempts[-1]
    assert last.execution is not None
    noted = last.execution.model_copy(update={
        "start_note": "the command is not 'python3 SCRIPT'"})
    state = state.model_copy(update={"attempts": [
        *state.attempts[:-1], last.model_copy(update={"execution": noted})]})
    assert REPORT_PATH in [r.path for r in noted.artifacts]
    audit = audit_markdown(state, secrets=[])
    assert REPORT_PATH not in audit
    assert "interpreter: " not in audit
