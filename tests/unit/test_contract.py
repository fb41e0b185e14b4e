"""Contract files as `selfcorrect exec --contract` reads them: hostile YAML is refused,
located and quickly, like a task spec."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from selfcorrect_action.contract import load_contract
from selfcorrect_action.errors import SpecError


def _contract(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "contract.yml"
    path.write_text(text)
    return path


def test_billion_laughs_is_refused_before_it_expands(tmp_path: Path) -> None:
    lines = ["x-anchors:", '  a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    lines += [f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    path = _contract(tmp_path, "\n".join(lines) + "\nsuccess_criteria: *a8\n")
    started = time.monotonic()
    with pytest.raises(SpecError) as caught:
        load_contract(path)
    assert time.monotonic() - started < 2
    assert caught.value.problems[0].startswith(f"{path}:2:7: x-anchors.a1.0: ")  # the anchor
    assert "aliases of lists or mappings (*name) are not supported" in caught.value.problems[0]


@pytest.mark.parametrize(
    "text",
    ["artifacts: " + "[" * 100_000 + "]" * 100_000, "artifacts:\n  " + "- " * 50_000 + "x"],
    ids=["flow", "block"],
)
def test_absurd_nesting_is_a_located_error_not_a_crash(tmp_path: Path, text: str) -> None:
    path = _contract(tmp_path, text + "\n")
    with pytest.raises(SpecError, match="nested too deeply"):
        load_contract(path)


def test_an_empty_stdout_check_is_refused(tmp_path: Path) -> None:
    path = _contract(tmp_path, 'stdout_contains: ["done", ""]\n')
    with pytest.raises(SpecError) as caught:
        load_contract(path)
    assert caught.value.problems[0].startswith(f"{path}:1:")
    assert "stdout_contains.1" in caught.value.problems[0]
    assert "hint: write some text, or remove the entry" in caught.value.problems[0]
