"""Resumable runs (issue 37) through the one pipeline, without Docker: the model is the
OpenAI stand-in on 127.0.0.1, which counts every request; the sandbox is played at the
Engine seam. Every run keeps its checkpoint folder in the history folder; `--resume` goes
on from it paying only for the calls the earlier run had not made; a request that differs
from the recording goes live there; a spent run given more attempts goes on; and every
refusal says what to do instead."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action import __version__
from selfcorrect_action.errors import UsageError
from selfcorrect_action.llm.recording import read_recording
from selfcorrect_action.loop.state import RunState, Status, Strategy
from selfcorrect_action.report.audit import audit_markdown as render_audit
from selfcorrect_action.runs import pipeline
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.runs.checkpoint import (
    CHECKPOINT_FILE,
    EXCHANGES_FILE,
    RESUMABLE_DIR,
    read_checkpoint,
)
from selfcorrect_action.runs.pipeline import Connections
from selfcorrect_action.runs.session import RunEvents
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.spec import load_spec
from tests.fakes.fake_engine import FakeEngine, printing
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.openai_server import Reply as ModelReply
from tests.fakes.replays import fenced

IMAGE = "selfcorrect-sandbox:fake"
SECRET = "canary-5ecret-value-0042"
SPEC: dict[str, Any] = {
    "prompt": "Print hello.", "output": "hello.py",
    "budget": {"patch_attempts": 1, "rethink_attempts": 0},
    "contract": {"artifacts": [], "stdout_contains": ["hello"], "timeout_s": 30,
                 "memory_mb": 256, "success_criteria": ["it says hello"]},
}
GOODBYE = ModelReply(fenced("print('goodbye')"))
HELLO = ModelReply(fenced("print('hello')"))
# Other wrong answers: the same code twice is a cycle, not run again.
GOODBYE_2 = ModelReply(fenced("print('good' + 'bye')"))
GOODBYE_3 = ModelReply(fenced("print('bye')"))
PASS = ModelReply(json.dumps({"verdict": "pass", "reasoning": "it says hello"}))
# An uninterrupted run (its contract is whole: no plan call): attempt 1 (prints goodbye:
# the contract fails, no judge), attempt 2 (prints hello), the judge's pass.
WHOLE = (GOODBYE, HELLO, PASS)


def engine(*outputs: str) -> FakeEngine:
    """The scripts print `outputs` in turn (the last one from then on)."""
    return printing(*outputs, image=IMAGE)


def prepared(tmp_path: Path, server: FakeOpenAIServer, spec: dict[str, Any] | None = None,
             **chosen: Any) -> pipeline.PreparedRun:
    path = tmp_path / "hello.yml"
    path.write_text(json.dumps(spec or SPEC))
    settings = RunSettings(model="openai/m", api_base=server.api_base, sandbox_image=IMAGE,
                           history=tmp_path / "history", **chosen)
    return pipeline.prepare(load_spec(path, root=tmp_path), settings, environ={},
                            secrets=[SECRET])


def run(prepared_run: pipeline.PreparedRun, outputs: tuple[str, ...], *,
        cancel: CancelToken | None = None,
        on_state: Callable[[RunState], None] | None = None) -> pipeline.RunOutcome[None]:
    events = RunEvents(on_state=on_state) if on_state else None
    return pipeline.run(prepared_run, environ={}, secrets=[SECRET], cancel=cancel,
                        events=events, connections=Connections(engine=engine(*outputs)))


def kept(tmp_path: Path, run_id: str) -> Path:
    return tmp_path / "history" / RESUMABLE_DIR / run_id


def cancelled_after_attempt(tmp_path: Path, server: FakeOpenAIServer, attempts: int,
                            **chosen: Any) -> RunState:
    token = CancelToken()

    def stop(state: RunState) -> None:
        if len(state.attempts) >= attempts:
            token.cancel()

    outcome = run(prepared(tmp_path, server, **chosen), ("goodbye\n", "hello\n"),
                  cancel=token, on_state=stop)
    assert outcome.state.status is Status.CANCELLED
    return outcome.state


def test_a_cancelled_run_resumed_pays_only_for_the_calls_it_had_not_made(
        tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        server.script(*WHOLE[:1])
        first = cancelled_after_attempt(tmp_path, server, 1)
        assert len(server.requests) == 1  # attempt 1
        folder = kept(tmp_path, first.run_id)
        checkpoint = read_checkpoint(folder)
        assert checkpoint.header.ended is not None
        assert checkpoint.header.ended.status is Status.CANCELLED
        assert len(read_recording(folder / EXCHANGES_FILE).exchanges) == 1

        server.script(*WHOLE[1:])
        again = prepared(tmp_path, server, resume=first.run_id)
        # Attempt 1 is executed again (goodbye), then repaired and judged.
        done = run(again, ("goodbye\n", "hello\n"))
    assert done.state.status is Status.PASSED and done.exit_code == 0
    assert len(server.requests) == 3 and server.overruns == 0  # each call made once
    assert [a.strategy for a in done.state.attempts] == [Strategy.INITIAL, Strategy.PATCH]
    (note,) = done.state.resumes
    assert (note.attempts_before, note.reexecuted, note.previous_status) == (
        1, 1, Status.CANCELLED)
    assert note.earlier.llm_calls == 1 and done.state.usage.llm_calls == 3
    assert not folder.exists()  # a run that passed keeps no checkpoint
    audit = render_audit(done.state, secrets=[])
    assert "## Resumed" in audit and "attempt 1 was executed again here" in audit
    assert "Spent by the earlier run: 1 model call(s)" in audit
    assert "New after the resume: 2 model call(s)" in audit


def whole_run_with_every_step_kept(tmp_path: Path, server: FakeOpenAIServer
                                   ) -> tuple[RunState, list[dict[str, Any]], str]:
    """An uninterrupted run, with its checkpoint as it was after every step and its
    recording as it was at the end (a run that passed removes both)."""
    server.script(*WHOLE)
    saved: list[dict[str, Any]] = []
    recording = ""
    prepared_run = prepared(tmp_path, server)
    folder = kept(tmp_path, prepared_run.state.run_id)

    def keep(state: RunState) -> None:
        nonlocal recording
        saved.append(json.loads((folder / CHECKPOINT_FILE).read_text()))
        if (folder / EXCHANGES_FILE).exists():
            recording = (folder / EXCHANGES_FILE).read_text()

    outcome = run(prepared_run, ("goodbye\n", "hello\n"), on_state=keep)
    assert outcome.state.status is Status.PASSED
    assert len(server.requests) == 3
    return outcome.state, saved, recording


def as_killed(tmp_path: Path, checkpoint: dict[str, Any], recording: str) -> Path:
    """The folder a run killed outright after that checkpoint leaves: the state of its last
    finished step, and every exchange it had recorded (some past that state)."""
    folder = kept(tmp_path, checkpoint["run_id"])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / CHECKPOINT_FILE).write_text(json.dumps(checkpoint))
    (folder / EXCHANGES_FILE).write_text(recording)
    return folder


def test_a_run_killed_after_its_calls_but_before_its_state_plays_them_back(
        tmp_path: Path) -> None:
    """The calls a killed step made are in the recording: the resumed run asks the same
    and pays nothing; the attempt it continues from is executed again all the same."""
    with FakeOpenAIServer() as server:
        whole, saved, recording = whole_run_with_every_step_kept(tmp_path, server)
        after_attempt_1 = saved[1]  # on_state: after the plan, after attempt 1, ...
        assert len(after_attempt_1["state"]["attempts"]) == 1
        as_killed(tmp_path, after_attempt_1, recording)
        again = prepared(tmp_path, server, resume=whole.run_id)
        done = run(again, ("goodbye\n", "hello\n"))
    assert len(server.requests) == 3  # none since the whole run
    assert done.state.status is Status.PASSED
    (note,) = done.state.resumes
    assert note.previous_status is Status.RUNNING  # killed: it said nothing
    assert note.recorded_calls == 2 and note.played_back.llm_calls == 2
    assert done.state.usage.tokens == whole.usage.tokens  # every call counted once
    calls = done.state.attempts[1].llm_calls
    assert [(call.purpose, call.resumed) for call in calls] == [("repair", True),
                                                                 ("judge", True)]
    assert "from the earlier run" in render_audit(done.state, secrets=[])


def test_a_request_that_differs_from_the_recording_goes_live_there(tmp_path: Path) -> None:
    """Resumed with other guidance, the repair asks something else: from there the model
    is asked, and the recording's unplayed rest is cut off before the new answers."""
    with FakeOpenAIServer() as server:
        whole, saved, recording = whole_run_with_every_step_kept(tmp_path, server)
        folder = as_killed(tmp_path, saved[1], recording)
        server.script(HELLO, PASS)
        again = prepared(tmp_path, server, resume=whole.run_id, guidance="say it politely")
        done = run(again, ("goodbye\n", "hello\n"))
    assert done.state.status is Status.PASSED
    assert len(server.requests) == 5 and server.overruns == 0  # the repair and judge again
    assert "say it politely" in json.dumps(server.requests[3].body)
    (note,) = done.state.resumes
    assert note.played_back.llm_calls == 0
    assert not folder.exists()


