"""junit XML from real pytest runs (the argv the sandbox uses, run here on the host), and
hostile files written by hand."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from selfcorrect_action.evaluation.junit import (
    MAX_FAILING_OUTCOMES,
    MAX_PASSING_OUTCOMES,
    MAX_TEST_ID_CHARS,
    PYTEST_JUNIT_PATH,
    JUnitError,
    Totals,
    parse_junit,
    parse_junit_report,
    pytest_argv,
    summarize,
)
from selfcorrect_action.evaluation.pytest_traceback import MAX_DETAIL_CHARS, detail_frames
from selfcorrect_action.taxonomy import TestOutcome
from tests.host_pytest import host_argv, plugin_folder

CANDIDATE = '''
def two_sum(nums, target):
    seen = {}
    for i, n in enumerate(nums):
        if target - n in seen:
            return [i, seen[target - n]]
        seen[n] = i
    return None


def total_sales(rows):
    return sum(lookup(row, "sales") for row in rows)


def lookup(row, key):
    return row[key]
'''

TEST_FILES = {
    "tests/test_pass.py": """
        from two_sum import two_sum

        def test_finds_a_pair():
            assert two_sum([1, 2], 3) is not None

        def test_no_pair():
            assert two_sum([1, 2], 10) is None
    """,
    "tests/test_assert.py": """
        from two_sum import two_sum

        def test_order():
            assert two_sum([2, 7, 11, 15], 9) == [0, 1]

        def test_with_message():
            result = two_sum([3, 3], 6)
            assert result == [0, 1], f"expected [0, 1], got {result}"
    """,
    "tests/test_exception.py": """
        from two_sum import total_sales

        def test_total():
            assert total_sales([{"amount": 3}]) == 3
    """,
    "tests/test_param.py": """
        import pytest
        from two_sum import two_sum

        @pytest.mark.parametrize(
            ("nums", "target", "expected"),
            [([1, 2], 3, [1, 0]), ([3, 2, 4], 6, [1, 2])],
            ids=["ok", "wrong-order"],
        )
        def test_pairs(nums, target, expected):
            assert two_sum(nums, target) == expected

        class TestEdges:
            def test_empty(self):
                assert two_sum([], 1) is None

            @pytest.mark.skip(reason="not specified yet")
            def test_negative(self):
                pass
    """,
}


def run_pytest(work: Path, files: dict[str, str], candidate: str | None) -> Path:
    """Run pytest the way the sandbox does; return the junit XML it wrote."""
    for name, content in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(textwrap.dedent(content))
    if candidate is not None:
        (work / "two_sum.py").write_text(candidate)
    argv = host_argv(pytest_argv(sorted(files), work_dir=str(work)),
                     plugin_folder(work.parent / f"{work.name}-plugins"))
    env = {
        "PATH": os.defpath,
        "HOME": str(work),
        "PYTHONDONTWRITEBYTECODE": "1",
        # Only pytest's own plugins, as in the sandbox image.
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    subprocess.run(argv, cwd=work, env=env, capture_output=True, timeout=120, check=False)
    return work / PYTEST_JUNIT_PATH


@pytest.fixture(scope="module")
def spec_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, TestOutcome]:
    junit = run_pytest(tmp_path_factory.mktemp("spec"), TEST_FILES, CANDIDATE)
    return {outcome.test_id: outcome for outcome in parse_junit(junit)}


@pytest.fixture(scope="module")
def missing_module_run(tmp_path_factory: pytest.TempPathFactory) -> list[TestOutcome]:
    files = {
        "tests/test_import.py": TEST_FILES["tests/test_pass.py"],
        "tests/test_standalone.py": "def test_arithmetic():\n    assert 1 + 1 == 2\n",
    }
    return parse_junit(run_pytest(tmp_path_factory.mktemp("missing"), files, None))


def test_argv_runs_pytest_into_the_junit_path() -> None:
    argv = pytest_argv(["tests/test_a.py", "tests/test_b.py"])

    assert argv[:4] == ["python3", "-I", "-m", "pytest"]
    assert {"--noconftest", "/dev/null"} <= set(argv)
    assert f"--junitxml={PYTEST_JUNIT_PATH}" in argv
    assert "junit_family=xunit1" in argv
    assert {"-p", "no:cacheprovider", "--tb=short", "--continue-on-collection-errors"} <= set(argv)
    assert argv[-3:] == ["--", "tests/test_a.py", "tests/test_b.py"]


@pytest.mark.parametrize("name", ["-x", "--help", ""])
def test_argv_refuses_names_that_read_as_options(name: str) -> None:
    with pytest.raises(ValueError, match="test file names"):
        pytest_argv([name])


def test_passing_tests_have_node_ids(spec_run: dict[str, TestOutcome]) -> None:
    passed = spec_run["tests/test_pass.py::test_finds_a_pair"]

    assert passed.outcome == "passed"
    assert (passed.message, passed.detail) == ("", "")
    assert spec_run["tests/test_param.py::TestEdges::test_empty"].outcome == "passed"


def test_assertion_keeps_expected_and_actual(spec_run: dict[str, TestOutcome]) -> None:
    failed = spec_run["tests/test_assert.py::test_order"]

    assert failed.outcome == "failed"
    assert failed.message == "assert [1, 0] == [0, 1]"
    assert "E   assert [1, 0] == [0, 1]" in failed.detail
    assert "At index 0 diff: 1 != 0" in failed.detail
    assert "tests/test_assert.py:5: in test_order" in failed.detail
    assert "assert two_sum([2, 7, 11, 15], 9) == [0, 1]" in failed.detail
    assert "Use -v" not in failed.detail


def test_assertion_message_written_by_the_test(spec_run: dict[str, TestOutcome]) -> None:
    failed = spec_run["tests/test_assert.py::test_with_message"]

    assert failed.message.startswith("AssertionError: expected [0, 1], got [1, 0]")


def test_exception_in_the_module_under_test(spec_run: dict[str, TestOutcome]) -> None:
    failed = spec_run["tests/test_exception.py::test_total"]

    assert failed.message == "KeyError: 'sales'"
    assert "E   KeyError: 'sales'" in failed.detail
    innermost = [frame for frame in detail_frames(failed.detail) if frame.file == "two_sum.py"][-1]
    assert (innermost.line, innermost.function, innermost.source) == (
        16, "lookup", "return row[key]"
    )


def test_parametrized_ids_and_skips(spec_run: dict[str, TestOutcome]) -> None:
    assert spec_run["tests/test_param.py::test_pairs[ok]"].outcome == "passed"
    wrong = spec_run["tests/test_param.py::test_pairs[wrong-order]"]
    assert wrong.outcome == "failed"
    assert "At index 0 diff: 2 != 1" in wrong.detail
    skipped = spec_run["tests/test_param.py::TestEdges::test_negative"]
    assert (skipped.outcome, skipped.message) == ("skipped", "not specified yet")


def test_summarize_counts_each_outcome(spec_run: dict[str, TestOutcome]) -> None:
    assert summarize(list(spec_run.values())) == Totals(passed=4, failed=4, errored=0, skipped=1)


def test_import_error_of_the_candidate_is_a_collection_error(
    missing_module_run: list[TestOutcome],
) -> None:
    by_id = {outcome.test_id: outcome for outcome in missing_module_run}
    error = by_id["tests/test_import.py"]

    assert error.outcome == "error"
    assert error.message == "ModuleNotFoundError: No module named 'two_sum'"
    assert "from two_sum import two_sum" in error.detail
    # The other file still ran: a broken import does not hide its results.
    assert by_id["tests/test_standalone.py::test_arithmetic"].outcome == "passed"


def test_many_tests_keep_counts_beyond_the_cap(tmp_path: Path) -> None:
    files = {
        "tests/test_many.py": """
            import pytest

            @pytest.mark.parametrize("n", range(1000))
            def test_n(n):
                assert n % 10 < 7, f"n={n}"
        """
    }
    report = parse_junit_report(run_pytest(tmp_path, files, None))

    assert report.totals == Totals(passed=700, failed=300, errored=0, skipped=0)
    kept = summarize(report.outcomes)
    assert (kept.passed, kept.failed) == (MAX_PASSING_OUTCOMES, MAX_FAILING_OUTCOMES)
    assert report.dropped == 1000 - MAX_PASSING_OUTCOMES - MAX_FAILING_OUTCOMES
    assert report.outcomes[0].test_id == "tests/test_many.py::test_n[0]"


# Hand-written files: what a hostile candidate could leave at the junit path.

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<testsuites><testsuite><testcase name="x"><failure message="&lol3;"/></testcase></testsuite>
</testsuites>"""

