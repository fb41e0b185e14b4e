"""A report is a whole run only when every collected test ran (issue 34): pytest's own
reports (tests/fixtures/junit/, written by pytest 7.2, 8.4 and 9.2, with xdist), the
plugin under the host's pytest, and hand-written reports that lie about their counts."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest

from selfcorrect_action.evaluation.junit import parse_junit_bytes, parse_junit_report, pytest_argv
from selfcorrect_action.evaluation.junit_counts import (
    CaseTally,
    RunRecord,
    SuiteTally,
    allowed_tests,
    count_problems,
    incomplete,
)
from tests.fakes.junit_report import suite_xml
from tests.host_pytest import host_argv, plugin_folder

FIXTURES = Path(__file__).parents[2] / "fixtures" / "junit"
VERSIONS = ["pytest7", "pytest8", "pytest9"]
# Whole runs, passing or failing: nothing said about their completeness.
WHOLE = ["passing", "failing", "setup_error", "call_fail_teardown_error",
         "pass_teardown_error", "skip_teardown_error", "skips_xfail", "collect_error",
         "params", "xdist", "exit_collect"]
# Runs that stopped early, and what the reason must name.
STOPPED = {
    "exit_first": ["2 of 2 collected tests did not run", "test_a.py::test_1", "Exit: done"],
    "exit_middle": ["2 of 3 collected tests", "test_a.py::test_c", "Exit: done"],
    "exit_setup": ["2 of 3 collected tests", "test_a.py::test_b", "Exit: done"],
    "exit_teardown": ["2 of 3 collected tests", "test_a.py::test_c", "Exit: done"],
    "maxfail": ["2 of 3 collected tests", "stopping after 1 failures"],
    "xdist_exit": ["2 of 8 collected tests", "test_a.py::test_b"],
}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", WHOLE)
def test_pytest_s_own_whole_runs_are_complete(case: str, version: str) -> None:
    report = parse_junit_report(FIXTURES / f"{case}.{version}.xml")

    assert report.problems == () and report.incomplete() == ""
    assert report.record is not None and report.record.not_run == 0


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", list(STOPPED))
def test_a_run_that_stopped_early_says_what_did_not_run(case: str, version: str) -> None:
    why = parse_junit_report(FIXTURES / f"{case}.{version}.xml").incomplete()

    for part in STOPPED[case]:
        assert part in why


@pytest.mark.parametrize("version", VERSIONS)
def test_the_issue_s_report_disagrees_with_itself_even_without_the_record(version: str) -> None:
    """`<testsuite tests="0"><testcase time="0.000" />`: the nameless case that read as a
    pass, and a count that says no test ran."""
    data = (FIXTURES / f"exit_first.{version}.xml").read_bytes()
    without_record = data.replace(b"selfcorrect.", b"other.")

    report = parse_junit_bytes(without_record)

    assert report.totals.failed == report.totals.errored == 0
    assert report.record is None
    assert any("says 0 tests but holds 1" in problem for problem in report.problems)
    assert any("without a test's name" in problem for problem in report.problems)
    assert "no record of what pytest collected" in report.incomplete()


def test_pytest_7_and_9_count_a_teardown_error_differently_and_both_agree() -> None:
    """A call failure then a teardown error: two test cases of one test. pytest 7-8 write
    tests=2 for it and a pass beside it, pytest 9 writes 3 (one per case)."""
    cases = [CaseTally("t::a", failures=1), CaseTally("t::a", errors=1,
                                                     teardown_error_only=True),
             CaseTally("t::b")]

    assert allowed_tests(cases) == {2, 3}
    # A pass with a teardown error is one case: pytest 7-8 count it twice, pytest 9 once.
    assert allowed_tests([CaseTally("t::a", errors=1, teardown_error_only=True)]) == {1, 2}


@pytest.mark.parametrize(("attribute", "value"), [
    ("tests", "3"), ("tests", "1"), ("failures", "0"), ("errors", "1"), ("skipped", "2"),
    ("tests", "x"), ("failures", "²"),
])
def test_a_suite_whose_counts_lie_is_a_problem(attribute: str, value: str) -> None:
    xml = suite_xml([
        ("passed", '<testcase classname="t" name="test_a" file="t.py" />'),
        ("failed", '<testcase classname="t" name="test_b" file="t.py"><failure message="x"/>'
                   "</testcase>")])
    default = {"tests": "2", "failures": "1", "errors": "0", "skipped": "0"}[attribute]
    forged = xml.replace(f'{attribute}="{default}"', f'{attribute}="{value}"', 1)
    assert forged != xml

    assert parse_junit_bytes(forged.encode()).problems


def test_a_passing_case_without_a_file_is_not_a_pass() -> None:
    xml = suite_xml([("passed", '<testcase classname="t" name="test_a" />')])

    assert "without a test's name or file" in parse_junit_bytes(xml.encode()).incomplete()


def test_fewer_tests_reported_than_collected_is_incomplete() -> None:
    xml = suite_xml([("passed", '<testcase classname="t" name="test_a" file="t.py" />')],
                    collected=2)

    assert "collected 2 tests but the report names only 1" in (
        parse_junit_bytes(xml.encode()).incomplete())


def test_a_record_that_does_not_parse_is_no_record() -> None:
    xml = suite_xml([("passed", '<testcase classname="t" name="test_a" file="t.py" />')])
    broken = xml.replace('name="selfcorrect.not_run" value="0"',
                         'name="selfcorrect.not_run" value="-1"')

    assert parse_junit_bytes(broken.encode()).record is None


def test_a_property_of_a_test_case_is_not_the_record() -> None:
    """record_property() writes <properties> inside a <testcase>: a test's own, never ours."""
    xml = ('<testsuites><testsuite tests="1" failures="0" errors="0" skipped="0">'
           '<testcase classname="t" name="a" file="t.py"><properties>'
           '<property name="selfcorrect.collected" value="1"/>'
           '<property name="selfcorrect.not_run" value="0"/></properties></testcase>'
           "</testsuite></testsuites>")

    assert parse_junit_bytes(xml.encode()).record is None