def test_a_resumed_run_killed_again_keeps_the_recording_it_had_not_played(
        tmp_path: Path) -> None:
    """Cancelled again before it reached the recorded calls, the resumed run leaves them in
    its recording: a third run still plays them back."""
    with FakeOpenAIServer() as server:
        whole, saved, recording = whole_run_with_every_step_kept(tmp_path, server)
        folder = as_killed(tmp_path, saved[1], recording)
        token = CancelToken()
        token.cancel()
        second = run(prepared(tmp_path, server, resume=whole.run_id), ("goodbye\n",),
                     cancel=token)
        assert second.state.status is Status.CANCELLED
        assert len(read_recording(folder / EXCHANGES_FILE).exchanges) == 3
        done = run(prepared(tmp_path, server, resume=whole.run_id), ("goodbye\n", "hello\n"))
    assert done.state.status is Status.PASSED and len(server.requests) == 3


def test_a_spent_run_given_two_more_attempts_passes_on_the_third(tmp_path: Path) -> None:
    spec = {**SPEC, "budget": {"patch_attempts": 1, "rethink_attempts": 0}}
    with FakeOpenAIServer() as server:
        server.script(GOODBYE, GOODBYE_2)
        first = run(prepared(tmp_path, server, spec), ("goodbye\n",))
        assert first.state.status is Status.EXHAUSTED and len(first.state.attempts) == 2
        with pytest.raises(UsageError, match="ended exhausted") as refused:
            prepared(tmp_path, server, spec, resume=first.state.run_id)
        assert refused.value.hint is not None and "--more-attempts" in refused.value.hint

        server.script(GOODBYE_3, HELLO, PASS)
        again = prepared(tmp_path, server, spec, resume=first.state.run_id, more_attempts=2)
        assert again.state.max_attempts == 4
        # Attempt 2 executed again (goodbye), attempt 3 still wrong, attempt 4 passes.
        done = run(again, ("goodbye\n", "goodbye\n", "hello\n"))
    assert done.state.status is Status.PASSED
    assert [a.index for a in done.state.attempts] == [1, 2, 3, 4]
    assert len(server.requests) == 2 + 3 and server.overruns == 0
    assert done.state.resumes[0].more_attempts == 2


