"""The disk side of specs: reading the file, the repository root, the files a spec names,
and YAML shapes that must be refused before they are copied."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.errors import SpecError
from selfcorrect_action.spec import file_problems, load_spec, load_spec_text
from selfcorrect_action.spec_files import repo_root
from selfcorrect_action.yamlio import shared_container

SPEC = """\
prompt: Chart the sales
tests: tests/test_chart.py
inputs:
  - data/sales.csv
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "data").mkdir()
    (root / "data" / "sales.csv").write_text("month,amount\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_chart.py").write_text("def test_chart(): pass\n")
    (root / ".selfcorrect" / "tasks").mkdir(parents=True)
    return root


def write_spec(repo: Path, text: str, name: str = "chart.yml") -> Path:
    path = repo / ".selfcorrect" / "tasks" / name
    path.write_text(text)
    return path


def problems_of(path: Path, **kwargs: Any) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_spec(path, **kwargs)
    return caught.value.problems


# --- the repository root ---------------------------------------------------------------------

def test_paths_are_relative_to_the_git_root_whatever_the_cwd(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)

    loaded = load_spec(write_spec(repo, SPEC))

    assert loaded.root == repo.resolve()
    assert loaded.input_paths == [repo.resolve() / "data" / "sales.csv"]


def test_outside_a_repository_paths_are_relative_to_the_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec_dir = tmp_path / "specs"
    spec_dir.mkdir()
    (spec_dir / "chart.yml").write_text("prompt: p\ninputs: [sales.csv]\n")
    (tmp_path / "sales.csv").write_text("x\n")
    monkeypatch.chdir(tmp_path)

    loaded = load_spec(Path("specs/chart.yml"))

    assert loaded.root == tmp_path.resolve()
    assert loaded.path == Path("specs/chart.yml")


def test_a_git_file_marks_a_worktree_root(tmp_path: Path) -> None:
    (tmp_path / "wt" / "sub").mkdir(parents=True)
    (tmp_path / "wt" / ".git").write_text("gitdir: /elsewhere/.git/worktrees/wt\n")
    assert repo_root(tmp_path / "wt" / "sub") == tmp_path / "wt"


