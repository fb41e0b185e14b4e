"""Spec tests: the pytest command run in the sandbox, and its junit XML read back on the host.

The XML comes out of the container that ran the candidate, so it is hostile input: the
candidate's import-time code could have rewritten it. It is read with expat directly, never
through a tree builder that honours DTDs: a DOCTYPE or an entity declaration is refused
outright (billion laughs, external entities), the file is size-capped before parsing, every
stored string is capped while parsing, and the number of outcomes kept is capped while the
counts go on. Anything that is not well-formed junit raises JUnitError, which the caller
reports as "test results unreadable" instead of guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple
from xml.parsers import expat

from selfcorrect_action.evaluation.junit_counts import (
    PROPERTY_PREFIX,
    TEARDOWN_ERROR,
    CaseTally,
    RunRecord,
    SuiteTally,
    count_problems,
    incomplete,
    read_record,
)
from selfcorrect_action.evaluation.pytest_traceback import distil_failure, first_line
from selfcorrect_action.fileio import FileMissing, FileProblem, read_bounded
from selfcorrect_action.sandbox.models import BOUNDARY_ROOT, BOUNDARY_TESTS_DIR, PLAIN_TESTS_FLAG
from selfcorrect_action.taxonomy import TestOutcome

PYTEST_JUNIT_PATH = ".selfcorrect/junit.xml"
# Inside the tests' own folder of /tmp (sandbox/runner.py), where the candidate cannot make
# it first.
BOUNDARY_BASETEMP = "/tmp/selfcorrect-tests/pytest"
# sandbox/pytest_collected.py, installed in the image under this name: it records in the
# report what pytest collected and what never finished.
COLLECTED_PLUGIN = "_selfcorrect_collected"
MAX_JUNIT_BYTES = 2_000_000
# Kept outcomes: failing ones first matter to the repair packet, passing ones only as ids.
MAX_FAILING_OUTCOMES = 200
MAX_PASSING_OUTCOMES = 300
MAX_TEST_ID_CHARS = 300
MAX_MESSAGE_CHARS = 500
_MAX_DEPTH = 32

Kind = Literal["passed", "failed", "error", "skipped"]
_RESULT_TAGS: dict[str, Kind] = {"failure": "failed", "error": "error", "skipped": "skipped"}
# Messages pytest writes that say nothing the text does not say better.
_GENERIC_MESSAGES = frozenset({"", "collection failure", "test setup failure"})


class JUnitError(Exception):
    """The junit XML is missing, too large, malformed or not pytest's junit."""


class Totals(NamedTuple):
    passed: int
    failed: int
    errored: int
    skipped: int


@dataclass(frozen=True)
class JUnitReport:
    """Outcomes in document order (capped), with counts over every test case seen; whether
    the counts agree by pytest's rules (`problems`), the plugin's record of what was
    collected (`record`) and how many distinct tests the report names (`reported`)."""

    outcomes: list[TestOutcome]
    totals: Totals
    dropped: int = 0  # outcomes counted but not kept
    problems: tuple[str, ...] = ()
    record: RunRecord | None = None
    reported: int = 0

    def incomplete(self, *, counts: bool = True) -> str:
        """Why this report is not the whole run of every collected test ("" if it is): a
        run passes only when every collected test ran and passed (junit_counts.py).
        `counts`: hold the report to pytest's own counting rules too, which only pytest
        without plugins keeps (the image's, for the frozen tests): a repository's plugins
        (subtests, reruns) add reports of their own, so its suite is judged by the
        record of what was collected alone."""
        # What did not run and why says most; counts that disagree say the rest.
        reasons = [incomplete(self.record, self.reported), *(self.problems if counts else ())]
        return "; ".join(reason for reason in reasons if reason)


