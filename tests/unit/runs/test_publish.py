"""Publishing a finished run to a folder, and a run that ends in one (`run_to_folder`: what
`selfcorrect run`, the API and the MCP server do), the engine played at the Engine seam."""

from __future__ import annotations

import json
from pathlib import Path

from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.runs import pipeline
from selfcorrect_action.runs.publish import FolderRun, run_to_folder, write_output
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.spec import load_spec, load_spec_text
from tests.fakes.fake_engine import SPEAKS_OUR_PROTOCOL, FakeEngine, Reply
from tests.fakes.replays import fenced, write_replay

IMAGE = "selfcorrect-sandbox:fake"


def test_a_failed_run_names_what_an_earlier_passing_run_left(tmp_path: Path) -> None:
    loaded = load_spec_text("prompt: p\noutput: scripts/x.py\n", "t.yml", root=tmp_path,
                            name="t.yml")
    out = tmp_path / "out"
    (out / "scripts").mkdir(parents=True)
    (out / "scripts" / "x.py").write_text("print('old')\n")
    (out / "artifacts").mkdir()
    (out / "artifacts" / "chart.png").write_bytes(b"png")
    state = RunState(run_id="r", started_at="t", spec_source="t.yml", spec=loaded.spec,
                     output_name="x.py", contract=loaded.spec.contract, models=ModelTiers(),
                     status=Status.EXHAUSTED, stop_reason="budget")
    written = write_output(state, loaded, out, tmp_path / "work")
    assert written.script is None
    assert written.stale == [out / "scripts" / "x.py", out / "artifacts"]
    assert (out / "scripts" / "x.py").read_text() == "print('old')\n"  # not deleted


def _folder_run(tmp_path: Path, stdout: str) -> FolderRun:
    """A spec run to a folder, the engine played at the Engine seam."""
    spec = tmp_path / "hello.yml"
    spec.write_text(json.dumps({
        "prompt": "Print hello.", "output": "scripts/hello.py", "judge": False,
        "budget": {"patch_attempts": 0, "rethink_attempts": 0},
        "contract": {"artifacts": [{"path": "note.txt"}], "stdout_contains": ["hello"],
                     "timeout_s": 30, "memory_mb": 256, "success_criteria": ["hello"]}}))
    replay = write_replay(tmp_path / "replay.jsonl", "Print hello.",
                          [("generate", fenced("print('hello')"))])
    prepared = pipeline.prepare(load_spec(spec), RunSettings(replay=replay,
                                                             sandbox_image=IMAGE),
                                environ={}, secrets=[])
    engine = FakeEngine(images={IMAGE: SPEAKS_OUR_PROTOCOL}, behaviour=lambda header: Reply(
        report={"exit_code": 0, "stdout": {"text": stdout, "total_bytes": len(stdout)}},
        files={"note.txt": b"a note"}))
    return run_to_folder(prepared, tmp_path / "out", environ={}, secrets=[],
                         connections=pipeline.Connections(engine=engine))


def test_a_passing_folder_run_writes_its_script_and_artifacts_beside_the_reports(
        tmp_path: Path) -> None:
    done = _folder_run(tmp_path, "hello\n")
    out = tmp_path / "out"
    assert done.outcome.state.status is Status.PASSED and done.outcome.exit_code == 0
    assert done.written.script == out / "scripts" / "hello.py"
    assert (out / "scripts" / "hello.py").read_text() == "print('hello')\n"
    assert (out / "artifacts" / "note.txt").read_bytes() == b"a note"
    assert {path.name for path in out.iterdir()} == {"run.json", "AUDIT.md", "scripts",
                                                     "artifacts"}


def test_a_failed_folder_run_writes_its_reports_and_names_what_was_there(
        tmp_path: Path) -> None:
    (tmp_path / "out" / "scripts").mkdir(parents=True)
    (tmp_path / "out" / "scripts" / "hello.py").write_text("print('old')\n")
    done = _folder_run(tmp_path, "goodbye\n")
    assert done.outcome.state.status is Status.EXHAUSTED and done.outcome.exit_code == 1
    assert done.written.script is None
    assert done.written.stale == [tmp_path / "out" / "scripts" / "hello.py"]
    assert (tmp_path / "out" / "run.json").is_file()
