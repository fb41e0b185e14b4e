"""The sandbox client over a fake engine: one container per execution, always removed, the
runtime checked before use, orphans reaped at start. (tests/integration and tests/security
run the same client against real Docker.)"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.errors import SandboxError, SandboxUnavailable, UsageError
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.config import LABEL, LABEL_EXPIRES, LABEL_OWNER, LABEL_SESSION
from selfcorrect_action.sandbox.models import ExecutionRequest, InputFile, Limits
from tests.fakes.fake_engine import FakeEngine, Reply

REQUEST = ExecutionRequest(argv=["python3", "s.py"], files=[InputFile(path="s.py", data=b"1")],
                           timeout_s=5)


def test_an_execution_returns_the_report_and_its_files(tmp_path: Path) -> None:
    engine = FakeEngine(behaviour=lambda header: Reply(
        report={"exit_code": 0, "stdout": {"text": "hi\n", "total_bytes": 3}},
        files={"out.txt": b"made"}))
    with Sandbox(engine, "img") as box:
        result = box.run(REQUEST, tmp_path)
        box.settle()
    assert result.exit_code == 0 and result.stdout.text == "hi\n"
    assert [a.path for a in result.artifacts] == ["out.txt"]
    assert (tmp_path / "out.txt").read_bytes() == b"made"
    assert engine.containers == {}, "the used container is removed"


def test_the_container_is_labelled_for_its_session_and_owner(tmp_path: Path) -> None:
    engine = FakeEngine()
    with Sandbox(engine, "img") as box:
        box.run(REQUEST, tmp_path)
        box.settle()
    labels = engine.history[0].config["labels"]
    assert labels[LABEL] == "1" and labels[LABEL_SESSION] == box.session
    assert labels[LABEL_OWNER] == box.owner and ":" in box.owner
    assert float(labels[LABEL_EXPIRES]) > time.time()


def test_a_runner_that_dies_is_a_broken_run_not_a_crash(tmp_path: Path) -> None:
    engine = FakeEngine(behaviour=lambda header: Reply(die=True))
    engine.state = {"ExitCode": 137, "OOMKilled": True}
    with Sandbox(engine, "img") as box:
        result = box.run(REQUEST, tmp_path)
    assert result.oom_killed and result.sandbox_note and "ran out of memory" in result.sandbox_note


def test_a_missing_runtime_is_refused_before_any_container(tmp_path: Path) -> None:
    engine = FakeEngine(runtimes={"runc": []})
    with Sandbox(engine, "img") as box, pytest.raises(SandboxUnavailable, match="runsc"):
        box.run(REQUEST.model_copy(update={"runtime": "runsc"}), tmp_path)
    assert engine.containers == {} and engine.removed == []


def test_open_network_under_a_no_network_runtime_is_bad_usage(tmp_path: Path) -> None:
    engine = FakeEngine()
    request = REQUEST.model_copy(update={"runtime": "runsc",
                                         "limits": Limits(network="open")})
    with Sandbox(engine, "img") as box, pytest.raises(UsageError, match="network: open"):
        box.run(request, tmp_path)


def test_start_reaps_expired_orphans_only(tmp_path: Path) -> None:
    engine = FakeEngine()
    old = engine.start_container({"labels": {LABEL: "1", LABEL_EXPIRES: "1"}})
    young = engine.start_container({"labels": {LABEL: "1", LABEL_EXPIRES: str(time.time() + 99)}})
    stranger = engine.start_container({"labels": {"other": "1"}})
    engine.containers[old.id].status = "exited"
    with Sandbox(engine, "img"):
        pass
    assert engine.removed == [old.id]
    assert {young.id, stranger.id} <= set(engine.containers)
    for started in (old, young, stranger):  # started here, not by the Sandbox: ours to close
        started.socket.close()


def test_a_failed_start_propagates_our_error(tmp_path: Path) -> None:
    engine = FakeEngine()
    engine.fail_next_start = SandboxUnavailable("image missing", hint="build it")
    with Sandbox(engine, "img") as box, pytest.raises(SandboxUnavailable, match="image missing"):
        box.run(REQUEST, tmp_path)


def test_the_pool_serves_a_prestarted_container(tmp_path: Path) -> None:
    engine = FakeEngine()
    with Sandbox(engine, "img", pool_size=1) as box:
        box.warm(REQUEST.limits)
        box.settle()
        warmed = set(engine.containers)
        assert len(warmed) == 1
        box.run(REQUEST, tmp_path)
        box.settle()
        assert warmed & set(engine.removed), "the execution used the warm container"
        assert len(engine.containers) == 1, "and the pool was refilled"
    assert engine.containers == {}, "closing destroys what the pool still held"


def test_stop_kills_the_running_script_and_refuses_the_next(tmp_path: Path) -> None:
    engine = FakeEngine(behaviour=lambda header: Reply(runs_s=30))
    with Sandbox(engine, "img") as box:
        threading.Timer(0.3, box.stop).start()
        started = time.monotonic()
        result = box.run(REQUEST, tmp_path)
        assert time.monotonic() - started < 10, "the script's 30 s were not waited for"
        assert engine.history[0].killed and result.sandbox_note
        with pytest.raises(SandboxError, match="the sandbox was stopped"):
            box.run(REQUEST, tmp_path)
        box.settle()
    assert len(engine.history) == 1, "no container was made for the refused run"
    assert engine.containers == {}


def test_a_stop_while_the_container_is_made_is_not_lost(tmp_path: Path) -> None:
    """The stop found nothing running yet: the container is refused once it exists."""
    engine = FakeEngine(behaviour=lambda header: Reply(runs_s=30))
    with Sandbox(engine, "img") as box:
        start = engine.start_container

        def slow_start(config: Any) -> Any:
            box.stop()  # arrives while the container is being made
            return start(config)

        engine.start_container = slow_start  # type: ignore[method-assign]
        with pytest.raises(SandboxError, match="stopped"):
            box.run(REQUEST, tmp_path)
        box.settle()
    assert engine.containers == {} and len(engine.history) == 1
    assert engine.history[0].requests == [], "the script never ran"