def pytest_argv(test_files: list[str], *, work_dir: str = "/work") -> list[str]:
    """The command that runs the frozen spec tests in the sandbox's work dir.

    Every flag exists in Debian bookworm's pytest 7.2 (the sandbox image) and in pytest 8/9.
    xunit1 keeps the `file` and `line` attributes that test ids are built from; --tb=short
    gives `path:line: in func` frames plus pytest's `E   ` assertion-rewrite lines; an
    explicit rootdir keeps ids relative to the work dir whatever ini file lies around; a
    test file that fails to import must not hide the results of the others.

    The work dir also holds the candidate's own output files, so nothing there may steer
    pytest: -I keeps the work dir off sys.path at start-up (a `pytest.py` cannot shadow
    pytest; `-o pythonpath` puts it back once pytest runs, to import the candidate; absolute,
    since with `-c /dev/null` a relative one would be resolved against /dev), `-c /dev/null`
    ignores any pytest.ini/tox.ini/setup.cfg/pyproject.toml, --noconftest any conftest.py
    (a conftest can rewrite every outcome to "passed", junit included).
    """
    for name in test_files:
        if not name or name.startswith("-"):
            raise ValueError(f"test file names must not be empty or start with '-': {name!r}")
    return [
        "python3", "-I", "-m", "pytest",
        "-c", "/dev/null", "--noconftest",
        "-p", "no:cacheprovider", "-p", COLLECTED_PLUGIN,
        "-q", "--tb=short", "-rN", "--no-header", "--color=no",
        "--rootdir=.", "-o", f"pythonpath={work_dir}",
        "--continue-on-collection-errors",
        "-o", "junit_family=xunit1",
        "-o", "console_output_style=classic",
        f"--junitxml={PYTEST_JUNIT_PATH}",
        "--", *test_files,
    ]  # fmt: skip


def boundary_pytest_argv(test_files: list[str], *, plain: bool = False) -> list[str]:
    """The command that runs the frozen tests apart from the candidate (the default): the
    boundary's launcher in the image runs pytest as the tests' uid in their own folder, and
    serves `import <candidate>` from the candidate's process (sandbox/boundary/). The same
    flags as pytest_argv, but the rootdir and the report are the tests' private folder, no
    pythonpath (nothing of the candidate's is importable here), -B: no bytecode next to the
    tests, and -S: the launcher puts the site folders on sys.path itself (faster).
    `plain`: the tests need nothing of pytest's (evaluation/plain_tests.py), so a run where
    all pass is judged without it; any other outcome is pytest's, as without the flag."""
    for name in test_files:
        if not name or name.startswith("-"):
            raise ValueError(f"test file names must not be empty or start with '-': {name!r}")
    return [
        "python3", "-I", "-S", "-B", f"{BOUNDARY_ROOT}/run_tests.py",
        *([PLAIN_TESTS_FLAG] if plain else []),
        "-c", "/dev/null", "--noconftest",
        "-p", "no:cacheprovider", "-p", COLLECTED_PLUGIN,
        "-q", "--tb=short", "-rN", "--no-header", "--color=no",
        f"--rootdir={BOUNDARY_TESTS_DIR}",
        "--continue-on-collection-errors",
        "-o", "junit_family=xunit1",
        "-o", "console_output_style=classic",
        f"--junitxml={BOUNDARY_TESTS_DIR}/{PYTEST_JUNIT_PATH}",
        f"--basetemp={BOUNDARY_BASETEMP}",
        "--", *(f"{BOUNDARY_TESTS_DIR}/{name}" for name in test_files),
    ]  # fmt: skip


def parse_junit(path: Path, *, max_bytes: int = MAX_JUNIT_BYTES) -> list[TestOutcome]:
    """The test outcomes in `path`; see parse_junit_report for the counts beyond the cap."""
    return parse_junit_report(path, max_bytes=max_bytes).outcomes


def parse_junit_report(path: Path, *, max_bytes: int = MAX_JUNIT_BYTES,
                       max_failing: int = MAX_FAILING_OUTCOMES,
                       max_passing: int = MAX_PASSING_OUTCOMES) -> JUnitReport:
    """The outcomes kept are capped (failing ones first matter); a repository's suite is
    read with larger caps, since every passing test's id is needed to spot a regression."""
    return parse_junit_bytes(_read_capped(path, max_bytes), max_failing=max_failing,
                             max_passing=max_passing)


def parse_junit_bytes(data: bytes, *, max_failing: int = MAX_FAILING_OUTCOMES,
                      max_passing: int = MAX_PASSING_OUTCOMES) -> JUnitReport:
    builder = _Builder(max_failing=max_failing, max_passing=max_passing)
    parser = _expat_parser(builder)
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise JUnitError(f"junit XML is not well-formed: {exc}") from exc
    return builder.report()


def summarize(outcomes: list[TestOutcome]) -> Totals:
    """(passed, failed, errored, skipped) over `outcomes`."""
    kinds = [outcome.outcome for outcome in outcomes]
    return Totals(
        kinds.count("passed"), kinds.count("failed"), kinds.count("error"), kinds.count("skipped")
    )


def describe_totals(outcomes: list[TestOutcome]) -> str:
    """"3 passed, 1 failed": the counts of `outcomes` that are not zero, for reports and
    repair packets alike."""
    totals = summarize(outcomes)
    parts = zip(totals, ("passed", "failed", "errors", "skipped"), strict=True)
    return ", ".join(f"{count:,} {label}" for count, label in parts if count)