def test_an_explicit_root_wins(repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    (other / "data").mkdir(parents=True)
    (other / "data" / "x.csv").write_text("x\n")
    loaded = load_spec(write_spec(repo, "prompt: p\ninputs: [data/x.csv]\n"), root=other)
    assert loaded.root == other.resolve()


# --- files the spec names --------------------------------------------------------------------

def test_a_missing_input_is_located_and_says_where_it_looked(repo: Path) -> None:
    (repo / "data" / "sales.csv").unlink()
    path = write_spec(repo, SPEC)

    (problem,) = problems_of(path)

    looked = repo.resolve() / "data" / "sales.csv"
    assert problem == (
        f"{path}:4:5: inputs.0: data/sales.csv does not exist (looked in {looked})\n"
        f"  hint: paths are relative to the repository root ({repo.resolve()}); "
        "fix the path or add the file"
    )


def test_every_missing_file_is_reported_in_line_order(repo: Path) -> None:
    path = write_spec(repo, "prompt: p\ntests: [tests/test_a.py, tests/test_b.py]\n"
                            "inputs: [data/gone.csv]\n")
    found = problems_of(path)
    assert [p.split(": ")[0].removeprefix(str(path)) for p in found] == [":2:9", ":2:26", ":3:10"]


def test_a_folder_is_not_an_input(repo: Path) -> None:
    (problem,) = problems_of(write_spec(repo, "prompt: p\ninputs: [data]\n"))
    assert "inputs.0: data is not a regular file" in problem


def test_a_link_out_of_the_repository_is_refused(repo: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("token\n")
    os.symlink(secret, repo / "data" / "innocent.csv")

    (problem,) = problems_of(write_spec(repo, "prompt: p\ninputs: [data/innocent.csv]\n"))

    assert f"data/innocent.csv resolves to {secret.resolve()}, outside the repository" in problem


def test_a_link_inside_the_repository_is_fine(repo: Path) -> None:
    os.symlink(repo / "data" / "sales.csv", repo / "data" / "latest.csv")
    assert load_spec(write_spec(repo, "prompt: p\ninputs: [data/latest.csv]\n"))


def test_a_dangling_link_counts_as_missing(repo: Path) -> None:
    os.symlink(repo / "data" / "nowhere.csv", repo / "data" / "dangling.csv")
    (problem,) = problems_of(write_spec(repo, "prompt: p\ninputs: [data/dangling.csv]\n"))
    assert "data/dangling.csv does not exist" in problem


def test_file_checks_can_be_skipped(repo: Path) -> None:
    path = write_spec(repo, "prompt: p\ninputs: [data/gone.csv]\n")
    loaded = load_spec(path, check_files=False)
    assert len(file_problems(loaded)) == 1


def test_text_specs_are_checked_against_their_root(repo: Path) -> None:
    with pytest.raises(SpecError) as caught:
        load_spec_text("prompt: p\ninputs: [data/gone.csv]\n", "issue #12", root=repo)
    assert caught.value.problems[0].startswith("issue #12:2:10: inputs.0: data/gone.csv does not")


# --- reading the file ------------------------------------------------------------------------

def test_a_missing_spec_file(tmp_path: Path) -> None:
    (problem,) = problems_of(tmp_path / "nope.yml")
    assert problem == (
        f"{tmp_path / 'nope.yml'}:1:1: no such file\n  hint: check the path and its spelling"
    )


def test_a_folder_given_as_a_spec(tmp_path: Path) -> None:
    (problem,) = problems_of(tmp_path)
    assert problem.startswith(f"{tmp_path}:1:1: is a folder, not a file")


def test_non_utf8_is_located_at_the_bad_byte(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yml"
    path.write_bytes("prompt: |\n  Gráfico de ventas\n".encode("latin-1"))
    (problem,) = problems_of(path)
    assert problem == f"{path}:2:5: not UTF-8 text (byte 0xe1)\n  hint: save the file as UTF-8"


def test_a_byte_order_mark_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "bom.yml"
    path.write_bytes(b"\xef\xbb\xbfprompt: p\n")
    assert load_spec(path, check_files=False).spec.prompt == "p"


# --- YAML that would hurt to copy ------------------------------------------------------------

def test_an_alias_of_a_list_is_refused_where_it_is_used(tmp_path: Path) -> None:
    path = tmp_path / "alias.yml"
    path.write_text("prompt: p\ninputs: &files [a.csv]\ncontract:\n  stdout_contains: *files\n")
    (problem,) = problems_of(path, check_files=False)
    assert problem.startswith(f"{path}:4:3: contract.stdout_contains: aliases of lists")


def test_billion_laughs_is_refused_quickly() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)]
    started = time.monotonic()
    with pytest.raises(SpecError, match="aliases of lists or mappings"):
        load_spec_text("\n".join(lines) + "\nprompt: p\n", "issue #1", check_files=False)
    assert time.monotonic() - started < 2


def test_a_scalar_alias_is_harmless() -> None:
    text = "prompt: &p Chart the sales\ncontract:\n  success_criteria: [*p]\n"
    loaded = load_spec_text(text, "s", check_files=False)
    assert loaded.spec.contract.success_criteria == ["Chart the sales"]


@pytest.mark.parametrize(
    "text",
    ["prompt: " + "[" * 30_000 + "]" * 30_000, "prompt: p\ninputs:\n  " + "- " * 30_000 + "x"],
    ids=["flow", "block"],
)
def test_absurd_nesting_is_refused_quickly_not_a_crash(text: str) -> None:
    started = time.monotonic()
    with pytest.raises(SpecError, match="nested too deeply"):
        load_spec_text(text + "\n", "issue #1")
    assert time.monotonic() - started < 2


def test_brackets_in_a_prompt_are_not_nesting() -> None:
    prompt = "Parse [x] and {y} and [[z]] " * 100
    assert load_spec_text(f"prompt: '{prompt}'\n", "s", check_files=False).spec.prompt


def test_shared_container_finds_nothing_in_a_plain_tree() -> None:
    assert shared_container({"a": [1, {"b": [2]}], "c": {"d": []}}) is None


def test_a_spec_larger_than_the_cap_is_refused_without_reading_it_all(repo: Path) -> None:
    path = repo / "huge.yml"
    path.write_text("prompt: |\n  line\n")
    os.truncate(path, 8 * 2**30)  # sparse: reading it whole would take many seconds and GiB
    started = time.monotonic()
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    assert time.monotonic() - started < 2
    assert caught.value.problems == [
        f"{path}:1:1: larger than 256 KiB, the most a task spec may be\n  hint: keep the spec "
        "to the task's description; put data in a file and list it under `inputs:`"
    ]


def test_an_oversized_issue_body_is_refused_too() -> None:
    with pytest.raises(SpecError, match=r"^issue #7:1:1: larger than 256 KiB"):
        load_spec_text("prompt: " + "é" * 140_000 + "\n", "issue #7", check_files=False)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_a_device_is_not_a_spec(device: str) -> None:
    with pytest.raises(SpecError) as caught:
        load_spec(Path(device))
    assert caught.value.problems == [
        f"{device}:1:1: is not a regular file (a device, FIFO or socket)"
        "\n  hint: copy what it holds into a file and pass that"
    ]


def test_absurd_flow_nesting_is_located_where_it_goes_too_deep() -> None:
    text = "prompt: p\ncontract:\n  success_criteria: " + "[" * 300 + "]" * 300 + "\n"
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, "s.yml", check_files=False)
    assert caught.value.problems[0].startswith(f"s.yml:3:{len('  success_criteria: ') + 201}: ")


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "spec.yml"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(SpecError, match="is not a regular file"):
        load_spec(fifo)
    assert time.monotonic() - started < 2


