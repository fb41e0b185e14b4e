"""A repair run's reports: the repository and how its suite met the rewritten code, the
baseline with its flaky tests named, the targets, each attempt's change and review, and the
regressions; in AUDIT.md, the short summary and run.json."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from selfcorrect_action.report.repair_view import SHARED_PROCESS
from selfcorrect_action.report.run_json import load_run_json, without_host_paths
from selfcorrect_action.report.writer import render_reports
from selfcorrect_action.spec import Budget
from tests.fakes.repair_sandbox import Outcomes
from tests.unit.loop.repair.test_repair_loop import (
    APPROVE,
    BROKEN_MUL,
    FIXED,
    MUL,
    OTHER,
    PLAN,
    REJECT,
    answer,
    run,
    suite,
)


def flaky_suite() -> Callable[[dict[str, str]], Outcomes]:
    runs = [0]

    def outcomes(files: dict[str, str]) -> Outcomes:
        runs[0] += 1
        found = suite(files)
        found[OTHER] = ("passed", "") if runs[0] != 2 else ("failed", "timing")
        return found
    return outcomes


def test_the_audit_tells_the_baseline_the_targets_each_change_and_the_outcome(
        tmp_path: Path) -> None:
    final, _, _ = run(tmp_path, [PLAN, answer("pkg/core.py", BROKEN_MUL), APPROVE,
                                 answer("pkg/core.py", FIXED, "repair"), REJECT,
                                 answer("pkg/core.py", FIXED + "# fixed\n"), APPROVE],
                      outcomes=flaky_suite())
    audit = render_reports(final, secrets=[]).audit_md

    assert audit.startswith("# selfcorrect audit: `repair of pkg/*.py`")
    assert "nothing stood between the rewritten code and the tests" in audit
    assert ("> **Read before trusting this result:** 1 flaky test (the result differed "
            "between the two baseline runs) left out of the regression check: "
            "tests/test\\_core.py::test\\_other.") in audit
    assert "- Baseline: 1 passed, 1 failed, 0 skipped, 1 flaky (two runs" in audit
    assert "- Target tests (failing in both baseline runs): `tests/test_core.py::test_add`" in audit
    assert "- Files to rewrite: `pkg/core.py`" in audit
    assert "| no regressions | failed | tests/test\\_core.py::test\\_mul passed at baseline" in (
        audit)
    assert f"Regressions (passed at baseline, not now): `{MUL}`" in audit
    assert "The reviewer rejected the change:\n\n> hard-codes the test's expected value" in audit
    assert "| review | failed | hard-codes the test's expected value |" in audit
    assert "**Passed.** The target tests pass and no test that passed at baseline fails, with " \
        "the change of attempt 3 to `pkg/core.py`:" in audit
    assert "+    return a + b\n" in audit


def test_the_summary_names_the_baseline_targets_and_regressions(tmp_path: Path) -> None:
    final, _, _ = run(tmp_path, [PLAN, answer("pkg/core.py", BROKEN_MUL), APPROVE],
                      budget=Budget(patch_attempts=0, rethink_attempts=0))
    summary = render_reports(final, secrets=[]).summary_md
    assert "Baseline: 2 passed, 1 failed, 0 skipped, 0 flaky" in summary
    assert f"Regressions in attempt 1: `{MUL}`." in summary


def test_a_repair_run_json_reads_back_whole(tmp_path: Path) -> None:
    final, _, _ = run(tmp_path, [PLAN, answer("pkg/core.py", FIXED), APPROVE])
    text = render_reports(final, secrets=[]).run_json
    assert json.loads(text)["repair"]["targets"] == ["tests/test_core.py::test_add"]
    again = load_run_json(text)
    # Whole but for the baseline runs' host paths, which run.json drops as it drops every one.
    assert again.repair == without_host_paths(final).repair
    assert again.attempts[0].files == {"pkg/core.py": FIXED}


def test_the_audit_says_the_tests_ran_in_the_rewritten_codes_process(tmp_path: Path) -> None:
    """A repository's own suite imports the rewritten code into pytest's process (issue 18,
    integrity): the audit says so where it tells how the suite ran, and as a caution read
    before the result, even when the repair passed."""
    final, _, _ = run(tmp_path, [PLAN, answer("pkg/core.py", FIXED), APPROVE])
    audit = render_reports(final, secrets=[]).audit_md
    shared = ("The repository's own tests imported the rewritten code into pytest's process, "
              "as the repository runs them (no plain-data boundary fits a whole test suite)")

    assert SHARED_PROCESS.startswith(shared)
    assert f"- How the tests met the rewritten code: {SHARED_PROCESS}\n" in audit
    assert f"> **Read before trusting this result:** {SHARED_PROCESS}\n" in audit
    assert "nothing stood between the rewritten code and the tests while they ran" in audit
    assert ("| frozen tests | the repository's own suite (python -m pytest -q), in pytest's "
            "own process;") in audit
    assert "**Status: passed.**" in audit