def _read_capped(path: Path, max_bytes: int) -> bytes:
    """The artifact copied out of the sandbox: hostile, so a regular file only, bounded."""
    try:
        return read_bounded(path, max_bytes)
    except FileMissing as exc:
        raise JUnitError(f"no junit XML at {path.name}: pytest did not write its results"
                         ) from exc
    except FileProblem as exc:
        raise JUnitError(f"junit XML at {path.name} {exc.problem}") from exc


def _expat_parser(builder: _Builder) -> expat.XMLParserType:
    parser = expat.ParserCreate()
    parser.StartDoctypeDeclHandler = _refuse_dtd
    parser.EntityDeclHandler = _refuse_entity
    parser.ExternalEntityRefHandler = _refuse_external_entity
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.text
    return parser


def _refuse_external_entity(*_: object) -> int:
    raise JUnitError("junit XML refers to an external entity: refused")


def _refuse_dtd(*_: object) -> None:
    raise JUnitError("junit XML carries a DOCTYPE: refused (entity expansion attacks)")


def _refuse_entity(*_: object) -> None:
    raise JUnitError("junit XML declares or references entities: refused")


@dataclass
class _Case:
    attrs: dict[str, str]
    kind: Kind = "passed"
    message: str = ""
    # The raw text is bounded by the file's size cap; distil_failure cuts it down.
    text: list[str] = field(default_factory=list)
    in_result: bool = False
    results: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_RESULT_TAGS, 0))
    teardown_error: bool = False

    def tally(self) -> CaseTally:
        name, path = self.attrs.get("name", ""), self.attrs.get("file", "")
        failures, errors, skipped = (self.results[tag] for tag in _RESULT_TAGS)
        return CaseTally(
            test_id=_key(self.attrs), failures=failures, errors=errors, skipped=skipped,
            teardown_error_only=self.teardown_error and (failures, errors, skipped) == (0, 1, 0),
            named=bool(name.strip() and path.strip()),
            collection_error=bool(errors and not self.attrs.get("classname")),
        )


@dataclass
class _Suite:
    tally: SuiteTally
    properties: dict[str, str] = field(default_factory=dict)


class _Builder:
    """Streams expat events into outcomes; only testcase elements and their first
    failure/error/skipped child matter, everything else (properties, system-out) is skipped."""

    def __init__(self, *, max_failing: int, max_passing: int) -> None:
        self.max_failing, self.max_passing = max_failing, max_passing
        self.depth = 0
        self.root: str | None = None
        self.case: _Case | None = None
        self.suites: list[_Suite] = []
        self.kept: list[TestOutcome] = []
        self.counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
        self.kept_failing = self.kept_passing = self.dropped = 0

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise JUnitError(f"junit XML nests deeper than {_MAX_DEPTH} elements")
        if self.root is None:
            if tag not in {"testsuites", "testsuite"}:
                raise JUnitError(f"not junit XML: the root element is <{tag[:40]}>")
            self.root = tag
        if tag == "testsuite":
            self.suites.append(_Suite(SuiteTally(
                tests=_number_attr(attrs, "tests"), failures=_number_attr(attrs, "failures"),
                errors=_number_attr(attrs, "errors"), skipped=_number_attr(attrs, "skipped"))))
        elif tag == "testcase":
            self.case = _Case(attrs)
        elif tag == "property" and self.case is None and self.suites:
            self._property(attrs)
        elif tag in _RESULT_TAGS and self.case is not None:
            self._result(self.case, tag, attrs)

    def _property(self, attrs: dict[str, str]) -> None:
        name = attrs.get("name", "")
        if name.startswith(PROPERTY_PREFIX) and len(name) < 64:
            self.suites[-1].properties[name] = attrs.get("value", "")[:MAX_MESSAGE_CHARS * 8]

    @staticmethod
    def _result(case: _Case, tag: str, attrs: dict[str, str]) -> None:
        case.results[tag] += 1
        if tag == "error" and attrs.get("message", "").startswith(TEARDOWN_ERROR):
            case.teardown_error = True
        if case.kind == "passed":
            case.kind = _RESULT_TAGS[tag]
            case.message = attrs.get("message", "")[:MAX_MESSAGE_CHARS * 4]
            case.in_result = True

    def text(self, data: str) -> None:
        if self.case is not None and self.case.in_result:
            self.case.text.append(data)

    def end(self, tag: str) -> None:
        self.depth -= 1
        if tag == "testcase" and self.case is not None:
            self._add(_outcome(self.case))
            if self.suites:
                self.suites[-1].tally.cases.append(self.case.tally())
            self.case = None
        elif tag in _RESULT_TAGS and self.case is not None:
            self.case.in_result = False
        elif tag == "testsuite" and self.suites and not self.suites[-1].tally.cases:
            self._suite_without_cases(self.suites[-1].tally)

    def _suite_without_cases(self, suite: SuiteTally) -> None:
        # pytest interrupted before writing any test case (an internal error, a broken
        # conftest): the suite's error count is the only trace left.
        if suite.errors:
            self._add(TestOutcome(
                test_id="<session>",
                outcome="error",
                message=f"pytest reported {suite.errors:,} error(s) but no test results",
            ))  # fmt: skip

    def _add(self, outcome: TestOutcome) -> None:
        self.counts[outcome.outcome] += 1
        if outcome.outcome in {"failed", "error"} and self.kept_failing < self.max_failing:
            self.kept_failing += 1
        elif outcome.outcome in {"passed", "skipped"} and self.kept_passing < self.max_passing:
            self.kept_passing += 1
        else:
            self.dropped += 1
            return
        self.kept.append(outcome)

    def report(self) -> JUnitReport:
        if self.root is None:
            raise JUnitError("junit XML has no root element")
        totals = Totals(
            self.counts["passed"], self.counts["failed"], self.counts["error"],
            self.counts["skipped"],
        )  # fmt: skip
        problems = [problem for suite in self.suites for problem in count_problems(suite.tally)]
        return JUnitReport(outcomes=self.kept, totals=totals, dropped=self.dropped,
                           problems=tuple(problems), record=self._record(),
                           reported=len(self._reported_tests()))

    def _record(self) -> RunRecord | None:
        records = [read_record(suite.properties) for suite in self.suites]
        if not records or None in records:
            return None
        found = [record for record in records if record is not None]
        return RunRecord(
            collected=sum(record.collected for record in found),
            not_run=sum(record.not_run for record in found),
            not_run_ids=tuple(test for record in found for test in record.not_run_ids),
            stopped="; ".join(record.stopped for record in found if record.stopped))

    def _reported_tests(self) -> set[str]:
        return {case.test_id for suite in self.suites for case in suite.tally.cases
                if not case.collection_error}