EXTERNAL_ENTITY = b"""<?xml version="1.0"?>
<!DOCTYPE t [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<testsuite><testcase name="x"><failure message="&secret;"/></testcase></testsuite>"""


def write(tmp_path: Path, data: bytes | str) -> Path:
    path = tmp_path / "junit.xml"
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


@pytest.mark.parametrize(
    "data",
    [
        BILLION_LAUGHS,
        EXTERNAL_ENTITY,
        '<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE t []><testsuite/>'.encode("utf-16"),
    ],
    ids=["billion-laughs", "external-entity", "utf16-doctype"],
)
def test_dtds_are_refused(tmp_path: Path, data: bytes) -> None:
    with pytest.raises(JUnitError, match="DOCTYPE"):
        parse_junit(write(tmp_path, data))


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"", "not well-formed"),
        (b"\x89PNG\r\n\x1a\n\x00\x00garbage", "not well-formed"),
        (b"<testsuite><testcase name='a'>", "not well-formed"),
        (b"<html><body>oops</body></html>", "root element"),
        (b"<testsuite>" + b"<a>" * 100 + b"</a>" * 100 + b"</testsuite>", "nests deeper"),
    ],
    ids=["empty", "binary", "unclosed", "not-junit", "deep"],
)
def test_garbage_raises_a_clear_error(tmp_path: Path, data: bytes, problem: str) -> None:
    with pytest.raises(JUnitError, match=problem):
        parse_junit(write(tmp_path, data))


