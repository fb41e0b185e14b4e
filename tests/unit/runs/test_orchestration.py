"""The orchestrator as a run setting (issue 23), through the one pipeline without Docker (the
engine played at the Engine seam): chosen by flag, variable or default; a LangGraph run
says where its checkpoints are; an interrupted one resumes with --resume, its replay where
it stopped; and without the extra, asking for it says how to install it (exit 2)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.cli import main
from selfcorrect_action.errors import UsageError
from selfcorrect_action.loop.state import RunState, Status, Strategy
from selfcorrect_action.runs import pipeline, settings
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.runs.pipeline import Connections
from selfcorrect_action.runs.session import RunEvents
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.spec import load_spec
from tests.fakes.fake_engine import FakeEngine, printing
from tests.fakes.replays import fenced, write_replay
from tests.unit.runs.test_pipeline import IMAGE, PROMPT, SPEC

ANSWERS = [("generate", fenced("print('goodbye')")), ("repair", fenced("print('hello')"))]


def says(*outputs: str) -> FakeEngine:
    """An engine whose scripts print `outputs` in turn (the last one from then on)."""
    return printing(*outputs, image=IMAGE)


def prepared(tmp_path: Path, **chosen: Any) -> pipeline.PreparedRun:
    path = tmp_path / "hello.yml"
    path.write_text(json.dumps(SPEC))
    replay = tmp_path / "replay.jsonl"
    if not replay.exists():
        write_replay(replay, PROMPT, list(ANSWERS))  # type: ignore[arg-type]
    chosen = {"orchestrator": "langgraph", "checkpoints": tmp_path / "checkpoints.sqlite",
              **chosen}
    run_settings = RunSettings(replay=replay, sandbox_image=IMAGE, **chosen)
    return pipeline.prepare(load_spec(path), run_settings, environ={}, secrets=[])


def test_an_interrupted_langgraph_run_resumes_through_the_pipeline(tmp_path: Path) -> None:
    token = CancelToken()
    events: list[tuple[str, str]] = []

    def cancel_after_attempt_1(state: RunState) -> None:
        if state.attempts:
            token.cancel()

    first: pipeline.RunOutcome[None] = pipeline.run(
        prepared(tmp_path), environ={}, secrets=[], cancel=token,
        events=RunEvents(on_event=lambda *e: events.append(e),
                         on_state=cancel_after_attempt_1),
        connections=Connections(engine=says("goodbye\n")))
    run_id = first.state.run_id
    assert first.state.interrupted_by == "cancelled" and len(first.state.attempts) == 1
    assert first.state.status is Status.CANCELLED and first.exit_code == 130
    assert first.state.orchestrator == "langgraph"
    (said,) = [message for step, message in events if step == "graph"]
    assert str(tmp_path / "checkpoints.sqlite") in said
    (kept,) = [message for step, message in events if step == "resume"]
    assert f"run {run_id}:" in kept and f"`--resume {run_id}`" in kept
    assert str(tmp_path / "resumable" / run_id) in kept

    again = prepared(tmp_path, resume=run_id)
    assert again.state.run_id == run_id and len(again.state.attempts) == 1
    assert again.state.usage.llm_calls == 1  # where the replay goes on
    # Attempt 1 is executed again (its verdict is not taken from the checkpoint), then
    # repaired: the engine prints goodbye, then hello.
    done: pipeline.RunOutcome[None] = pipeline.run(again, environ={}, secrets=[],
                        connections=Connections(engine=says("goodbye\n", "hello\n")))
    assert done.state.status is Status.PASSED and done.exit_code == 0
    assert [a.strategy for a in done.state.attempts] == [Strategy.INITIAL, Strategy.PATCH]
    (note,) = done.state.resumes
    assert (note.attempts_before, note.reexecuted, note.previous_status) == (
        1, 1, Status.CANCELLED)


def test_a_langgraph_run_made_before_checkpoint_folders_resumes_from_its_sqlite_file(
        tmp_path: Path) -> None:
    token = CancelToken()
    first: pipeline.RunOutcome[None] = pipeline.run(
        prepared(tmp_path), environ={}, secrets=[], cancel=token,
        events=RunEvents(on_state=lambda state: token.cancel() if state.attempts else None),
        connections=Connections(engine=says("goodbye\n")))
    import shutil

    shutil.rmtree(tmp_path / "resumable")  # as a run of an older selfcorrect left it
    again = prepared(tmp_path, resume=first.state.run_id)
    assert len(again.state.attempts) == 1 and again.state.resumes[0].reexecuted == 1


def test_resume_of_an_unknown_run_says_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no checkpoint of that run") as raised:
        prepared(tmp_path, resume="abcdef", orchestrator="plain", history=tmp_path)
    assert raised.value.hint is not None and "selfcorrect history" in raised.value.hint
    with pytest.raises(UsageError, match="no checkpoint of that run in the history folder"):
        prepared(tmp_path, resume="abcdef")


def test_the_checkpoints_live_in_the_history_folder_unless_given(tmp_path: Path) -> None:
    assert RunSettings(history=tmp_path).checkpoints_file == tmp_path / "checkpoints.sqlite"
    assert RunSettings(history=tmp_path, checkpoints=tmp_path / "c.db").checkpoints_file == \
        tmp_path / "c.db"
    assert RunSettings().checkpoints_file is None


@pytest.mark.parametrize(("argv", "environ", "value", "source"), [
    (["--orchestrator", "langgraph"], {"SELFCORRECT_ORCHESTRATOR": "plain"}, "langgraph",
     "--orchestrator"),
    ([], {"SELFCORRECT_ORCHESTRATOR": "langgraph"}, "langgraph", "SELFCORRECT_ORCHESTRATOR"),
    ([], {}, "plain", "default"),
])
def test_the_orchestrator_is_a_flag_then_a_variable_then_plain(
        argv: list[str], environ: dict[str, str], value: str, source: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from selfcorrect_action import cli

    for row in settings.SETTINGS:
        if row.variable:
            monkeypatch.delenv(row.variable, raising=False)
    for name, text in environ.items():
        monkeypatch.setenv(name, text)
    resolved = cli._resolved_settings(cli.build_parser().parse_args(["config", *argv]))
    assert (resolved.settings.orchestrator, resolved.sources["orchestrator"]) == (value, source)


def test_a_bad_orchestrator_variable_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UsageError, match="SELFCORRECT_ORCHESTRATOR: expected one of plain, "
                                         "langgraph, got 'airflow'"):
        settings.resolve({"SELFCORRECT_ORCHESTRATOR": "airflow"}, {})


def test_without_the_extra_langgraph_says_how_to_install_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "langgraph.graph", None)  # as if not installed
    spec = tmp_path / "hello.yml"
    spec.write_text(json.dumps(SPEC))
    replay = write_replay(tmp_path / "replay.jsonl", PROMPT, list(ANSWERS))  # type: ignore[arg-type]
    code = main(["run", str(spec), "--replay", str(replay), "--orchestrator", "langgraph",
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert "--orchestrator langgraph needs the langgraph extra" in err
    assert "pip install 'selfcorrect-action[langgraph]'" in err
    assert not (tmp_path / "out" / "run.json").exists()


def test_an_open_session_hands_out_the_steps_deps(tmp_path: Path) -> None:
    """What docs/langgraph.md's embedding builds the graph's nodes from."""
    from selfcorrect_action.runs.session import RunSession

    run = prepared(tmp_path, orchestrator="plain")
    with RunSession(run.models, run.settings, limits=run.limits, environ={}, secrets=[],
                    engine=says("hello\n")) as session:
        assert session.deps.work_root == session.work_root and session.deps.llm is session.llm