def test_incomplete_names_a_few_and_counts_the_rest() -> None:
    ids = tuple(f"t.py::test_{n}" for n in range(10))
    why = incomplete(RunRecord(collected=12, not_run=11, not_run_ids=ids, stopped="Exit: x"),
                     1)

    assert why.startswith("11 of 12 collected tests did not run to the end (t.py::test_0")
    assert "t.py::test_4 and 6 more); the session was stopped: Exit: x" in why


def test_a_suite_that_agrees_has_no_problem() -> None:
    suite = SuiteTally(tests=2, failures=1, errors=0, skipped=0,
                       cases=[CaseTally("a"), CaseTally("b", failures=1)])

    assert count_problems(suite) == []


def test_the_plugin_under_the_host_s_pytest(tmp_path: Path) -> None:
    """The plugin as the image loads it, under this environment's pytest (9): a test after
    a pytest.exit is named as not run."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "test_x.py").write_text(textwrap.dedent('''
        import pytest

        def test_a():
            pass

        def test_b():
            pytest.exit("enough", returncode=0)

        def test_c():
            assert False
    '''))
    argv = host_argv(pytest_argv(["test_x.py"], work_dir=str(work)),
                     plugin_folder(tmp_path / "plugins"))
    done = subprocess.run(argv, cwd=work, capture_output=True, timeout=120, check=False,
                          env={"PATH": "/usr/bin:/bin", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})

    report = parse_junit_report(work / ".selfcorrect" / "junit.xml")
    assert done.returncode == 0, done.stderr
    assert report.record == RunRecord(collected=3, not_run=2,
                                      not_run_ids=("test_x.py::test_b", "test_x.py::test_c"),
                                      stopped="Exit: enough")


def test_a_path_given_twice_is_one_collection() -> None:
    """`pytest -- test_a.py test_a.py` (pytest 7.2): each test collected and run twice under
    one node id, and the record counts it once."""
    report = parse_junit_report(FIXTURES / "duplicate_paths.pytest7.xml")

    assert report.record is not None and report.record.collected == 2
    assert report.incomplete() == ""


def test_subtests_break_pytest_s_counts_but_not_the_record() -> None:
    """pytest 9's own subtests count each subtest in `tests`: a repository's suite is judged
    by the record alone (counts=False), the frozen tests (the image's pytest, no plugins)
    by both."""
    report = parse_junit_report(FIXTURES / "subtests.pytest9.xml")

    assert report.incomplete(counts=False) == ""
    assert "says 5 tests but holds 2" in report.incomplete()
