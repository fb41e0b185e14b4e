"""`kind: repair` specs: their fields, what they refuse, and what validate checks against
the repository (globs that match nothing or only frozen files, missing test files, a
requirements file the derived image could not install)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from selfcorrect_action.errors import SpecError
from selfcorrect_action.spec import (
    DEFAULT_TEST_COMMAND,
    TaskSpec,
    dump_spec,
    file_problems,
    load_spec_text,
)

REPAIR = "prompt: fix parse\nkind: repair\nfiles: [src/pkg/*.py]\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for name, text in {"src/pkg/core.py": "def f():\n    return 1\n",
                       "tests/test_core.py": "def test_f():\n    pass\n",
                       "requirements-test.txt": "hypothesis>=6\n"}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def problems_of(text: str, repo: Path, *, check_files: bool = True) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, "spec.yml", root=repo, check_files=check_files)
    return caught.value.problems


def located(text: str, repo: Path) -> list[str]:
    loaded = load_spec_text(text, "spec.yml", root=repo, check_files=False)
    return [problem.split("\n")[0] for problem in file_problems(loaded)]


def test_a_repair_spec_has_no_output_and_the_defaults_of_its_fields(repo: Path) -> None:
    spec = load_spec_text(REPAIR, "spec.yml", root=repo).spec
    assert spec.kind == "repair" and spec.output is None
    assert spec.files == ["src/pkg/*.py"]
    assert spec.test_command == list(DEFAULT_TEST_COMMAND) == ["python", "-m", "pytest", "-q"]
    assert spec.failing_tests == [] and spec.requirements is None and spec.review is True


def test_every_repair_field_as_written(repo: Path) -> None:
    spec = load_spec_text(
        REPAIR + "test_command: pytest -q 'tests dir' -k \"not slow\"\n"
        "failing_tests: tests/test_core.py::test_f[1-2]\n"
        "requirements: requirements-test.txt\nreview: false\n"
        "models: {review: openai/gpt-4o}\n", "spec.yml", root=repo).spec
    assert spec.test_command == ["pytest", "-q", "tests dir", "-k", "not slow"]
    assert spec.failing_tests == ["tests/test_core.py::test_f[1-2]"]
    assert spec.requirements == "requirements-test.txt" and spec.review is False
    assert spec.models.review == "openai/gpt-4o"


def test_a_repair_spec_round_trips_through_dump_spec(repo: Path) -> None:
    spec = load_spec_text(REPAIR + "test_command: [pytest, -x]\n", "spec.yml", root=repo).spec
    again = load_spec_text(dump_spec(spec), "spec.yml", root=repo).spec
    assert again == spec


def test_a_full_dump_of_a_repair_spec_still_validates(repo: Path) -> None:
    """run.json holds the spec dumped whole (every field looks written): the fields a repair
    refuses are refused when they differ from their defaults, not when merely present."""
    spec = load_spec_text(REPAIR, "spec.yml", root=repo).spec
    assert TaskSpec.model_validate(spec.model_dump()) == spec


@pytest.mark.parametrize(("line", "where"), [
    ("output: scripts/x.py", "output"), ("tests: tests/test_core.py", "tests"),
    ("inputs: [requirements-test.txt]", "inputs"), ("isolation: in-process", "isolation"),
    ("judge: false", "judge"), ("tests_runner: pytest", "tests_runner"),
    ("contract: {artifacts: [{path: a.png}]}", "contract.artifacts"),
    ("contract: {stdout_contains: [ok]}", "contract.stdout_contains"),
    ("contract: {success_criteria: [fast]}", "contract.success_criteria"),
    ("contract: {network: open}", "contract.network"),
])
def test_what_a_repair_does_not_take_is_refused_where_it_was_written(
        repo: Path, line: str, where: str) -> None:
    found = problems_of(REPAIR + line + "\n", repo)
    assert len(found) == 1 and f": {where}: " in found[0], found
    assert found[0].startswith("spec.yml:4:")


def test_a_repair_without_files_says_so_on_its_kind(repo: Path) -> None:
    [problem] = problems_of("prompt: x\nkind: repair\n", repo)
    assert problem.startswith("spec.yml:2:1: kind: kind repair needs `files:`")


@pytest.mark.parametrize("field", ["files: [a.py]", "test_command: pytest",
                                   "failing_tests: [t.py::x]", "requirements: r.txt",
                                   "review: false"])
def test_repair_fields_on_another_kind_are_refused(repo: Path, field: str) -> None:
    [problem] = problems_of(f"prompt: x\n{field}\n", repo, check_files=False)
    assert "is for kind repair only (this spec is kind script)" in problem


@pytest.mark.parametrize(("value", "message"), [
    ("/src/*.py", "must be relative to the repository root"),
    ("../other/*.py", "must stay inside the repository"),
    (".git/hooks/*", "must stay inside the repository"),
    (".github/workflows/*.yml", "must not be under .github/"),
    ('"src/\\tx.py"', "must not contain control characters"),
    ('" "', "must name files"),
])
def test_a_bad_glob_is_refused_with_its_reason(repo: Path, value: str, message: str) -> None:
    [problem] = problems_of(f"prompt: x\nkind: repair\nfiles: [{value}]\n", repo)
    assert problem.startswith("spec.yml:3:") and message in problem, problem


@pytest.mark.parametrize(("value", "message"), [
    ("'pytest \"unclosed'", "cannot be split into arguments"),
    ("[]", "must name a program to run"),
    ("['', -q]", "must name a program to run"),
    ('["pytest", "a\\nb"]', "must not contain a newline"),
])
def test_a_bad_test_command_is_refused(repo: Path, value: str, message: str) -> None:
    [problem] = problems_of(REPAIR + f"test_command: {value}\n", repo)
    assert "test_command" in problem and message in problem, problem


def test_a_failing_test_outside_the_repository_is_refused(repo: Path) -> None:
    [problem] = problems_of(REPAIR + "failing_tests: [../x.py::test]\n", repo)
    assert "must be a pytest node id relative to the repository root" in problem


def test_validate_checks_the_globs_tests_and_requirements_against_the_repository(
        repo: Path) -> None:
    (repo / "bad-req.txt").write_text("hypothesis\n-e .\n")
    found = located(
        "prompt: x\nkind: repair\nfiles: [src/pkg/*.py, lib/*.py, tests/*.py]\n"
        "failing_tests: [tests/test_core.py::test_f, tests/test_nope.py::test_x]\n"
        "requirements: bad-req.txt\n", repo)
    assert found == [
        "spec.yml:3:23: files.1: lib/*.py matches no file of the repository",
        "spec.yml:3:33: files.2: tests/*.py matches only files a repair never rewrites "
        "(tests/test_core.py: a test file: the tests judge the repair)",
        "spec.yml:4:45: failing_tests.1: tests/test_nope.py is not a file of the repository",
        "spec.yml:5:1: requirements: bad-req.txt line 2: '-e': options (-r, -e, -c, "
        "--index-url...) are not taken; list each package by name",
    ]


def test_a_missing_requirements_file_is_located(repo: Path) -> None:
    [problem] = located(REPAIR + "requirements: nope.txt\n", repo)
    assert problem.startswith("spec.yml:4:1: requirements: nope.txt does not exist")


def test_a_clean_repair_spec_has_no_file_problems(repo: Path) -> None:
    assert located(REPAIR + "failing_tests: [tests/test_core.py, tests]\n"
                   "requirements: requirements-test.txt\n", repo) == []
