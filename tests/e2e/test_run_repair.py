"""`selfcorrect run` on a repair spec end to end, as the README shows it: the example
repository (a git checkout of examples/repair/calc), its recorded replay played back
through litellm, the real loop, the real sandbox and the repository's own pytest suite;
the changed file applied, or refused when the working tree has changes of its own; and the
same run.json under `--orchestrator langgraph` (issue 23), as every example's."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.cli import main
from selfcorrect_action.report.run_json import load_run_json
from tests.orchestration import ORCHESTRATORS, comparable

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


# (exit code, what --json printed, the checkout, the output folder)
RepairRun = Callable[[str], tuple[int, dict[str, Any], Path, Path]]


@pytest.fixture(scope="module")
def repair_run(sandbox_image: str, tmp_path_factory: pytest.TempPathFactory) -> RepairRun:
    """The example repair applied to a fresh checkout under an orchestrator, made once for
    the module: the plain run serves both the outcome test and the comparison."""
    made: dict[str, tuple[int, dict[str, Any], Path, Path]] = {}

    def run(orchestrator: str) -> tuple[int, dict[str, Any], Path, Path]:
        if orchestrator not in made:
            base = tmp_path_factory.mktemp(f"repair-{orchestrator}")
            repo, out, printed = checkout(base), base / "out", io.StringIO()
            with contextlib.redirect_stdout(printed):
                code = main(["run", str(repo / SPEC), "--replay", str(REPLAY), "--out",
                             str(out), "--apply", "--json", "--orchestrator", orchestrator,
                             "--checkpoints", str(base / "checkpoints.sqlite")])
            made[orchestrator] = code, json.loads(printed.getvalue()), repo, out
        return made[orchestrator]

    return run


def test_the_example_repair_replays_and_applies_its_fix(repair_run: RepairRun) -> None:
    code, printed, repo, out = repair_run("plain")
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


def test_langgraph_gives_the_example_repair_the_same_run_json(repair_run: RepairRun) -> None:
    (plain_code, _, plain_repo, plain), (graph_code, _, graph_repo, graph) = (
        repair_run(orchestrator) for orchestrator in ORCHESTRATORS)

    def run_json(out: Path, repo: Path) -> Any:
        # The spec's path names its checkout, one per run.
        return json.loads((out / "run.json").read_text().replace(str(repo), "CHECKOUT"))

    assert graph_code == plain_code
    graph_json = run_json(graph, graph_repo)
    assert graph_json["orchestrator"] == "langgraph"
    assert comparable(graph_json) == comparable(run_json(plain, plain_repo))
    assert sorted(p.name for p in graph.iterdir()) == sorted(p.name for p in plain.iterdir())
    assert (graph / "changes.diff").read_text() == (plain / "changes.diff").read_text()
    assert (graph_repo / CORE).read_text() == (plain_repo / CORE).read_text(), "applied alike"


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


def test_apply_needs_a_spec_file_in_the_repository(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """--apply writes a script beside its spec and names the spec in its header and record
    (issue 36; tests/e2e/test_run_apply.py): a --prompt has no spec file to name."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # a missing key is refused first
    code = main(["run", "--prompt", "Print hello", "--model", "openai/x", "--out",
                 str(tmp_path / "out"), "--apply"])
    assert code == 2
    assert "apply writes a script into the repository beside its spec file" in (
        capsys.readouterr().err)
    assert not (tmp_path / "out" / "run.json").exists(), "refused before it ran"


@pytest.mark.usefixtures("sandbox_image")
def test_the_python_api_repairs_into_its_out_folder_and_leaves_the_repository_alone(
        tmp_path: Path) -> None:
    from selfcorrect_action import api
    from selfcorrect_action.spec import load_spec

    repo = checkout(tmp_path)
    example = load_spec(repo / SPEC).spec
    task = api.repair_spec(repo, example.prompt, example.files,
                           budget=example.budget.model_dump())
    out = tmp_path / "out"

    result = api.run_task(task, replay=REPLAY, out_dir=out, environ={})

    assert (result.status, result.exit_code, result.applied) == ("passed", 0, False)
    assert result.changed_files == [str(out / CORE)]
    assert "return total(values) / len(values)\n" in (out / CORE).read_text()
    assert result.diff is not None and result.diff == (out / "changes.diff").read_text()
    assert result.diff_path == str(out / "changes.diff") and result.output is None
    status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain"],
                            capture_output=True, text=True, check=True).stdout
    assert status == "", "without apply the repository is not touched"


@pytest.mark.usefixtures("sandbox_image")
def test_a_repair_with_requirements_runs_its_suite_where_they_are_installed(
        tmp_path: Path) -> None:
    """A spec's `requirements` are built into a derived image and the repository's suite
    runs in it: a test that needs the installed package passes at the baseline (without
    the derived image it would fail there, on its import)."""
    repo = tmp_path / "calc"
    shutil.copytree(EXAMPLE, repo)
    (repo / "requirements-test.txt").write_text("toolz==0.12.1\n")
    (repo / "tests" / "test_needs_toolz.py").write_text(
        "import toolz\n\n\ndef test_toolz_is_installed():\n"
        "    assert toolz.__version__ == '0.12.1'\n")
    spec = repo / SPEC
    spec.write_text(spec.read_text() + "requirements: requirements-test.txt\n")
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@invalid", "commit", "-qm", "start"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)
    out = tmp_path / "out"

    code = main(["run", str(spec), "--replay", str(REPLAY), "--out", str(out)])

    audit = (out / "AUDIT.md").read_text()
    assert "- Baseline: 7 passed, 2 failed, 0 skipped, 0 flaky" in audit, audit[:3000]
    assert code == 0
