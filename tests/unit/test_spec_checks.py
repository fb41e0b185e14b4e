"""Conflicts between spec fields that are each valid on their own, located on the field to
change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.errors import SpecError
from selfcorrect_action.spec import TaskSpec, load_spec_text
from selfcorrect_action.spec_checks import find_conflicts, placed_files


def problems_of(text: str, *, name: str = "chart") -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, "spec.yml", root=Path("/nonexistent"), name=name, check_files=False)
    return caught.value.problems


def spec(**fields: Any) -> TaskSpec:
    return TaskSpec.model_construct(**{"prompt": "p", **fields})


def test_an_artifact_at_the_output_path_is_an_error() -> None:
    (problem,) = problems_of(
        "prompt: p\noutput: scripts/chart.py\ncontract:\n  artifacts:\n"
        "    - path: scripts/chart.py\n"
    )
    assert problem.startswith(
        "spec.yml:5:7: contract.artifacts.0.path: scripts/chart.py is the script itself"
    )


def test_an_artifact_named_like_the_script_is_an_error() -> None:
    (problem,) = problems_of(
        "prompt: p\noutput: scripts/chart.py\ncontract:\n  artifacts: [{path: chart.py}]\n"
    )
    assert "contract.artifacts.0.path: chart.py is the script itself" in problem


def test_an_artifact_that_is_also_an_input_would_prove_nothing() -> None:
    (problem,) = problems_of(
        "prompt: p\ninputs: [data/sales.csv]\ncontract:\n  artifacts:\n    - path: sales.csv\n"
    )
    assert problem.startswith("spec.yml:5:7: contract.artifacts.0.path: sales.csv is also inputs.0")
    assert "exists before the script runs" in problem


def test_an_artifact_named_like_a_test_would_overwrite_it() -> None:
    (problem,) = problems_of(
        "prompt: p\ntests: tests/test_chart.py\ncontract:\n  artifacts: [{path: test_chart.py}]\n"
    )
    assert "is also tests.0: the script would overwrite a frozen test" in problem


def test_an_input_listed_twice_is_an_error_on_the_second() -> None:
    (problem,) = problems_of("prompt: p\ninputs:\n  - data/a.csv\n  - data/b.csv\n  - data/a.csv\n")
    assert problem.startswith("spec.yml:5:5: inputs.2: data/a.csv is already listed as inputs.0")
    assert "hint: remove the duplicate or rename one file" in problem


def test_inputs_with_the_same_file_name_would_land_on_each_other() -> None:
    (problem,) = problems_of("prompt: p\ninputs: [2023/sales.csv, 2024/sales.csv]\n")
    assert "inputs.1: 2024/sales.csv and inputs.0 (2023/sales.csv) would both be copied" in problem
    assert "to the work dir as sales.csv" in problem


def test_a_test_named_like_an_input_is_an_error() -> None:
    (problem,) = problems_of(
        "prompt: p\ninputs: [fixtures/test_chart.py]\ntests: [tests/test_chart.py]\n"
    )
    assert problem.startswith("spec.yml:3:9: tests.0: tests/test_chart.py and inputs.0")


def test_an_output_named_like_a_test_is_an_error() -> None:
    (problem,) = problems_of(
        "prompt: p\noutput: scripts/test_chart.py\ntests: [tests/test_chart.py]\n"
    )
    assert problem.startswith("spec.yml:2:1: output: the script runs in the work dir as "
                              "test_chart.py, the same name as tests.0")
    assert "hint: choose another output file name" in problem


def test_a_defaulted_output_that_collides_says_where_it_came_from() -> None:
    (problem,) = problems_of("prompt: p\ntests: [tests/test_chart.py]\n", name="test_chart.yml")
    assert problem.startswith("spec.yml:1:1: output:")
    assert "hint: output defaulted to scripts/test_chart.py from the spec's name" in problem


@pytest.mark.parametrize("output", ["scripts/sales-chart.py", "scripts/2024.py", "lib/class.py"])
def test_kind_function_needs_an_importable_module_name(output: str) -> None:
    (problem,) = problems_of(f"prompt: p\nkind: function\noutput: {output}\n")
    assert problem.startswith("spec.yml:3:1: output: kind function: tests import the module")


def test_a_script_may_have_any_file_name() -> None:
    loaded = load_spec_text("prompt: p\noutput: scripts/sales-chart.py\n", "s", check_files=False)
    assert loaded.spec.output == "scripts/sales-chart.py"


def test_several_conflicts_are_reported_together() -> None:
    found = problems_of(
        "prompt: p\ninputs: [a.csv, a.csv]\n"
        "contract:\n  artifacts: [{path: a.csv}, {path: chart.py}]\n"
    )
    assert [p.split(": ")[1] for p in found] == [
        "inputs.1", "contract.artifacts.0.path", "contract.artifacts.1.path"
    ]


def test_find_conflicts_is_empty_for_a_consistent_spec() -> None:
    consistent = spec(output="scripts/chart.py", inputs=["data/sales.csv"],
                      tests=["tests/test_chart.py"])
    assert find_conflicts(consistent) == []
    assert placed_files(consistent) == [
        (("inputs", 0), "data/sales.csv"), (("tests", 0), "tests/test_chart.py")
    ]


def test_inputs_differing_only_in_case_are_an_error() -> None:
    (problem,) = problems_of("prompt: p\ninputs:\n  - data/x.csv\n  - other/X.csv\n")
    assert problem.startswith("spec.yml:4:5: inputs.1: other/X.csv and inputs.0 (data/x.csv) "
                              "differ only in case")


def test_artifacts_differing_only_in_case_are_an_error() -> None:
    (problem,) = problems_of(
        "prompt: p\ncontract:\n  artifacts:\n    - path: out.csv\n    - path: OUT.csv\n")
    assert problem.startswith("spec.yml:5:7: contract.artifacts.1.path: OUT.csv and out.csv "
                              "differ only in case")


@pytest.mark.parametrize("path", [".GIT/hooks/x.py", "a/.Git/x.py"])
def test_git_folders_are_refused_whatever_their_case(path: str) -> None:
    (problem,) = problems_of(f"prompt: p\noutput: {path}\n")
    assert "nothing under .git/" in problem


@pytest.mark.parametrize("module", ["json", "pandas", "selfcorrect_boundary"])
def test_an_output_named_like_a_module_is_an_error(module: str) -> None:
    """The work dir comes first on sys.path; and the tests' boundary is loaded in both of
    its processes already, so a candidate named like it would never be what the tests get."""
    (problem,) = problems_of(f"prompt: p\nkind: function\noutput: lib/{module}.py\n")
    assert f"every `import {module}`" in problem and f"{module}_task.py" in problem
