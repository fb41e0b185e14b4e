"""validate(): the problems `selfcorrect validate` prints, as data, read back from the one
located format every loader writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfcorrect_action.api.validation import problem, validate
from selfcorrect_action.commands.validate_cmd import spec_problems
from selfcorrect_action.errors import UsageError


def test_a_specs_text_gets_every_problem_with_line_column_field_and_hint() -> None:
    checked = validate(text="prompt: x\nkind: scirpt\ncontract: {network: maybe}\n",
                       source="t.yml")
    assert not checked.valid
    kind, network = checked.problems
    assert (kind.line, kind.column, kind.field) == (2, 1, "kind")
    assert kind.message == "Input should be 'script', 'function' or 'repair'; got 'scirpt'"
    assert kind.hint == "use one of the listed values"
    assert kind.text.startswith("t.yml:2:1: kind: ")
    assert (network.line, network.field) == (3, "contract.network")


def test_a_file_is_checked_as_the_cli_checks_it(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # outside a repository, the root is the current folder
    spec = tmp_path / "task.yml"
    spec.write_text("prompt: x\ntests: [tests/missing.py]\n")
    checked = validate(spec, root=tmp_path)
    assert [p.text for p in checked.problems] == spec_problems(spec)
    (only,) = checked.problems
    assert (only.line, only.column, only.field) == (2, 9, "tests.0")
    assert only.message.startswith("tests/missing.py does not exist")
    assert validate(spec, root=tmp_path, check_files=False).valid


@pytest.mark.parametrize(("text", "expected"), [
    ("s:1:1: the spec is empty\n  hint: start with `prompt: |`",
     (1, 1, "", "the spec is empty", "start with `prompt: |`")),
    ("s:4:3: (top level): Field required\n  hint: add this field",
     (4, 3, "", "Field required", "add this field")),
    ("s:2:1: expected a mapping of fields (prompt:, kind:, ...) at the top level, found a list",
     (2, 1, "", "expected a mapping of fields (prompt:, kind:, ...) at the top level, "
      "found a list", "")),
    ("s: invalid YAML: something odd", (1, 1, "", "invalid YAML: something odd", "")),
    ("s:7:5: contract.artifacts.0.kind: bad: really\n  hint: h",
     (7, 5, "contract.artifacts.0.kind", "bad: really", "h")),
])
def test_each_located_form_reads_back(text: str,
                                      expected: tuple[int, int, str, str, str]) -> None:
    found = problem(text, "s")
    assert (found.line, found.column, found.field, found.message, found.hint) == expected
    assert found.text == text


def test_a_valid_spec_has_no_problems() -> None:
    assert validate(text="prompt: Print hello.\n").model_dump() == {"valid": True, "problems": []}


def test_a_str_naming_a_file_is_that_file_not_yaml(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 38: `validate("x.yml")` parsed the name itself as YAML (a single value, not
    a mapping) and said so, whatever the file held."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.yml").write_text("prompt: Print hello.\n")
    assert validate("x.yml").valid
    (missing,) = validate("tasks/missing.yml").problems
    assert (missing.message, missing.hint) == ("no such file", "check the path and its spelling")
    assert missing.text.startswith("tasks/missing.yml:1:1: ")


def test_yaml_text_is_given_as_text() -> None:
    assert validate(text="prompt: Print hello.\n").valid
    (kind,) = validate(text="prompt: x\nkind: scirpt\n", source="t.yml").problems
    assert kind.text.startswith("t.yml:2:1: kind: ")
    with pytest.warns(DeprecationWarning, match=r"api\.validate\(text=\.\.\.\)") as warned:
        assert validate("prompt: Print hello.\n").valid
    assert warned[0].filename == __file__
    with pytest.raises(UsageError, match="give the spec once"):
        validate(Path("x.yml"), text="prompt: x\n")
