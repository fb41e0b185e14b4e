"""The pipeline records every run in the history, at its end and when it is interrupted, with
what its attempts drew; a history that cannot be written costs the run nothing. Without
Docker: a replayed model and tests/fakes/fake_engine.py at the Engine seam, whose runner
streams back the files each attempt "wrote"."""

from __future__ import annotations

import io
import json
from pathlib import Path

from PIL import Image

from selfcorrect_action.history.location import database
from selfcorrect_action.history.store import HistoryStore
from selfcorrect_action.loop.state import Status
from selfcorrect_action.report.run_json import load_run_json
from selfcorrect_action.runs import pipeline
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.runs.pipeline import Connections
from selfcorrect_action.runs.session import RunEvents
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.spec import load_spec
from tests.fakes.fake_engine import SPEAKS_OUR_PROTOCOL, FakeEngine, Reply
from tests.fakes.replays import fenced, write_replay

IMAGE = "selfcorrect-sandbox:fake"
PROMPT = "Draw a chart and print done."
SPEC = {
    "prompt": PROMPT, "output": "chart.py", "judge": False,
    "budget": {"patch_attempts": 1, "rethink_attempts": 0},
    "contract": {"artifacts": [{"path": "chart.png", "kind": "png"}],
                 "stdout_contains": ["done"], "timeout_s": 30, "memory_mb": 256,
                 "success_criteria": ["a chart"]},
}


def _png(colour: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (64, 48), colour).save(out, format="PNG")
    return out.getvalue()


def _drawing(*files: dict[str, bytes]) -> FakeEngine:
    """Attempt N's script prints "done" and writes files[N-1]."""
    made = list(files)

    def behaviour(header: dict[str, object]) -> Reply:
        return Reply(report={"exit_code": 0, "stdout": {"text": "done\n", "total_bytes": 5}},
                     files=made.pop(0) if made else {})
    return FakeEngine(images={IMAGE: SPEAKS_OUR_PROTOCOL}, behaviour=behaviour)


def _prepared(tmp_path: Path, history: Path | None, *, keep: bool = True
              ) -> pipeline.PreparedRun:
    path = tmp_path / "chart.yml"
    path.write_text(json.dumps(SPEC))
    replay = write_replay(tmp_path / "replay.jsonl", PROMPT, [
        ("generate", fenced("print('done')")), ("repair", fenced("print('done')  # png"))])
    settings = RunSettings(replay=replay, sandbox_image=IMAGE, history=history,
                           keep_history=keep)
    return pipeline.prepare(load_spec(path), settings, environ={}, secrets=[])


def test_a_run_is_recorded_with_what_each_attempt_drew(tmp_path: Path) -> None:
    engine = _drawing({"wrong-name.png": _png("red")}, {"chart.png": _png("green")})
    prepared = _prepared(tmp_path, tmp_path / "history")
    outcome: pipeline.RunOutcome[None] = pipeline.run(
        prepared, environ={}, secrets=[], reports_dir=tmp_path / "out",
        connections=Connections(engine=engine))
    assert outcome.state.status is Status.PASSED and len(outcome.state.attempts) == 2
    with HistoryStore(tmp_path / "history", create=False) as store:
        (entry,) = store.entries()
        kept = store.artifacts(entry.run_id)
        recorded = load_run_json(store.run_json(entry.run_id))
    assert (entry.run_id, entry.status, entry.attempts) == (outcome.state.run_id, "passed", 2)
    assert entry.replayed and entry.location == str((tmp_path / "out").resolve())
    assert [(k.attempt, k.path, k.data) for k in kept] == [
        (1, "wrong-name.png", _png("red")), (2, "chart.png", _png("green"))]
    assert recorded == load_run_json((tmp_path / "out" / "run.json").read_text())
    assert outcome.artifacts == kept  # what a front end shows, without reading it back
    assert outcome.history == tmp_path / "history"


def test_an_interrupted_run_is_recorded_as_it_ended(tmp_path: Path) -> None:
    token = CancelToken()

    def on_event(step: str, message: str) -> None:
        # After the script ran: a cancel while it runs kills it (runs/stoppable.py), and a
        # killed script leaves no picture to keep.
        if step == "evaluate":
            token.cancel()

    prepared = _prepared(tmp_path, tmp_path / "history")
    outcome: pipeline.RunOutcome[None] = pipeline.run(
        prepared, environ={}, secrets=[], events=RunEvents(on_event=on_event), cancel=token,
        connections=Connections(engine=_drawing({"a.png": _png("red")})))
    assert outcome.interruption is not None
    with HistoryStore(tmp_path / "history", create=False) as store:
        (entry,) = store.entries()
        assert store.artifacts(entry.run_id) != ()
    assert (entry.status, entry.attempts, entry.location) == ("cancelled", 1, "")


def test_no_history_records_nothing(tmp_path: Path) -> None:
    outcome: pipeline.RunOutcome[None] = pipeline.run(
        _prepared(tmp_path, tmp_path / "history", keep=False), environ={}, secrets=[],
        connections=Connections(engine=_drawing()))
    assert not (tmp_path / "history").exists() and outcome.history is None


def test_a_history_that_cannot_be_written_costs_the_run_nothing(tmp_path: Path) -> None:
    history = tmp_path / "history"
    history.mkdir()
    database(history).write_text("not a database " * 100)
    said: list[tuple[str, str]] = []
    outcome: pipeline.RunOutcome[None] = pipeline.run(
        _prepared(tmp_path, history), environ={}, secrets=[], reports_dir=tmp_path / "out",
        events=RunEvents(on_event=lambda step, message: said.append((step, message))),
        connections=Connections(engine=_drawing({}, {"chart.png": _png("green")})))
    assert outcome.state.status is Status.PASSED and outcome.exit_code == 0
    assert outcome.history is None
    (note,) = [message for step, message in said if step == "history"]
    assert "not in the history" in note and "not a selfcorrect run history" in note
    assert (tmp_path / "out" / "run.json").is_file()
