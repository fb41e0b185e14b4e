"""A finished repair run, made by the real repair loop over its two fakes (a scripted model,
a test suite at the sandbox seam that reports in junit as pytest does), as the report tests
make theirs (tests/unit/report/test_repair_report.py): a refused test edit, a regression, a
rejected review, then the fix; one test flaky at baseline."""

from __future__ import annotations

from pathlib import Path

from selfcorrect_action.loop.state import RunState
from tests.unit.loop.repair.test_repair_loop import (
    APPROVE,
    BROKEN_MUL,
    FIXED,
    PLAN,
    REJECT,
    TESTS,
    answer,
    run,
)
from tests.unit.report.test_repair_report import flaky_suite

ANSWERS = [PLAN,
           answer("tests/test_core.py", TESTS.replace("== 4", "== 0")),  # refused, not run
           answer("pkg/core.py", BROKEN_MUL, "repair"), APPROVE,  # test_mul regresses
           answer("pkg/core.py", FIXED), REJECT,
           answer("pkg/core.py", FIXED + "# fixed\n"), APPROVE]


def repair_run(tmp_path: Path) -> RunState:
    final, _, _ = run(tmp_path, ANSWERS, outcomes=flaky_suite())
    return final