def test_tests_must_be_utf8_text_and_placed_files_must_fit_the_work_dir(repo: Path) -> None:
    from selfcorrect_action import spec_files

    (repo / "tests" / "test_latin1.py").write_bytes(b"def test_x():\n    assert '\xe9'\n")
    big = repo / "data" / "big.bin"
    big.write_bytes(b"")
    os.truncate(big, spec_files.MAX_PLACED_BYTES + 1)
    text = "prompt: p\ntests: [tests/test_latin1.py]\ninputs: [data/big.bin]\n"
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, "s.yml", root=repo)
    assert caught.value.problems == [
        "s.yml:2:9: tests.0: tests/test_latin1.py is not UTF-8 text (byte 0xe9 on its line 2)"
        "\n  hint: save the test file as UTF-8",
        f"s.yml:3:10: inputs.0: data/big.bin is {spec_files.MAX_PLACED_BYTES + 1:,} bytes; a "
        f"file copied into the sandbox may be at most {spec_files.MAX_PLACED_BYTES:,}"
        "\n  hint: use a smaller file, e.g. a sample of the data",
    ]


def test_files_that_fit_one_by_one_but_not_together_are_refused(repo: Path) -> None:
    from selfcorrect_action import spec_files

    for name in ("a.bin", "b.bin"):
        path = repo / "data" / name
        path.write_bytes(b"")
        os.truncate(path, spec_files.MAX_PLACED_BYTES // 2 + 1)
    text = "prompt: p\ninputs:\n  - data/a.bin\n  - data/b.bin\n"
    with pytest.raises(SpecError, match=r"s.yml:2:1: inputs: the tests and inputs add up to"):
        load_spec_text(text, "s.yml", root=repo)


def test_an_output_through_a_committed_link_is_refused(repo: Path) -> None:
    (repo / "scripts").symlink_to("tests")  # would overwrite the frozen tests
    with pytest.raises(SpecError) as caught:
        load_spec_text("prompt: p\noutput: scripts/test_chart.py\n", "s.yml", root=repo)
    assert caught.value.problems == [
        "s.yml:2:1: output: scripts/test_chart.py goes through the symbolic link scripts "
        "(to tests)\n  hint: write the output to a real folder of the repository"
    ]


@pytest.mark.parametrize("name", ["json", "csv", "pandas", "pytest", "random"])
def test_an_output_named_like_a_module_is_refused(name: str) -> None:
    with pytest.raises(SpecError, match=rf"the script runs as {name}\.py in its work dir"):
        load_spec_text(f"prompt: p\noutput: scripts/{name}.py\n", "s.yml", check_files=False)


def test_a_default_output_named_like_a_module_says_where_it_came_from() -> None:
    with pytest.raises(SpecError, match=r"output defaulted to scripts/csv\.py"):
        load_spec_text("prompt: p\n", "csv.yml", name="csv.yml", check_files=False)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('prompt: "x \\ud800"\n', "s.yml:1:1: prompt: holds a lone surrogate"),
        ("prompt: p\nbudget: {tokens: " + "9" * 5000 + "}\n",
         "s.yml:2:18: a number too long to read (more than 4,300 digits)"),
        ("prompt: p\x00q\n", "s.yml:1:10: invalid YAML: character 0x0000 is not allowed"),
        ("prompt: p\ninputs: &a [a.csv]\ntests: *a\n",
         "s.yml:3:1: tests: aliases of lists or mappings"),
    ],
    ids=["surrogate", "huge-int", "nul", "alias"],
)
def test_text_that_would_crash_a_later_step_is_a_located_problem(text: str, expected: str) -> None:
    started = time.monotonic()
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, "s.yml", check_files=False)
    assert caught.value.problems[0].startswith(expected), caught.value.problems
    assert time.monotonic() - started < 2


