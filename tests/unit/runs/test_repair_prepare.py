"""Before a repair spends anything: its repository read once, the files it may rewrite,
its requirements, the limits of its test runs, and its first state (through the pipeline's
prepare, as every front end)."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfcorrect_action.errors import UsageError
from selfcorrect_action.runs.pipeline import prepare
from selfcorrect_action.runs.repair_prepare import DEFAULT_TIMEOUT_S, repair_inputs
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.spec import load_spec_text


def _repo(tmp_path: Path) -> Path:
    for name, text in {"pkg/__init__.py": "", "pkg/core.py": "x = 1\n",
                       "pkg/latin1.py": "", "tests/test_core.py": "def test(): pass\n",
                       "req.txt": "toolz\n"}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "pkg" / "latin1.py").write_bytes(b"s = '\xe9'\n")  # not UTF-8
    return tmp_path


SPEC = "prompt: fix it\nkind: repair\nfiles: [\"**/*.py\"]\nrequirements: req.txt\n"


def test_the_repository_the_allowed_files_the_requirements_and_the_limits(
        tmp_path: Path) -> None:
    loaded = load_spec_text(SPEC, "fix.yml", root=_repo(tmp_path))
    inputs = repair_inputs(loaded)
    # Only Python source that is not a test, and that can be shown to a model as text.
    assert inputs.record.allowed == ["pkg/__init__.py", "pkg/core.py"]
    assert inputs.record.repository_files == 5 and inputs.record.listed_by == "walk"
    assert inputs.requirements == "toolz\n"
    assert inputs.limits.work_mb == 65


def test_a_repair_whose_globs_allow_nothing_is_refused_before_anything_runs(
        tmp_path: Path) -> None:
    loaded = load_spec_text("prompt: x\nkind: repair\nfiles: [tests/*.py]\n", "fix.yml",
                            root=_repo(tmp_path), check_files=False)
    with pytest.raises(UsageError, match=r"match no file of .* that a repair may rewrite"):
        repair_inputs(loaded)


KEYED = {"OPENAI_API_KEY": "sk-test"}  # a hosted model's key is checked up front


def test_prepare_makes_a_repairs_first_state(tmp_path: Path) -> None:
    loaded = load_spec_text(SPEC, "fix.yml", root=_repo(tmp_path))
    prepared = prepare(loaded, RunSettings(model="openai/gpt-4o-mini"), environ=KEYED,
                       secrets=[])
    state = prepared.state
    assert state.spec.kind == "repair" and state.output_name == ""
    assert state.repair is not None and state.repair.allowed == ["pkg/__init__.py",
                                                                 "pkg/core.py"]
    assert state.contract.timeout_s == DEFAULT_TIMEOUT_S  # a suite, not a script
    assert prepared.repository is not None and prepared.requirements == "toolz\n"
    written = load_spec_text(SPEC + "contract: {timeout_s: 45}\n", "fix.yml",
                             root=tmp_path)
    assert prepare(written, RunSettings(model="openai/gpt-4o-mini"), environ=KEYED,
                   secrets=[]).state.contract.timeout_s == 45