def test_truncated_real_report_is_unreadable(tmp_path: Path) -> None:
    junit = run_pytest(tmp_path, {"tests/test_pass.py": TEST_FILES["tests/test_pass.py"]},
                       CANDIDATE)  # fmt: skip
    data = junit.read_bytes()
    assert len(parse_junit(junit)) == 2
    with pytest.raises(JUnitError, match="not well-formed"):
        parse_junit(write(tmp_path, data[: len(data) // 2]))


def test_size_cap(tmp_path: Path) -> None:
    path = write(tmp_path, "<testsuite>" + " " * 5000 + "</testsuite>")

    assert parse_junit(path, max_bytes=6000) == []
    with pytest.raises(JUnitError, match="larger than 1,000 bytes"):
        parse_junit(path, max_bytes=1000)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(JUnitError, match=r"no junit XML at absent\.xml"):
        parse_junit(tmp_path / "absent.xml")


def test_a_folder_or_a_fifo_in_its_place_is_named_for_what_it_is(tmp_path: Path) -> None:
    """The file comes out of the sandbox: the script may have put anything at its path."""
    with pytest.raises(JUnitError, match="is a folder, not a file"):
        parse_junit(tmp_path)
    fifo = tmp_path / "junit.xml"
    os.mkfifo(fifo)
    with pytest.raises(JUnitError, match="is not a regular file"):
        parse_junit(fifo)  # and it does not block waiting for a writer


def test_suite_with_errors_and_no_test_cases(tmp_path: Path) -> None:
    xml = '<testsuites><testsuite name="pytest" errors="1" failures="0" tests="0"/></testsuites>'

    [outcome] = parse_junit(write(tmp_path, xml))

    assert (outcome.test_id, outcome.outcome) == ("<session>", "error")
    assert "1 error(s) but no test results" in outcome.message


def test_huge_fields_are_bounded(tmp_path: Path) -> None:
    frames = "".join(f"lib/mod{i}.py:{i}: in f{i}\n    call_{i}()\n" for i in range(5000))
    errors = "".join(f"E     line {i} of a long diff\n" for i in range(5000))
    xml = (
        f'<testsuite><testcase classname="t" name="{"x" * 100_000}" file="t.py">'
        f'<failure message="{"m" * 100_000}">{frames}{errors}</failure></testcase></testsuite>'
    )

    [outcome] = parse_junit(write(tmp_path, xml))

    assert len(outcome.test_id) <= MAX_TEST_ID_CHARS
    assert len(outcome.message) <= 500
    assert len(outcome.detail) <= MAX_DETAIL_CHARS
    assert "E     line 0 of a long diff" in outcome.detail
    assert "lib/mod4999.py:4999: in f4999" in outcome.detail
    assert "more lines)" in outcome.detail


def test_ids_without_the_file_attribute(tmp_path: Path) -> None:
    xml = (
        '<testsuite><testcase classname="tests.test_x.TestA" name="test_b">'
        '<error message="boom">E   ValueError: boom</error></testcase>'
        "<testcase name='bare'/></testsuite>"
    )

    outcomes = parse_junit(write(tmp_path, xml))

    assert [o.test_id for o in outcomes] == ["tests.test_x.TestA::test_b", "bare"]
    assert outcomes[0].message == "boom"


def test_a_superscript_count_is_not_a_crash(tmp_path: Path) -> None:
    """`errors="²"` passes str.isdigit and int() refuses it: read as no count."""
    path = tmp_path / "junit.xml"
    path.write_text('<testsuites><testsuite errors="\u00b2"><testcase classname="t" '
                    'name="test_a"/></testsuite></testsuites>', encoding="utf-8")
    outcomes = parse_junit(path)
    assert [o.outcome for o in outcomes] == ["passed"]