def test_a_spent_run_given_one_more_attempt_passes_on_the_third(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        server.script(GOODBYE, GOODBYE_2)
        first = run(prepared(tmp_path, server), ("goodbye\n",))
        server.script(HELLO, PASS)
        done = run(prepared(tmp_path, server, resume=first.state.run_id, more_attempts=1),
                   ("goodbye\n", "hello\n"))
    assert done.state.status is Status.PASSED and len(done.state.attempts) == 3
    # A contract missed again after a patch is rethought: either strategy may use the one.
    assert done.state.attempts[2].strategy is Strategy.RETHINK
    assert done.state.usage.rethink_attempts == 1 > done.state.spec.budget.rethink_attempts


def test_a_run_that_passed_cannot_be_resumed(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        whole, saved, recording = whole_run_with_every_step_kept(tmp_path, server)
        as_killed(tmp_path, saved[-1], recording)  # as if its folder had stayed
        with pytest.raises(UsageError, match="passed: there is nothing to resume"):
            prepared(tmp_path, server, resume=whole.run_id)


@pytest.mark.parametrize("change", ["prompt", "budget", "input"])
def test_a_checkpoint_of_another_spec_is_refused(tmp_path: Path, change: str) -> None:
    with FakeOpenAIServer() as server:
        server.script(*WHOLE[:1])
        (tmp_path / "data.csv").write_text("a\n1\n")
        spec = {**SPEC, "inputs": ["data.csv"]}
        token = CancelToken()
        outcome = run(prepared(tmp_path, server, spec), ("goodbye\n",), cancel=token,
                      on_state=lambda state: token.cancel() if state.attempts else None)
        first = outcome.state
        if change == "prompt":
            spec = {**spec, "prompt": "Print hello twice."}
        elif change == "budget":
            spec = {**spec, "budget": {"patch_attempts": 3, "rethink_attempts": 0}}
        else:
            (tmp_path / "data.csv").write_text("a\n2\n")
        expected = "input files changed" if change == "input" else "another task spec"
        with pytest.raises(UsageError, match=expected):
            prepared(tmp_path, server, spec, resume=first.run_id)


def _cancelled_folder(tmp_path: Path, server: FakeOpenAIServer, **chosen: Any
                      ) -> tuple[RunState, Path]:
    server.script(*WHOLE[:1])
    state = cancelled_after_attempt(tmp_path, server, 1, **chosen)
    return state, kept(tmp_path, state.run_id)


def test_a_checkpoint_of_another_version_or_edited_is_refused(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        first, folder = _cancelled_folder(tmp_path, server)
        original = (folder / CHECKPOINT_FILE).read_text()
        data = json.loads(original)

        (folder / CHECKPOINT_FILE).write_text(json.dumps({**data,
                                                          "selfcorrect_version": "0.0.1"}))
        with pytest.raises(UsageError, match=f"made by selfcorrect 0.0.1, this is "
                                             f"{__version__}"):
            prepared(tmp_path, server, resume=first.run_id)

        edited = {**data, "state": {**data["state"], "run_id": "someone-else"}}
        (folder / CHECKPOINT_FILE).write_text(json.dumps(edited))
        with pytest.raises(UsageError, match="not the one its header describes"):
            prepared(tmp_path, server, resume=first.run_id)

        (folder / CHECKPOINT_FILE).write_text(original[: len(original) // 2])
        with pytest.raises(UsageError, match="not a checkpoint"):
            prepared(tmp_path, server, resume=first.run_id)


def test_a_recording_cut_short_or_edited_since_its_checkpoint_is_refused(
        tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        first, folder = _cancelled_folder(tmp_path, server)
        recording = (folder / EXCHANGES_FILE).read_text()
        lines = recording.splitlines(keepends=True)

        (folder / EXCHANGES_FILE).write_text("".join(lines[:-1]))
        with pytest.raises(UsageError, match="it was cut short"):
            prepared(tmp_path, server, resume=first.run_id)

        (folder / EXCHANGES_FILE).write_text(recording.replace("goodbye", "hello"))
        with pytest.raises(UsageError, match="it was edited since"):
            prepared(tmp_path, server, resume=first.run_id)

        # A last line torn mid-write by a kill is no edit: it is left out.
        (folder / EXCHANGES_FILE).write_text(recording + '{"index": 1, "requ')
        assert prepared(tmp_path, server, resume=first.run_id).state.resumes


def test_a_network_contract_is_not_executed_again_silently(tmp_path: Path) -> None:
    spec = {**SPEC, "contract": {**SPEC["contract"], "network": "open"}}
    with FakeOpenAIServer() as server:
        server.script(*WHOLE[:1])
        token = CancelToken()
        outcome = run(prepared(tmp_path, server, spec), ("goodbye\n",), cancel=token,
                      on_state=lambda state: token.cancel() if state.attempts else None)
        with pytest.raises(UsageError, match="opens the network") as refused:
            prepared(tmp_path, server, spec, resume=outcome.state.run_id)
    assert refused.value.hint is not None and "fresh run" in refused.value.hint


def test_a_checkpoint_bound_to_another_approval_is_refused(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        first, folder = _cancelled_folder(tmp_path, server, approval_sha256="a" * 64)
        assert read_checkpoint(folder).header.approval_sha256 == "a" * 64
        with pytest.raises(UsageError, match="another approved task text"):
            prepared(tmp_path, server, resume=first.run_id, approval_sha256="b" * 64)
        assert prepared(tmp_path, server, resume=first.run_id,
                        approval_sha256="a" * 64).state.resumes


def test_an_unknown_run_and_an_ambiguous_prefix_say_what_to_do(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        with pytest.raises(UsageError, match="no checkpoint of that run"):
            prepared(tmp_path, server, resume="abcdef123456")
        first, folder = _cancelled_folder(tmp_path, server)
        shutil.copytree(folder, folder.with_name(first.run_id[:6] + "zzzzzz"))
        with pytest.raises(UsageError, match="2 runs' ids start so"):
            prepared(tmp_path, server, resume=first.run_id[:6])
        # By its folder, and by a unique start of its id.
        assert prepared(tmp_path, server, resume=str(folder)).state.run_id == first.run_id
        assert prepared(tmp_path, server,
                        resume=first.run_id[:8]).state.run_id == first.run_id


def test_no_secret_reaches_a_checkpoint(tmp_path: Path) -> None:
    """The run's secrets, echoed by the model and the script, are redacted in both files."""
    leaky = ModelReply(fenced(f"print('goodbye {SECRET}')"))
    with FakeOpenAIServer() as server:
        server.script(leaky)
        spec = {**SPEC, "prompt": f"Print hello. The key is {SECRET}."}
        token = CancelToken()
        outcome = run(prepared(tmp_path, server, spec), (f"goodbye {SECRET}\n",),
                      cancel=token,
                      on_state=lambda state: token.cancel() if state.attempts else None)
    folder = kept(tmp_path, outcome.state.run_id)
    for name in (CHECKPOINT_FILE, EXCHANGES_FILE):
        text = (folder / name).read_text()
        assert SECRET not in text and "goodbye" in text


def test_recording_can_be_switched_off(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        _, folder = _cancelled_folder(tmp_path, server, record_exchanges=False)
    assert (folder / CHECKPOINT_FILE).is_file() and not (folder / EXCHANGES_FILE).exists()
    assert read_checkpoint(folder).header.recording is None


def test_a_run_without_a_history_folder_says_it_cannot_be_resumed(tmp_path: Path) -> None:
    said: list[tuple[str, str]] = []
    with FakeOpenAIServer() as server:
        server.script(*WHOLE)
        path = tmp_path / "hello.yml"
        path.write_text(json.dumps(SPEC))
        settings = RunSettings(model="openai/m", api_base=server.api_base,
                               sandbox_image=IMAGE)
        ready = pipeline.prepare(load_spec(path), settings, environ={}, secrets=[])
        done: pipeline.RunOutcome[None] = pipeline.run(
            ready, environ={}, secrets=[],
            events=RunEvents(on_event=lambda *e: said.append(e)),
            connections=Connections(engine=engine("goodbye\n", "hello\n")))
    assert done.state.status is Status.PASSED
    assert any("cannot be resumed" in message for step, message in said if step == "resume")


def test_the_command_line_gives_more_only_with_resume(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from selfcorrect_action.cli import build_parser, main

    path = tmp_path / "hello.yml"
    path.write_text(json.dumps(SPEC))
    assert main(["run", str(path), "--more-attempts", "2", "--history",
                 str(tmp_path / "history")]) == 2
    assert "--more-attempts goes with --resume RUN" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", str(path), "--resume", "x", "--more-attempts", "0"])
    assert "expected a whole number of at least 1" in capsys.readouterr().err
    from selfcorrect_action.cli import _resolved_settings

    args = build_parser().parse_args(["run", str(path), "--no-record-exchanges", "--resume",
                                      "abc", "--more-tokens", "5000", "--more-usd", "0.25"])
    chosen = _resolved_settings(args).settings
    assert (chosen.record_exchanges, chosen.resume, chosen.more_tokens, chosen.more_usd) == (
        False, "abc", 5000, 0.25)
