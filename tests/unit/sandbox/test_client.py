"""The sandbox client over a fake engine: one container per execution, always removed, the
runtime checked before use, orphans reaped at start. (tests/integration and tests/security
run the same client against real Docker.)"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.errors import SandboxError, SandboxUnavailable
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.config import LABEL, LABEL_EXPIRES, LABEL_OWNER, LABEL_SESSION
from selfcorrect_action.sandbox.models import ExecutionRequest, InputFile
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


@pytest.mark.parametrize(("refill", "started_during_run", "left"),
                         [("on_take", 2, 1), ("after_run", 1, 1), ("never", 1, 0)])
def test_when_the_pool_starts_the_next_container(tmp_path: Path, refill: Any,
                                                 started_during_run: int, left: int) -> None:
    seen: list[int] = []

    def behaviour(header: dict[str, Any]) -> Reply:
        # A refill on take is started in the background: give it the time it needs to show.
        deadline = time.monotonic() + 0.5
        while len(engine.history) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        seen.append(len(engine.history))
        return Reply()

    engine = FakeEngine(behaviour=behaviour)
    with Sandbox(engine, "img", pool_size=1, refill=refill) as box:
        box.warm(REQUEST.limits)
        box.settle()
        box.run(REQUEST, tmp_path)
        box.settle()
        assert seen == [started_during_run], "containers started by the time the script ran"
        assert len(engine.containers) == left

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


def _warm_request(source: str) -> ExecutionRequest:
    return ExecutionRequest(argv=["python3", "--", "s.py"], timeout_s=5,
                            files=[InputFile(path="s.py", data=source.encode())])


def test_a_script_using_none_of_a_guessed_preload_does_not_wait_for_it(tmp_path: Path) -> None:
    """The data libraries preloaded for a first attempt whose script imports none of them:
    it starts cold at once, and says why; a set the caller fixed is honoured."""
    engine = FakeEngine()
    with Sandbox(engine, "img", pool_size=1) as box:
        box.warm(REQUEST.limits)
        box.settle()
        plain = box.run(_warm_request("print(1)"), tmp_path / "1")
        box.settle()
        box.run(_warm_request("import json\n"), tmp_path / "2")  # a bare warm interpreter
        box.settle()
        box.run(_warm_request("import scipy\n"), tmp_path / "3")
        box.settle()
        box.run(_warm_request("import scipy\n"), tmp_path / "4")  # it preloaded scipy
        box.settle()
    sent = [container.requests[0]["warm"] for container in engine.history[:4]]
    assert sent == [False, True, True, True]
    assert plain.start_note is not None and plain.start_note.startswith(
        "the script imports none of numpy, pandas, matplotlib, matplotlib.pyplot, which")
    with Sandbox(engine, "img", pool_size=1, preload_set=("numpy",)) as fixed:
        fixed.warm(REQUEST.limits)
        fixed.settle()
        fixed.run(_warm_request("print(1)"), tmp_path / "5")
    assert engine.history[-2].requests[0]["warm"] is True


def test_pooled_containers_preload_what_the_latest_script_imported(tmp_path: Path) -> None:
    engine = FakeEngine()
    with Sandbox(engine, "img", pool_size=1) as box:
        box.warm(REQUEST.limits)
        box.settle()
        box.run(_warm_request("import scipy\nimport json\n"), tmp_path / "1")
        box.settle()
        box.run(_warm_request("print(1)"), tmp_path / "2")
        box.settle()
    commands = [container.config["command"] for container in engine.history]
    assert commands[0][-2:] == ["--warm", "numpy,pandas,matplotlib,matplotlib.pyplot,PIL,"
                                          "PIL.Image"]
    assert commands[1][-2:] == ["--warm", "scipy"]  # made after the scipy script came
    # The script before it imported nothing worth it: an interpreter that imports nothing.
    assert commands[2][-2:] == ["--warm", ""]
    with Sandbox(engine, "img", pool_size=1, warm=False) as cold:
        cold.warm(REQUEST.limits)
        cold.settle()
        cold.run(_warm_request("import scipy"), tmp_path / "3")
    assert "--warm" not in engine.history[-1].config["command"]
    assert all(request["warm"] is False for request in engine.history[-2].requests)


def test_a_guessed_first_preload_is_used_then_replaced_by_the_scripts_imports(
        tmp_path: Path) -> None:
    """A run's guess (a function task that names no library: nothing) is the first pooled
    container's preload; unlike a fixed set, the scripts' own imports replace it."""
    engine = FakeEngine()
    with Sandbox(engine, "img", pool_size=1, preload_guess=()) as box:
        box.warm(REQUEST.limits)
        box.settle()
        box.run(_warm_request("import scipy\n"), tmp_path / "1")
        box.settle()
    commands = [container.config["command"] for container in engine.history]
    assert commands[0][-2:] == ["--warm", ""]
    assert commands[1][-2:] == ["--warm", "scipy"]
    # A bare warm interpreter serves a script warm: there is nothing of its to wait for.
    assert engine.history[0].requests[0]["warm"] is True


def test_a_warm_start_out_of_memory_holding_unused_preloads_is_run_again_cold(
        tmp_path: Path) -> None:
    def behaviour(header: dict[str, Any]) -> Reply:
        if header["warm"]:
            return Reply(report={"exit_code": None, "signal": 9, "oom_kills": 1,
                                 "start": "warm", "preloaded": ["numpy", "pandas"]})
        return Reply(report={"exit_code": 0, "stdout": {"text": "fits\n", "total_bytes": 5}})

    engine = FakeEngine(behaviour=behaviour)
    with Sandbox(engine, "img") as box:
        result = box.run(_warm_request("import pandas\nblock = bytearray(10**9)"), tmp_path)
        used_all = box.run(_warm_request("import numpy, pandas"), tmp_path / "all")
    assert result.exit_code == 0 and result.stdout.text == "fits\n" and result.start == "cold"
    assert result.start_note == ("run again cold: the warm start ran out of memory with numpy "
                                 "preloaded, which the script does not import")
    # Every preload imported by the script itself: the warm verdict is the script's own.
    assert used_all.oom_killed and used_all.start == "warm"


def test_a_warm_start_whose_runner_died_unreported_holding_unused_preloads_is_run_again_cold(
        tmp_path: Path) -> None:
    """gVisor ends the whole sandbox when it runs out of memory, and Docker does not always
    flag the container OOMKilled (exit status 137, OOMKilled false): a warm start that ended
    without its runner's report, holding preloads the script never imports, is decided by a
    cold start; a runner killed by stop() is not run again."""
    def behaviour(header: dict[str, Any]) -> Reply:
        if header["warm"]:
            return Reply(die=True)
        return Reply(report={"exit_code": 0, "stdout": {"text": "fits\n", "total_bytes": 5}})

    engine = FakeEngine(behaviour=behaviour)
    engine.state = {"ExitCode": 137, "OOMKilled": False}
    with Sandbox(engine, "img", pool_size=1, preload_set=("numpy", "pandas")) as box:
        box.warm(REQUEST.limits)
        box.settle()
        result = box.run(_warm_request("block = bytearray(10**9)"), tmp_path / "1")
        box.settle()
        used = box.run(_warm_request("import numpy, pandas"), tmp_path / "2")
    assert result.exit_code == 0 and result.stdout.text == "fits\n" and result.start == "cold"
    assert result.start_note == ("run again cold: the warm start ended without its runner's "
                                 "report with numpy, pandas preloaded, which the script does "
                                 "not import")
    # The script imports every preload: the warm start's ending is the script's own.
    assert used.exit_code is None and used.sandbox_note is not None

    stopping = FakeEngine(behaviour=lambda header: Reply(runs_s=30))
    with Sandbox(stopping, "img", pool_size=1, preload_set=("numpy",)) as box:
        box.warm(REQUEST.limits)
        box.settle()
        threading.Timer(0.3, box.stop).start()
        stopped = box.run(_warm_request("print(1)"), tmp_path / "3")
    assert stopped.sandbox_note is not None and stopped.start_note is None
    assert [container.killed for container in stopping.history[:1]] == [True]
    assert len([c for c in stopping.history if c.requests]) == 1, "nothing was run again"


def test_a_request_naming_one_path_twice_is_refused() -> None:
    """The runner writes the files in order: the second would replace the first unseen."""
    twice = [InputFile(path="sales.csv", data=b"a"), InputFile(path="./sales.csv", data=b"b")]
    with pytest.raises(ValueError, match=r"two files of the request have the path 'sales\.csv'"):
        ExecutionRequest(argv=["python3", "s.py"], files=twice)