def test_fields_left_empty_take_their_defaults() -> None:
    text = "prompt: p\nkind:\njudge:\nbudget:\n  tokens:\nmodels: {cheap: }\n"
    spec = load_spec_text(text, "s.yml", check_files=False).spec
    assert (spec.kind, spec.judge, spec.budget.tokens, spec.models.cheap) == (
        "script", True, 60_000, None)


@pytest.mark.parametrize("value", ['"no"', "0", "yes"])
def test_judge_takes_true_or_false_only(value: str) -> None:
    with pytest.raises(SpecError, match="judge: Input should be a valid boolean"):
        load_spec_text(f"prompt: p\njudge: {value}\n", "s.yml", check_files=False)


@pytest.mark.parametrize(
    ("source", "problem"),
    [("", "defines no test function"), ("def test_x(:\n", "does not parse as Python"),
     ("def helper():\n    assert True\n", "defines no test function")],
)
def test_frozen_tests_that_could_never_pass_are_refused(
    repo: Path, source: str, problem: str
) -> None:
    (repo / "tests" / "test_broken.py").write_text(source)
    with pytest.raises(SpecError, match=rf"tests/test_broken\.py {problem}"):
        load_spec_text("prompt: p\ntests: tests/test_broken.py\n", "s.yml", root=repo)


def test_an_empty_prompt_says_so() -> None:
    with pytest.raises(SpecError) as caught:
        load_spec_text("prompt:\n", "s.yml", check_files=False)
    assert caught.value.problems == [
        "s.yml:1:1: prompt: must not be empty\n  hint: describe the task: `prompt: |`, then the "
        "text on the lines below"]


@pytest.mark.parametrize("field", ["tokens: 99999999999999999999", "cost_usd: 1.0e300"])
def test_budgets_have_upper_bounds(field: str) -> None:
    with pytest.raises(SpecError, match="budget"):
        load_spec_text(f"prompt: p\nbudget:\n  {field}\n", "s.yml", check_files=False)


def test_outside_a_repository_the_hint_says_where_paths_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It said "the repository root (/tmp)" where there is none (issue 38, item 8)."""
    folder = tmp_path / "loose"
    folder.mkdir()
    monkeypatch.chdir(folder)
    (folder / "t.yml").write_text("prompt: p\ninputs: [sales.csv]\n")
    (problem,) = problems_of(Path("t.yml"))
    assert "repository root" not in problem
    assert (f"hint: paths are relative to the current folder ({folder.resolve()}): no git "
            "repository holds the spec, so they start where selfcorrect runs;") in problem
    (problem,) = problems_of(folder / "t.yml", root=tmp_path)
    assert f"paths are relative to {tmp_path}, the folder given as the root" in problem
