"""`selfcorrect run` on a repair spec end to end, as the README shows it: the example
repository (a git checkout of examples/repair/calc), its recorded replay played back
through litellm, the real loop, the real sandbox and the repository's own pytest suite;
the changed file applied, or refused when the working tree has changes of its own."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from selfcorrect_action.cli import main
from selfcorrect_action.report.run_json import load_run_json

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "repair" / "calc"
REPLAY = ROOT / "examples" / "replays" / "repair_calc.jsonl"
SPEC = ".selfcorrect/tasks/fix_mean.yml"
CORE = "src/calc/core.py"


def checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "calc"
    shutil.copytree(EXAMPLE, repo)
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@invalid", "commit", "-qm", "start"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)
    return repo


@pytest.fixture(autouse=True)
def _no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SELFCORRECT_MODEL"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("sandbox_image")
def test_the_example_repair_replays_and_applies_its_fix(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = checkout(tmp_path)
    out = tmp_path / "out"

    code = main(["run", str(repo / SPEC), "--replay", str(REPLAY), "--out", str(out),
                 "--apply", "--json"])

    printed = json.loads(capsys.readouterr().out)
    assert code == 0 and printed["status"] == "passed" and printed["applied"] is True
    assert printed["changed_files"] == [str(repo / CORE)]
    fixed = (repo / CORE).read_text()
    assert "return total(values) / len(values)\n" in fixed
    assert "max(low, min(value, high))" in fixed
    diff = (out / "changes.diff").read_text()
    assert diff.startswith(f"--- a/{CORE}\n+++ b/{CORE}\n")
    assert "-    return total(values) / (len(values) + 1)\n+    return total(values) / " \
        "len(values)\n" in diff
    state = load_run_json((out / "run.json").read_text())
    assert state.replayed and state.repair is not None
    assert [a.verdict.category.value for a in state.attempts[:-1]  # type: ignore[union-attr]
            ] == ["contract", "contract"]
    assert [a.strategy.value for a in state.attempts] == ["initial", "patch", "rethink"]
    assert state.attempts[1].regressions == ["tests/test_core.py::test_clamp[11-10]",
                                             "tests/test_core.py::test_clamp[5-5]"]
    audit = (out / "AUDIT.md").read_text()
    assert "replay" in audit.splitlines()[2].lower()
    assert "- Baseline: 6 passed, 2 failed, 0 skipped, 0 flaky" in audit
    # The run applied the fix and nothing else: the tests are as committed.
    status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain"],
                            capture_output=True, text=True, check=True).stdout
    assert status == f" M {CORE}\n"


@pytest.mark.usefixtures("sandbox_image")
def test_apply_refuses_a_file_with_uncommitted_changes_and_writes_to_out_instead(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = checkout(tmp_path)
    mine = (repo / CORE).read_text() + "# a local note\n"
    (repo / CORE).write_text(mine)
    out = tmp_path / "out"

    code = main(["run", str(repo / SPEC), "--replay", str(REPLAY), "--out", str(out),
                 "--apply"])

    said = capsys.readouterr().out
    assert code == 1
    assert f"NOT applied: {CORE} has uncommitted changes" in said
    assert (repo / CORE).read_text() == mine
    assert "return total(values) / len(values)" in (out / CORE).read_text()


def test_apply_is_for_repair_specs_only(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", str(ROOT / "examples" / "tasks" / "two_sum.yml"), "--replay",
                 str(ROOT / "examples" / "replays" / "two_sum.jsonl"), "--apply"])
    assert code == 2
    assert "--apply writes a repair's changed files into the repository" in (
        capsys.readouterr().err)
