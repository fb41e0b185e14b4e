"""Finding the specs an action run is about, and each task's replay."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfcorrect_action.action.problems import parse_problem
from selfcorrect_action.action.specs import matches, replay_for, spec_paths
from selfcorrect_action.errors import UsageError


@pytest.mark.parametrize(("path", "pattern", "expected"), [
    (".selfcorrect/tasks/a.yml", ".selfcorrect/tasks/*.yml", True),
    (".selfcorrect/tasks/sub/a.yml", ".selfcorrect/tasks/*.yml", False),
    (".selfcorrect/tasks/sub/a.yml", ".selfcorrect/tasks/**/*.yml", True),
    (".selfcorrect/tasks/a.yml", ".selfcorrect/tasks/**/*.yml", True),
    ("README.md", ".selfcorrect/tasks/*.yml", False),
])
def test_changed_files_match_the_tasks_glob(path: str, pattern: str, expected: bool) -> None:
    assert matches(path, pattern) is expected


def test_spec_paths_are_relative_sorted_and_inside(tmp_path: Path) -> None:
    tasks = tmp_path / ".selfcorrect" / "tasks"
    tasks.mkdir(parents=True)
    for name in ("b.yml", "a.yml"):
        (tasks / name).write_text("prompt: x\n")
    assert spec_paths(tmp_path, ".selfcorrect/tasks/*.yml") == [
        ".selfcorrect/tasks/a.yml", ".selfcorrect/tasks/b.yml"]
    with pytest.raises(UsageError, match="inside the repository"):
        spec_paths(tmp_path, "../*.yml")


def test_a_replay_folder_gives_each_spec_its_recording(tmp_path: Path) -> None:
    (tmp_path / "replays").mkdir()
    (tmp_path / "replays" / "a.jsonl").write_text("{}\n")
    assert replay_for(tmp_path, "replays", ".selfcorrect/tasks/a.yml", count=2) == (
        tmp_path / "replays" / "a.jsonl")
    with pytest.raises(UsageError, match=r"has no b\.jsonl"):
        replay_for(tmp_path, "replays", "x/b.yml", count=2)
    with pytest.raises(UsageError, match="one recording"):
        replay_for(tmp_path, "replays/a.jsonl", "x/a.yml", count=2)
    assert replay_for(tmp_path, None, "x/a.yml", count=5) is None


def test_problems_are_parsed_for_annotations() -> None:
    problem = parse_problem(".selfcorrect/tasks/a.yml:3:5: contract.timeout_s: too big\n"
                            "  hint: use a smaller value")
    assert (problem.file, problem.line, problem.col) == (".selfcorrect/tasks/a.yml", 3, 5)
    assert problem.message == "contract.timeout_s: too big"
    assert problem.hint == "use a smaller value"
    plain = parse_problem("the issue has no body")
    assert plain.file is None and plain.message == "the issue has no body"


def test_a_glob_over_more_specs_than_one_run_takes_says_to_fan_out(tmp_path: Path) -> None:
    tasks = tmp_path / ".selfcorrect" / "tasks"
    tasks.mkdir(parents=True)
    for index in range(101):
        (tasks / f"t{index}.yml").write_text("prompt: p\n")
    with pytest.raises(UsageError, match="matches 101 files, more than the 100 one run takes"
                       ) as caught:
        spec_paths(tmp_path, ".selfcorrect/tasks/*.yml")
    assert "matrix job" in (caught.value.hint or "")


@pytest.mark.parametrize("pattern", [".", "./", ""])
def test_a_tasks_glob_naming_the_repository_itself_is_a_usage_error(
        tmp_path: Path, pattern: str) -> None:
    """pathlib's glob crashed on these with an IndexError or AttributeError (issue 16, 5)."""
    with pytest.raises(UsageError, match="names the repository, not spec files"):
        spec_paths(tmp_path, pattern)


def test_a_tasks_glob_may_start_with_dot_slash(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.yml").write_text("prompt: p\n")
    assert spec_paths(tmp_path, "./t/*.yml") == ["t/a.yml"]
