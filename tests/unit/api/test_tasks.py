"""Tasks from wherever they are given; a prompt's task is named after its first words and
recorded as the spec `prompt: <text>`."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfcorrect_action.api.tasks import (
    default_out_dir,
    load_task,
    prompt_name,
    spec_from_prompt,
    spec_from_text,
)
from selfcorrect_action.errors import SpecError, UsageError
from selfcorrect_action.spec import LoadedSpec, user_contract_fields


@pytest.mark.parametrize(("prompt", "name"), [
    ("Plot monthly sales from sales.csv as a bar chart", "plot_monthly_sales_from_sales_csv"),
    ("Print hello\nand then more lines", "print_hello"),
    ("  print   THE first 10 primes!  ", "print_the_first_10_primes"),
    ("2024 sales report", "task_2024_sales_report"),  # a module name cannot start with a digit
    ("import", "task_import"),  # nor be a keyword
    ("Überprüfe die Daten", "berpr_fe_die_daten"),  # ASCII runs only
    ("日本語のタスク", "task"),
    ("one two three four five six seven eight", "one_two_three_four_five_six"),
    ("a" * 60 + " more", "a" * 40),
    ("internationalization localization globalization", "internationalization_localization"),
])
def test_a_prompts_name_is_its_first_words(prompt: str, name: str) -> None:
    assert prompt_name(prompt) == name


def test_a_prompt_is_the_whole_spec(tmp_path: Path) -> None:
    loaded = spec_from_prompt("Print the first 10 primes,\none a line.", root=tmp_path)
    assert loaded.source == "--prompt"
    assert loaded.spec.prompt == "Print the first 10 primes,\none a line."
    assert loaded.spec.output == "scripts/print_the_first_10_primes.py"
    assert user_contract_fields(loaded.spec) == set(), "the planner fills the contract"
    assert default_out_dir(loaded) == Path("out/print_the_first_10_primes")
    assert load_task("Print the first 10 primes,\none a line.", root=tmp_path) == loaded


def test_an_empty_prompt_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--prompt: the prompt is empty"):
        spec_from_prompt(" \n", root=tmp_path)


def test_a_spec_file_and_a_specs_text(tmp_path: Path) -> None:
    spec = tmp_path / "chart.yml"
    spec.write_text("prompt: Draw a chart.\n")
    loaded = load_task(spec, root=tmp_path)
    assert (loaded.spec.output, default_out_dir(loaded)) == ("scripts/chart.py",
                                                            Path("out/chart"))
    text = spec_from_text("prompt: Draw a chart.\n", root=tmp_path)
    assert (text.source, text.spec.output) == ("spec", "scripts/task.py")
    assert isinstance(load_task(text), LoadedSpec) and load_task(text) is text
    with pytest.raises(SpecError, match=r"spec:1:1: prompt: must not be empty"):
        spec_from_text("prompt: ''\n", root=tmp_path)


def test_a_repair_task_is_checked_as_a_spec_file_is(tmp_path: Path) -> None:
    from selfcorrect_action.api import repair_spec

    (tmp_path / "pkg").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "pkg" / "core.py").write_text("def f():\n    return 1\n")
    (tmp_path / "tests" / "t.py").write_text("def test_f():\n    assert False\n")
    loaded = repair_spec(tmp_path, "f() is wrong\nit returns 1", ["pkg/*.py"],
                         test_command="pytest -q tests", failing_tests=["tests/t.py::test_f"],
                         review=False, budget={"patch_attempts": 1})
    spec = loaded.spec
    assert (spec.kind, spec.files, spec.test_command) == ("repair", ["pkg/*.py"],
                                                          ["pytest", "-q", "tests"])
    assert spec.prompt.rstrip("\n") == "f() is wrong\nit returns 1"
    assert spec.failing_tests == ["tests/t.py::test_f"] and spec.review is False
    assert spec.budget.patch_attempts == 1 and loaded.root == tmp_path
    with pytest.raises(SpecError) as refused:
        repair_spec(tmp_path, "fix", ["../elsewhere/*.py", "nothing/*.py"])
    shown = str(refused.value)
    assert "repair" in shown and "../elsewhere/*.py" in shown


def test_apply_is_refused_for_a_task_with_no_spec_file(tmp_path: Path) -> None:
    """apply writes a script into the repository beside its spec, and names that spec in
    the script's header and record: a prompt has none."""
    from selfcorrect_action import api

    with pytest.raises(UsageError, match="apply writes a script into the repository beside "
                       "its spec file"):
        api.run_task(prompt="Print hello", model="openai/x", out_dir=tmp_path / "out",
                     environ={"OPENAI_API_KEY": "sk-test-not-a-key"}, apply=True)
    assert not (tmp_path / "out" / "run.json").exists(), "refused before it ran"
