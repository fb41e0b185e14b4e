"""Issue 23's proof that the loop does not depend on what drives it: every case of the
known-failure gallery, answered by a replay and run in the real sandbox, gives the same
run.json under the plain loop and under LangGraph (ids, times, durations and the
orchestrator's name aside); and a LangGraph run killed outright (SIGKILL) resumes from its
checkpoints, its replay where it stopped, to the run.json of a run never killed. (Every
example's replay: tests/e2e/test_run_examples.py.)"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import docker
import pytest
from ruamel.yaml import YAML

from selfcorrect_action.cli import main
from selfcorrect_action.runs import pipeline
from selfcorrect_action.runs.publish import run_to_folder
from selfcorrect_action.runs.settings import from_environment
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.config import LABEL_OWNER
from selfcorrect_action.sandbox.engine_api import Engine
from selfcorrect_action.spec import load_spec_text
from tests.fakes.replays import fenced, write_replay
from tests.orchestration import ORCHESTRATORS, comparable
from tests.unit.evaluation.test_gallery import CASES, Case

ROOT = Path(__file__).parents[2]
PLAN = json.dumps({"approach": "as the task says", "contract": {}})


@pytest.fixture(scope="module")
def shared_sandbox(docker_engine: Engine, sandbox_image: str) -> Iterator[Sandbox]:
    """One warm sandbox for every gallery run (the benchmark shares one the same way)."""
    with Sandbox(docker_engine, sandbox_image, pool_size=1) as box:
        yield box


def gallery_spec(case: Case) -> str:
    """The case's task as a spec: its prompt and contract, one attempt (the gallery's script
    fails; reflect then ends the run on the retry budget), no judge."""
    spec = {"prompt": case.prompt, "output": f"scripts/{case.script.name}", "judge": False,
            "budget": {"patch_attempts": 0, "rethink_attempts": 0},
            "contract": case.contract.model_dump(mode="json", exclude_defaults=True)}
    text = StringIO()
    YAML().dump(spec, text)
    return text.getvalue()


def run_json(case: Case, orchestrator: str, box: Sandbox, tmp_path: Path) -> dict[str, Any]:
    replay = write_replay(tmp_path / "replay.jsonl", case.prompt, [
        ("plan", PLAN), ("generate", fenced(case.script.read_text()))])
    loaded = load_spec_text(gallery_spec(case), f"{case.id}.yml", root=tmp_path,
                            name=case.script.stem)
    settings = from_environment({}, replay=replay, orchestrator=orchestrator,
                                checkpoints=tmp_path / "checkpoints.sqlite", keep_history=False)
    prepared = pipeline.prepare(loaded, settings, environ={}, secrets=[])
    out = tmp_path / orchestrator
    run_to_folder(prepared, out, environ={}, secrets=[],
                  connections=pipeline.Connections(sandbox=box))
    data: dict[str, Any] = json.loads((out / "run.json").read_text())
    assert data["orchestrator"] == orchestrator
    return data


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_every_gallery_case_ends_the_same_under_both_orchestrators(
        case: Case, shared_sandbox: Sandbox, tmp_path: Path) -> None:
    plain, graph = (run_json(case, name, shared_sandbox, tmp_path) for name in ORCHESTRATORS)
    assert plain["status"] == "exhausted" and len(plain["attempts"]) == 1
    assert plain["attempts"][0]["verdict"]["category"] == case.category.value
    assert comparable(graph) == comparable(plain)


EXAMPLE = ["examples/tasks/missing_package.yml", "--replay",
           "examples/replays/missing_package.jsonl"]  # two attempts, then the judge
KILL_AT = "execute attempt 2:"  # attempt 2's code is made, and saved: its run is not
RUN_ID = re.compile(r"resume run ([0-9a-f]+):")


def killed_midway(checkpoints: Path, out: Path, home: Path,
                  client: docker.DockerClient) -> str:
    """`selfcorrect run --orchestrator langgraph` in its own process, SIGKILLed when its
    second attempt starts running; the run id it printed. The container it was running
    the attempt in is removed (nothing was left to do so)."""
    argv = [sys.executable, "-u", "-m", "selfcorrect_action", "run", *EXAMPLE,
            "--orchestrator", "langgraph", "--checkpoints", str(checkpoints),
            "--out", str(out)]
    run_id, seen = "", []
    with subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, env={**os.environ, "HOME": str(home)}) as child:
        try:
            assert child.stderr is not None
            for line in child.stderr:
                seen.append(line)
                found = RUN_ID.search(line)
                run_id = found.group(1) if found else run_id
                if KILL_AT in line:
                    child.send_signal(signal.SIGKILL)
                    break
        finally:
            child.kill()
            child.wait(timeout=60)
            remove_containers_of(child.pid, client)
    assert child.returncode == -signal.SIGKILL, "".join(seen)
    assert run_id, "".join(seen)
    return run_id


def remove_containers_of(pid: int, client: docker.DockerClient) -> None:
    owner = f"{socket.gethostname()}:{pid}"
    # Another test's reaper may remove a dead owner's containers while we list or remove them.
    for container in client.containers.list(
            all=True, filters={"label": f"{LABEL_OWNER}={owner}"}, ignore_removed=True):
        with contextlib.suppress(docker.errors.NotFound):
            container.remove(force=True)


def test_a_killed_langgraph_run_resumes_its_replay_to_the_same_run_json(
        sandbox_image: str, docker_client: docker.DockerClient, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    checkpoints = tmp_path / "checkpoints.sqlite"
    run_id = killed_midway(checkpoints, tmp_path / "killed", Path(os.environ["HOME"]),
                           docker_client)
    assert not (tmp_path / "killed" / "run.json").exists()  # it never got to write one

    code = main(["run", *EXAMPLE, "--orchestrator", "langgraph", "--checkpoints",
                 str(checkpoints), "--out", str(tmp_path / "resumed"), "--resume", run_id])
    said = capsys.readouterr().err
    assert code == 0, said
    # It went on at attempt 2's execution: no plan, no generation again (the judge's answer
    # came from where the replay stood: a replay played from its start would have answered
    # the judge with the plan and refused the run).
    assert "execute attempt 2:" in said and "plan " not in said and "generate " not in said
    whole = tmp_path / "whole"
    assert main(["run", *EXAMPLE, "--out", str(whole)]) == 0
    resumed = json.loads((tmp_path / "resumed" / "run.json").read_text())
    assert resumed["run_id"] == run_id
    # Attempt 2 was executed again from its saved code; the rest is the whole run's.
    assert [note["reexecuted"] for note in resumed.pop("resumes")] == [2]
    uninterrupted = json.loads((whole / "run.json").read_text())
    assert uninterrupted.pop("resumes") == []
    assert comparable(resumed) == comparable(uninterrupted)