def _outcome(case: _Case) -> TestOutcome:
    text = "".join(case.text)
    detail = distil_failure(text) if case.kind in {"failed", "error"} else ""
    return TestOutcome(
        test_id=_test_id(case.attrs),
        outcome=case.kind,
        message=_message(case, text),
        detail=detail,
    )


def _message(case: _Case, text: str) -> str:
    """The message attribute's first line; for collection and setup failures pytest writes a
    generic one, and the exception line at the end of the text says more."""
    message = first_line(case.message)
    if message.lower() in _GENERIC_MESSAGES and case.kind == "error":
        message = _last_exception_line(text) or message
    return message[:MAX_MESSAGE_CHARS]


_E_LINE = re.compile(r"E +(\S.*)")


def _last_exception_line(text: str) -> str:
    for line in reversed(text.splitlines()[-200:]):
        match = _E_LINE.match(line)
        if match:
            return match.group(1).strip()
    return ""


def _test_id(attrs: dict[str, str]) -> str:
    """`tests/test_x.py::TestClass::test_name[param]`, pytest's node id, rebuilt from the
    xunit1 attributes: `file`, `classname` (dotted module path plus classes) and `name`."""
    name = attrs.get("name", "")
    classname = attrs.get("classname", "")
    path = attrs.get("file", "")
    if not path:
        node = f"{classname}::{name}" if classname else name
        return _cap(node or "<unnamed test>")
    if not classname:
        return _cap(path)  # a collection error: pytest names the module, not a test
    module = path.removesuffix(".py").replace("/", ".")
    classes = classname.removeprefix(module).lstrip(".")
    parts = [path, *classes.split(".")] if classes else [path]
    return _cap("::".join([*parts, name]))


def _key(attrs: dict[str, str]) -> str:
    """The test a case belongs to, uncapped: two cases of one test (a call failure and its
    teardown error) share it, two tests never do."""
    return "\x00".join(attrs.get(name, "") for name in ("file", "classname", "name"))


def _cap(test_id: str) -> str:
    test_id = " ".join(test_id.split())
    if len(test_id) <= MAX_TEST_ID_CHARS:
        return test_id
    return test_id[: MAX_TEST_ID_CHARS - 1] + "…"


def _number_attr(attrs: dict[str, str], name: str) -> int | None:
    """A count the suite states; None when missing or not a number (which no count equals)."""
    value = attrs.get(name)
    # isascii: "²" is a digit to str.isdigit, and int() refuses it.
    if value is None or not (value.isascii() and value.isdigit() and len(value) < 10):
        return None
    return int(value)
