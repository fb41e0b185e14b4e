"""Whether a junit report accounts for every test pytest collected (issue 34).

pytest's report lists the tests that reported something, nothing more: a frozen test that
calls `pytest.exit("done", returncode=0)` ends the session with exit status 0 and a report
in which the tests after it do not appear (and, for the test that exited, a `<testcase>`
with no name and no result, which reads as a pass). So a report is taken as a whole run
only when

1. its counts agree with themselves, by pytest's own counting rules: each suite's
   `failures`, `errors` and `skipped` equal its result elements, and its `tests` is what
   pytest 7-8 computes (passes + failures + errors + skipped, less the tests whose call
   failure and teardown error were written as two test cases) or what pytest 9 writes (one
   per test case); reports merged by pytest-xdist follow the same rules;
2. every test case without a failure, error or skip has a name and a file;
3. the record of selfcorrect's pytest plugin (sandbox/pytest_collected.py) says every
   collected test finished and the session was not stopped, and no fewer tests were
   reported than finished.

Everything here is pure: the junit reader (junit.py) gathers the tallies.
"""

from __future__ import annotations

from dataclasses import dataclass, field

TEARDOWN_ERROR = "failed on teardown with"
PROPERTY_PREFIX = "selfcorrect."
MAX_NAMED = 5


@dataclass(frozen=True)
class CaseTally:
    """What one `<testcase>` holds, reduced to what counting needs."""

    test_id: str
    failures: int = 0
    errors: int = 0
    skipped: int = 0
    teardown_error_only: bool = False  # its one result: an error in the test's teardown
    named: bool = True  # it has a name and a file
    collection_error: bool = False  # pytest names a module, not a test

    @property
    def passed(self) -> bool:
        return not (self.failures or self.errors or self.skipped)


@dataclass
class SuiteTally:
    """A `<testsuite>`'s own counts (None where the attribute is missing or not a number)
    and its test cases."""

    tests: int | None = None
    failures: int | None = None
    errors: int | None = None
    skipped: int | None = None
    cases: list[CaseTally] = field(default_factory=list)


@dataclass(frozen=True)
class RunRecord:
    """The plugin's properties: what was collected and what never finished."""

    collected: int
    not_run: int
    not_run_ids: tuple[str, ...] = ()
    stopped: str = ""


def count_problems(suite: SuiteTally) -> list[str]:
    """What in `suite` disagrees with pytest's counting rules; empty when nothing does."""
    problems = _attribute_problems(suite)
    unnamed = sum(1 for case in suite.cases if case.passed and not case.named)
    if unnamed:
        problems.append(f"{unnamed} test result(s) without a test's name or file: pytest "
                        "ended the session before that test finished (pytest.exit?)")
    return problems


def _attribute_problems(suite: SuiteTally) -> list[str]:
    problems = []
    for label, attribute, counted in (
        ("failures", suite.failures, sum(case.failures for case in suite.cases)),
        ("errors", suite.errors, sum(case.errors for case in suite.cases)),
        ("skipped", suite.skipped, sum(case.skipped for case in suite.cases)),
    ):
        if attribute != counted:
            problems.append(f"the suite says {_said(attribute)} {label} but holds {counted}")
    if suite.tests not in allowed_tests(suite.cases):
        problems.append(f"the suite says {_said(suite.tests)} tests but holds "
                        f"{len(suite.cases)} test case(s) ({_summary(suite.cases)})")
    return problems


def allowed_tests(cases: list[CaseTally]) -> set[int]:
    """The `tests` attribute pytest writes for `cases`: pytest 9 writes one per test case;
    pytest 7 and 8 count a pass (a test whose one result is a teardown error passed its
    call), each failure, error and skip, less each call failure whose teardown error was
    written as a second test case of the same test."""
    failed_ids = {case.test_id for case in cases if case.failures}
    doubled = sum(1 for case in cases if case.teardown_error_only and case.test_id in failed_ids)
    passes = sum(1 for case in cases if case.passed or (
        case.teardown_error_only and case.test_id not in failed_ids))
    results = sum(case.failures + case.errors + case.skipped for case in cases)
    return {len(cases), passes + results - doubled}


def incomplete(record: RunRecord | None, cases_reported: int) -> str:
    """Why the run did not run every collected test ("" when it did). `cases_reported`: the
    distinct tests the report names (collection errors aside)."""
    if record is None:
        return ("the report holds no record of what pytest collected (selfcorrect's pytest "
                "plugin, -p _selfcorrect_collected, did not run)")
    if record.not_run:
        shown = record.not_run_ids[:MAX_NAMED]
        more = record.not_run - len(shown)
        tail = f" and {more:,} more" if more > 0 else ""
        named = f" ({', '.join(shown)}{tail})" if shown else ""
        why = f"; the session was stopped: {record.stopped}" if record.stopped else ""
        return (f"{record.not_run:,} of {record.collected:,} collected tests did not run "
                f"to the end{named}{why}")
    if record.stopped:
        return f"the session was stopped before it ended: {record.stopped}"
    if cases_reported < record.collected:
        return (f"pytest collected {record.collected:,} tests but the report names only "
                f"{cases_reported:,}")
    return ""


def read_record(properties: dict[str, str]) -> RunRecord | None:
    """The plugin's record from a suite's `selfcorrect.*` properties; None when absent or
    unreadable (a record that does not parse is no record)."""
    collected = _number(properties.get(PROPERTY_PREFIX + "collected"))
    not_run = _number(properties.get(PROPERTY_PREFIX + "not_run"))
    if collected is None or not_run is None:
        return None
    ids = properties.get(PROPERTY_PREFIX + "not_run_ids", "")
    return RunRecord(collected=collected, not_run=not_run,
                     not_run_ids=tuple(line for line in ids.splitlines() if line),
                     stopped=properties.get(PROPERTY_PREFIX + "stopped", ""))


def _number(value: str | None) -> int | None:
    if value is None or not (value.isascii() and value.isdigit()) or len(value) > 9:
        return None
    return int(value)


def _said(value: int | None) -> str:
    return "no number of" if value is None else f"{value:,}"


def _summary(cases: list[CaseTally]) -> str:
    failures = sum(case.failures for case in cases)
    errors = sum(case.errors for case in cases)
    skipped = sum(case.skipped for case in cases)
    passes = sum(1 for case in cases if case.passed)
    return f"{passes} passed, {failures} failures, {errors} errors, {skipped} skipped"
