"""`selfcorrect check` with the real sandbox (issue 36), on real git repositories: a record
written by --update-lock for a hand-written script, then each kind of change: nothing
(nothing runs: no container created), an input that lost a column (fails, naming it), a
test file, a hand edit that still passes (accepted, then verified), the prompt (stale);
and a cancel that leaves no container behind. Under runc; the hand edit under runsc too."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path

import docker
import pytest

from selfcorrect_action.choices import Runtime
from selfcorrect_action.commands.check_cmd import check
from selfcorrect_action.errors import Interrupted
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.sandbox.config import LABEL_OWNER
from selfcorrect_action.verified.record import lock_path
from tests.check_repo import SCRIPT, SPEC, SPEC_TEXT, make_repo, run_check, write

# The Sandbox labels each container with its owner, this host and process: what this
# test's checks started, whatever else runs on the engine.
OWNER = f"{socket.gethostname()}:{os.getpid()}"


@pytest.fixture
def recorded(tmp_path: Path, sandbox_image: str, capsys: pytest.CaptureFixture[str]) -> Path:
    """A repository whose hand-written script has its first record (written by
    --update-lock from a passing re-verification), and its image identity cached."""
    repo = make_repo(tmp_path / "repo")
    code, [result] = run_check(repo, capsys, update_lock=True)
    assert (code, result["status"], result["lock"]) == (0, "passes", "written"), result
    assert result["reverified"] == "passed"
    return repo


def created(client: docker.DockerClient, since: float) -> int:
    """Containers this process created since `since` (engine events, by owner label)."""
    events = client.events(since=since, until=time.time() + 1, decode=True,
                           filters={"type": "container", "event": "create",
                                    "label": f"{LABEL_OWNER}={OWNER}"})
    return sum(1 for _ in events)


def test_a_first_record_then_a_verified_spec_runs_nothing(
        recorded: Path, capsys: pytest.CaptureFixture[str],
        docker_client: docker.DockerClient) -> None:
    record = json.loads((recorded / lock_path(SPEC)).read_text())
    assert record["models"] == {} and record["spec"] == SPEC
    assert record["contract"]["artifacts"][0]["columns"] == ["region", "total"]
    started = time.time()
    code, [result] = run_check(recorded, capsys, strict=True)
    assert (code, result["status"], result["no_docker"]) == (0, "verified", False)
    assert result["took_ms"] is None and result["sandbox_ms"] is None
    assert created(docker_client, started) == 0


def test_an_input_that_lost_a_column_fails_naming_the_column(
        recorded: Path, capsys: pytest.CaptureFixture[str],
        docker_client: docker.DockerClient) -> None:
    before = (recorded / lock_path(SPEC)).read_text()
    write(recorded, "data/sales.csv", "amount\n1\n2\n")
    started = time.time()
    code, [result] = run_check(recorded, capsys, update_lock=True)
    assert created(docker_client, started) > 0  # what the verified spec's 0 is measured by
    assert code == 1
    assert result["status"] == "fails" and result["reverified"] == "failed"
    assert result["changes"] == ["input data/sales.csv (changed)"]
    assert result["category"] == "contract"
    assert "missing 'region'" in str(result["evidence"])
    # --update-lock never accepts a failure.
    assert result["lock"] is None
    assert (recorded / lock_path(SPEC)).read_text() == before


def test_a_changed_test_file_is_reverified(
        recorded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(recorded, "tests/test_sales.py",
          "def test_the_totals_file_is_there():\n    assert open('totals.csv').read()\n")
    code, [result] = run_check(recorded, capsys)
    assert (code, result["status"]) == (0, "passes")
    assert result["changes"] == ["test tests/test_sales.py (changed)"]
    write(recorded, "tests/test_sales.py",
          "def test_totals():\n    assert 'west' in open('totals.csv').read()\n")
    code, [result] = run_check(recorded, capsys)
    assert (code, result["status"], result["reverified"]) == (1, "fails", "failed")
    assert "test_totals" in str(result["evidence"])


def test_a_hand_edit_that_still_passes_is_accepted_then_verified(
        recorded: Path, capsys: pytest.CaptureFixture[str], runtime: Runtime) -> None:
    first = json.loads((recorded / lock_path(SPEC)).read_text())
    write(recorded, "scripts/sales.py", "# totals per region, edited by hand\n" + SCRIPT)
    code, [result] = run_check(recorded, capsys, runtime=runtime)
    assert (code, result["status"], result["lock"]) == (0, "passes", None)
    assert result["changes"] == ["script scripts/sales.py (changed)"]
    code, [result] = run_check(recorded, capsys, update_lock=True, runtime=runtime)
    assert (code, result["status"], result["lock"]) == (0, "passes", "updated")
    updated = json.loads((recorded / lock_path(SPEC)).read_text())
    assert updated["run_id"] == first["run_id"] and updated["contract"] == first["contract"]
    assert updated["script"] != first["script"]
    code, [result] = run_check(recorded, capsys, runtime=runtime)
    assert (code, result["status"]) == (0, "verified")


def test_a_changed_prompt_is_stale_and_never_accepted(
        recorded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = (recorded / lock_path(SPEC)).read_text()
    write(recorded, SPEC, SPEC_TEXT.replace("total amount", "summed amount"))
    code, [result] = run_check(recorded, capsys, update_lock=True)
    assert (code, result["status"], result["reverified"]) == (0, "stale", "passed")
    assert result["changes"] == [f"prompt {SPEC} (changed)"]
    assert result["lock"] is None
    assert (recorded / lock_path(SPEC)).read_text() == before
    assert run_check(recorded, capsys, strict=True)[0] == 1


def test_a_cancel_during_a_reverification_leaves_no_container(
        recorded: Path, docker_client: docker.DockerClient) -> None:
    write(recorded, "scripts/sales.py", "import time\ntime.sleep(60)\n")
    token = CancelToken()
    started = time.monotonic()

    def cancel_once_running() -> None:
        while time.monotonic() - started < 60:
            if docker_client.containers.list(filters={
                    "label": f"{LABEL_OWNER}={OWNER}", "status": "running"}):
                time.sleep(1.0)  # the script is in its container
                token.cancel()
                return
            time.sleep(0.1)

    helper = threading.Thread(target=cancel_once_running)
    helper.start()
    try:
        with pytest.raises(Interrupted):
            check([], cwd=recorded, environ=os.environ, cancel=token)
    finally:
        helper.join()
    assert time.monotonic() - started < 30  # the 60 s script was not waited for
    assert docker_client.containers.list(all=True, filters={
        "label": f"{LABEL_OWNER}={OWNER}"}) == []
