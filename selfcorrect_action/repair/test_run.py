"""One run of the repository's test command in the sandbox: the request (the repository's
files, the rewritten ones in place, the spec's argv, no network), and what its report says.

The request is data, built by pure functions; the sandbox's single mode runs it (the argv
in the work dir holding the files, bounded output, the files it changed sent back), so no
new runner mode is needed. Our junit report reaches pytest through PYTEST_ADDOPTS, which
every way of starting pytest reads (`python -m pytest`, `pytest`, a wrapper script).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from selfcorrect_action.contract import ExecutionContract
from selfcorrect_action.evaluation.classify import classify_execution_failure
from selfcorrect_action.evaluation.junit import (
    COLLECTED_PLUGIN,
    JUnitError,
    JUnitReport,
    Totals,
    parse_junit_report,
)
from selfcorrect_action.sandbox.models import (
    WORK_DIR,
    ExecutionRequest,
    ExecutionResult,
    InputFile,
    Limits,
)
from selfcorrect_action.taxonomy import Category, TestOutcome

REPORT_PATH = ".selfcorrect/repair-junit.xml"
# A suite's report holds every test: the regression check needs each passing test's id.
MAX_REPORT_BYTES = 16 * 1024 * 1024
MAX_PASSING = 50_000
MAX_FAILING = 2_000
# The image sets `-p no:cacheprovider` in PYTEST_ADDOPTS (no cache written into the work
# dir); setting the variable replaces it, so it is said again. xunit1 keeps the `file`
# attribute that node ids are rebuilt from; --tb=short is what the repair packet distils;
# a module that fails to import must not keep every other test from running (and from
# counting at baseline); our plugin records what was collected, so a suite that stops early
# (pytest.exit, -x) is not read as a whole run.
PYTEST_ADDOPTS = " ".join((
    "-p no:cacheprovider", f"-p {COLLECTED_PLUGIN}", f"--junitxml={WORK_DIR}/{REPORT_PATH}",
    "-o junit_family=xunit1", "--tb=short", "--continue-on-collection-errors",
))
WORK_ROOM_MB = 64
NO_TOTALS = Totals(0, 0, 0, 0)
PYTEST_EXIT = {2: "pytest was interrupted", 3: "pytest hit an internal error",
               4: "pytest was called wrongly (a usage error)", 5: "pytest collected no tests"}


def request_for(files: dict[str, bytes], argv: list[str], contract: ExecutionContract, *,
                runtime: str = "runc") -> ExecutionRequest:
    """The test command over `files` (the whole repository, rewritten files in place)."""
    size_mb = -(-sum(len(data) for data in files.values()) // (1024 * 1024))
    limits = Limits(memory_mb=contract.memory_mb,
                    work_mb=size_mb + WORK_ROOM_MB,
                    work_inodes=max(8192, 2 * len(files) + 4096))
    return ExecutionRequest(
        argv=argv, files=[InputFile(path=path, data=data) for path, data in files.items()],
        timeout_s=contract.timeout_s, limits=limits, runtime=runtime,  # type: ignore[arg-type]
        env={"PYTEST_ADDOPTS": PYTEST_ADDOPTS, "PYTHONPATH": python_path(files)},
        artifact_paths=[REPORT_PATH])


def python_path(files: dict[str, bytes] | list[str]) -> str:
    """The repository root on sys.path, and `src/` first for a src layout: the package is
    imported from the repository's copy (never installed), whatever starts pytest."""
    src = any(path.startswith("src/") and path.endswith(".py") for path in files)
    return f"{WORK_DIR}/src:{WORK_DIR}" if src else WORK_DIR


@dataclass(frozen=True)
class TestRun:
    """What one run of the test command showed: its outcomes, or why there are none."""

    __test__ = False  # a record, not a test class

    outcomes: list[TestOutcome] = field(default_factory=list)
    totals: Totals = NO_TOTALS
    problem: str = ""  # set when the run cannot be judged from its report
    category: Category | None = None
    changed: list[str] = field(default_factory=list)  # repository files the run modified

    @property
    def reported(self) -> bool:
        return not self.problem


def read_run(result: ExecutionResult, placed: set[str]) -> TestRun:
    """The run's report, checked against its exit status; a run that did not finish, wrote
    no report, or whose report disagrees with its exit status is a problem, not outcomes."""
    changed = changed_files(result, placed)
    if result.timed_out or result.oom_killed or result.sandbox_note or result.signal:
        category, evidence = classify_execution_failure(result, script_name="")
        return TestRun(problem=f"the test command did not finish: {evidence}",
                       category=category, changed=changed)
    record = next((a for a in result.artifacts if a.path == REPORT_PATH), None)
    if record is None or record.host_path is None:
        return TestRun(problem=_no_report(result), category=Category.CONTRACT, changed=changed)
    try:
        report = parse_junit_report(record.host_path, max_bytes=MAX_REPORT_BYTES,
                                    max_failing=MAX_FAILING, max_passing=MAX_PASSING)
    except JUnitError as exc:
        return TestRun(problem=f"the test report is unreadable: {exc}",
                       category=Category.RUNTIME, changed=changed)
    if report.dropped:
        return TestRun(problem=f"the test command ran more tests than are checked "
                       f"({MAX_PASSING:,} passing, {MAX_FAILING:,} failing at most): narrow "
                       "test_command", category=Category.CONTRACT, changed=changed)
    problem = _disagreement(result.exit_code, report.totals) or _incomplete(report)
    return TestRun(report.outcomes, report.totals, problem,
                   Category.CONTRACT if problem else None, changed)


def _disagreement(exit_code: int | None, totals: Totals) -> str:
    bad = totals.failed + totals.errored
    summary = (f"{totals.passed} passed, {totals.failed} failed, {totals.errored} errors, "
               f"{totals.skipped} skipped")
    if exit_code in PYTEST_EXIT:
        return f"{PYTEST_EXIT[exit_code]} (exit status {exit_code}; {summary})"
    if (exit_code == 0) != (bad == 0) or exit_code not in (0, 1):
        return (f"the test command's exit status {exit_code} disagrees with its report "
                f"({summary}): the results were tampered with, or it is not pytest's")
    return ""


def _incomplete(report: JUnitReport) -> str:
    """A suite that did not run every collected test says nothing of the tests it skipped:
    no regression could be seen there, so the run cannot be judged."""
    why = report.incomplete(counts=False)
    if not why:
        return ""
    return (f"the test command did not run every test it collected: {why}; a test_command "
            "that stops early (-x, --maxfail, pytest.exit) cannot show that nothing broke")


def _no_report(result: ExecutionResult) -> str:
    output = (result.stderr.text.strip() or result.stdout.text.strip()).splitlines()[-3:]
    return (f"the test command wrote no pytest report (exit status {result.exit_code}): "
            f"{' | '.join(output) or 'no output'}; test_command must run pytest")


def changed_files(result: ExecutionResult, placed: set[str]) -> list[str]:
    """Files of the repository the run changed: the sandbox sends back what differs from
    what it placed (or lists it when over its caps)."""
    return sorted({record.path for record in result.artifacts if record.path in placed})
