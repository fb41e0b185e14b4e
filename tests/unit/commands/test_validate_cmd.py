"""`selfcorrect validate` through the real CLI entry point, and the pre-commit hook that
ships it."""

from __future__ import annotations

import importlib
import re
import tomllib
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from selfcorrect_action.cli import main
from selfcorrect_action.commands.validate_cmd import summary, validate_files

PROJECT = Path(__file__).resolve().parents[3]
HOOKS_FILE = PROJECT / ".pre-commit-hooks.yaml"
LOCATED = re.compile(r"^.+:\d+:\d+: ")

GOOD = "prompt: Write hello.txt containing hi\ninputs: [data/names.csv]\n"
BAD = """\
prompt: Chart the sales
kind: scripts
contract:
  artifacts:
    - path: chart.png
      kind: png
    - path: totals.csv
      kind: xlsx
budget: {patch_attempts: 50}
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "data").mkdir()
    (root / "data" / "names.csv").write_text("name\n")
    (root / ".selfcorrect" / "tasks").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root


def spec_file(name: str, text: str) -> Path:
    path = Path(".selfcorrect/tasks") / name
    path.write_text(text)
    return path


def run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, list[str]]:
    code = main(["validate", *map(str, args)])
    captured = capsys.readouterr()
    assert captured.err == ""
    return code, captured.out.splitlines()


def test_a_valid_spec_exits_0(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = run(capsys, spec_file("hello.yml", GOOD))
    assert (code, lines) == (0, ["1 file checked, no problems"])


def test_a_bad_spec_prints_every_problem_located_with_a_hint(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines = run(capsys, spec_file("chart.yml", BAD))

    assert code == 1
    assert lines[0::2][:3] == [
        ".selfcorrect/tasks/chart.yml:2:1: kind: Input should be 'script', 'function' or 'repair'; "
        "got 'scripts'",
        ".selfcorrect/tasks/chart.yml:8:7: contract.artifacts.1.kind: Input should be 'png', "
        "'jpeg', 'svg', 'csv', 'json', 'txt' or 'any'; got 'xlsx'",
        ".selfcorrect/tasks/chart.yml:9:10: budget.patch_attempts: Input should be less than "
        "or equal to 20; got 50",
    ]
    assert all(line.startswith("  hint: ") for line in lines[1:6:2])
    assert lines[-1] == "1 file checked, 1 with problems"


def test_every_file_is_checked_not_just_the_first_bad_one(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = spec_file("first.yml", "kind: script\n")
    good = spec_file("good.yml", GOOD)
    second = spec_file("second.yml", "prompt: p\njudge: maybe\nkind: lib\n")

    code, lines = run(capsys, first, good, second)

    assert code == 1
    located = [line.split(": ")[0] for line in lines if LOCATED.match(line)]
    assert located == [f"{first}:1:1", f"{second}:2:1", f"{second}:3:1"]
    assert lines[-1] == "3 files checked, 2 with problems"


def test_missing_files_are_reported_once_the_schema_is_valid(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines = run(capsys, spec_file("gone.yml", "prompt: p\ninputs: [data/gone.csv]\n"))
    assert code == 1
    assert lines[0] == (
        f".selfcorrect/tasks/gone.yml:2:10: inputs.0: data/gone.csv does not exist "
        f"(looked in {repo.resolve() / 'data' / 'gone.csv'})"
    )


def test_no_check_files_skips_the_file_checks(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = spec_file("gone.yml", "prompt: p\ninputs: [data/gone.csv]\n")
    assert run(capsys, "--no-check-files", path) == (0, ["1 file checked, no problems"])


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", ":1:1: the spec is empty"),
        (b"- prompt: p\n", ":1:1: expected a mapping of fields"),
        (b"prompt: [unclosed\n", ":2:1: invalid YAML: while parsing a flow sequence at 1:9"),
        (b"prompt: caf\xe9\n", ":1:12: not UTF-8 text (byte 0xe9)"),
    ],
    ids=["empty", "list", "not-yaml", "not-utf8"],
)
def test_files_that_are_not_specs_get_a_located_problem(
    repo: Path, capsys: pytest.CaptureFixture[str], content: bytes, expected: str
) -> None:
    path = Path(".selfcorrect/tasks/odd.yml")
    path.write_bytes(content)

    code, lines = run(capsys, path)

    assert code == 1
    assert lines[0].startswith(f"{path}{expected}")
    assert lines[1].startswith("  hint: ")


def test_a_missing_file_is_a_problem_not_a_crash(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines = run(capsys, "nope.yml", spec_file("good.yml", GOOD))
    assert code == 1
    assert lines[0] == "nope.yml:1:1: no such file"
    assert lines[-1] == "2 files checked, 1 with problems"


def test_validate_needs_at_least_one_file(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["validate"])
    assert exited.value.code == 2
    assert "FILE" in capsys.readouterr().err


def test_validate_files_is_usable_without_the_cli(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert validate_files([spec_file("good.yml", GOOD)], check_files=False) == 0
    assert capsys.readouterr().out == "1 file checked, no problems\n"


@pytest.mark.parametrize(
    ("checked", "failed", "line"),
    [(1, 0, "1 file checked, no problems"), (2, 1, "2 files checked, 1 with problems")],
)
def test_summary(checked: int, failed: int, line: str) -> None:
    assert summary(checked, failed) == line


# --- the pre-commit hook ----------------------------------------------------------------------

def hooks() -> list[dict[str, object]]:
    return YAML(typ="safe").load(HOOKS_FILE.read_text())


def validate_hook() -> dict[str, object]:
    (hook,) = [hook for hook in hooks() if hook["id"] == "selfcorrect-validate"]
    return hook


def test_the_hook_runs_the_console_script() -> None:
    hook = validate_hook()
    assert hook["id"] == "selfcorrect-validate"
    assert hook["language"] == "python"
    command, verb = str(hook["entry"]).split()
    scripts = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, attribute = scripts[command].partition(":")
    assert getattr(importlib.import_module(module), attribute) is main
    assert verb == "validate"


@pytest.mark.parametrize(
    ("path", "matches"),
    [
        (".selfcorrect/tasks/chart.yml", True),
        (".selfcorrect/tasks/nested/chart.yaml", True),
        (".selfcorrect/config.yml", False),
        ("tasks/chart.yml", False),
        (".selfcorrect/tasks/chart.yml.bak", False),
    ],
)
def test_the_hook_picks_task_specs(path: str, matches: bool) -> None:
    hook = validate_hook()
    assert bool(re.search(str(hook["files"]), path)) is matches


def test_pre_commit_accepts_the_hooks_file() -> None:
    clientlib = pytest.importorskip("pre_commit.clientlib")
    found = {hook["id"]: hook for hook in clientlib.load_manifest(str(HOOKS_FILE))}
    assert found["selfcorrect-validate"]["types"] == ["yaml"]


def test_hundreds_of_problems_are_counted_past_the_first_fifty(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = "".join(f"    - {{path: out{i}.csv, kind: xlsx}}\n" for i in range(120))
    path = spec_file("noisy.yml", f"prompt: p\ncontract:\n  artifacts:\n{items}")
    code, lines = run(capsys, path)
    located = [line for line in lines if LOCATED.match(line)]
    assert code == 1 and len(located) == 50
    assert located[0].startswith(f"{path}:4:")  # the first ones, in file order
    assert lines[-2] == f"{path}: 70 more problems not shown; fix the ones above first"
    assert lines[-1] == summary(1, 1)


def test_a_folder_stands_for_the_specs_under_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = tmp_path / ".selfcorrect" / "tasks"
    tasks.mkdir(parents=True)
    (tasks / "good.yml").write_text("prompt: draw it\n")
    (tasks / "bad.yaml").write_text("prompt: draw it\ncolour: red\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "junk.yml").write_text("not: a spec\n")
    assert main(["validate", "--no-check-files", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "bad.yaml:2:1: colour: unknown field" in out
    assert "2 files checked, 1 with problems" in out and "junk" not in out


def test_independent_problems_are_reported_at_once(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A field's type, an unknown key and a missing file in one spec: one run of validate
    says all three; it used to say the files only once every field was valid (issue 38,
    item 8)."""
    code, lines = run(capsys, spec_file("mixed.yml", """\
prompt: Chart the sales
inputs: [data/sales.csv, data/names.csv]
tests: tests/test_chart.py
judge: "no"
contract:
  nonblank: true
"""))
    assert code == 1
    located = [line.split(": ", 2)[:2] for line in lines if LOCATED.match(line)]
    assert located == [
        [".selfcorrect/tasks/mixed.yml:2:10", "inputs.0"],
        [".selfcorrect/tasks/mixed.yml:3:1", "tests.0"],
        [".selfcorrect/tasks/mixed.yml:4:1", "judge"],
        [".selfcorrect/tasks/mixed.yml:6:3", "contract.nonblank"],
    ]
    assert "data/sales.csv does not exist" in lines[0]
    assert "tests/test_chart.py does not exist" in lines[2]


def test_a_file_waits_only_for_its_own_fields_problem(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What depends on another fix is left for later: the files of a field that is invalid
    itself, and every file while `kind` is (it says which fields name files)."""
    code, lines = run(capsys, spec_file("bad.yml", "prompt: p\ninputs: [/etc/passwd, "
                                        "nothere.csv]\ntests: [missing_test.py]\n"))
    assert code == 1
    problems = [line for line in lines if LOCATED.match(line)]
    assert len(problems) == 2
    assert "inputs.0: must be relative to the repository root" in problems[0]
    assert "tests.0: missing_test.py does not exist" in problems[1]
    code, lines = run(capsys, spec_file("kind.yml", "prompt: p\nkind: scripts\n"
                                        "tests: [missing_test.py]\n"))
    assert [line.split(": ")[1] for line in lines if LOCATED.match(line)] == ["kind"]
