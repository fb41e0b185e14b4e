"""`selfcorrect mcp` driven by the MCP SDK's own client over stdio, the server in a
subprocess: the real loop (models played back from recordings), the real sandbox (runc).
One server serves the whole module, as one client's session would.

What a client relies on: the tools and their schemas; a task run to `passed` with progress
on the way; a script run through `exec`; validation problems located; a cancel that stops a
run with its reports written and no container left; runs queued behind the running one;
paths outside the root refused; the server's secrets kept out of results and sandboxes; a
malformed request answered with an error in the tool's terms while the server goes on
serving; runs kept in the history folder, where `selfcorrect history` lists them, and the
root (a git repository) left untouched.
"""

from __future__ import annotations

import json
import os
import queue
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent, TextResourceContents

from selfcorrect_action.api.results import ExecResult, RunResult, ValidationResult
from selfcorrect_action.llm.models import Purpose
from selfcorrect_action.report.run_json import load_run_json
from selfcorrect_action.sandbox.config import LABEL_OWNER
from tests.fakes.replays import fenced, write_replay

SECRET = f"mcp-e2e-{secrets.token_hex(12)}"
TOOLS = {"run_task", "repair", "start_run", "get_run", "cancel_run", "exec", "validate",
         "list_runs", "get_audit"}
EXAMPLES = Path(__file__).parents[2] / "examples"
CALC_PROMPT = ("mean() returns the wrong value: mean([2, 4, 6]) gives 3.0 instead of 4.\n"
               "Fix it without changing what the other functions do.")
HELLO: dict[str, Any] = {
    "prompt": "Print hello over MCP.", "output": "scripts/hello.py", "judge": False,
    "budget": {"patch_attempts": 1, "rethink_attempts": 0},
    "contract": {"artifacts": [], "stdout_contains": ["hello"], "timeout_s": 30,
                 "memory_mb": 256, "success_criteria": ["it says hello"]}}
SLOW: dict[str, Any] = {
    **HELLO, "prompt": "Wait a long while, then print hello.", "output": "slow.py",
    "contract": {**HELLO["contract"], "timeout_s": 120}}
PROMPT = "Print hello from a prompt over MCP."
PLAN = json.dumps({"approach": "print it", "contract": {
    "artifacts": [], "stdout_contains": ["hello"], "timeout_s": 30, "memory_mb": 256,
    "success_criteria": ["it prints hello"]}})
JUDGE = json.dumps({"verdict": "pass", "reasoning": "it prints hello", "unmet_criteria": []})
WAIT_S = 120.0


def _git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True,
                          text=True).stdout


def _commit_all(folder: Path) -> None:
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@invalid", "commit", "-qm", "start"]):
        _git(folder, *args)


def _root(root: Path) -> Path:
    (root / "tasks").mkdir(parents=True)
    (root / "data").mkdir()
    (root / "tasks" / "hello.yml").write_text(json.dumps(HELLO))
    (root / "tasks" / "slow.yml").write_text(json.dumps(SLOW))
    (root / "data" / "numbers.csv").write_text("n\n1\n2\n")
    hello: list[tuple[Purpose, str]] = [("generate", fenced("print('hello')"))]
    write_replay(root / "hello.jsonl", HELLO["prompt"], hello)
    write_replay(root / "slow.jsonl", SLOW["prompt"],
                 [("generate", fenced("import time\ntime.sleep(100)\nprint('hello')"))])
    # The model says the key back (an echo of what it was shown, say): no result may carry it.
    write_replay(root / "leaky.jsonl", HELLO["prompt"],
                 [("generate", fenced(f"print('hello')\nprint('key: {SECRET}')"))])
    write_replay(root / "prompt.jsonl", PROMPT, [
        ("plan", PLAN), ("generate", fenced("print('hello')")), ("judge", JUDGE)])
    # A repository to repair: the example's, committed, with its recorded replay.
    shutil.copytree(EXAMPLES / "repair" / "calc", root / "calc")
    _commit_all(root / "calc")
    shutil.copy(EXAMPLES / "replays" / "repair_calc.jsonl", root / "repair_calc.jsonl")
    (root.parent / "outside").mkdir()
    (root.parent / "outside" / "secret.txt").write_text("not the client's\n")
    (root / "leak.txt").symlink_to(root.parent / "outside" / "secret.txt")
    # The root is the user's repository, everything committed (calc/ is one of its own,
    # whose status the repair test reads): an MCP run must leave it as it was (issue 38).
    (root / ".git" / "info").mkdir(parents=True)
    (root / ".git" / "info" / "exclude").write_text("/calc/\n")
    _commit_all(root)
    return root


def _server_environment(home: Path) -> dict[str, str]:
    """What a client's config would pass: the provider key among the rest, and a HOME of
    the test's (the server keeps its runs in HOME's history folder)."""
    passed = {name: os.environ[name] for name in ("PATH", "DOCKER_HOST", "CI")
              if name in os.environ}
    return {**passed, "HOME": str(home), "SELFCORRECT_E2E_API_KEY": SECRET}


def _history(home: Path) -> Path:
    return home / ".local" / "share" / "selfcorrect"


@dataclass
class Client:
    portal: BlockingPortal
    session: ClientSession
    root: Path
    home: Path
    server_pid: int

    def run_folder(self, run_id: str) -> Path:
        """Where the server kept run `run_id`: in the history folder, one folder per root."""
        (folder,) = (_history(self.home) / "mcp-runs").glob(f"*/{run_id}")
        return folder

    def call(self, tool: str, arguments: dict[str, Any] | None = None,
             heard: list[str] | None = None) -> CallToolResult:
        async def progress(progress: float, total: float | None, message: str | None) -> None:
            assert heard is not None
            heard.append(message or "")

        async def call() -> CallToolResult:
            with anyio.fail_after(WAIT_S):
                result = await self.session.call_tool(
                    tool, arguments or {}, progress_callback=progress if heard is not None
                    else None)
            assert isinstance(result, CallToolResult)
            return result
        return self.portal.call(call)

    def structured(self, tool: str, arguments: dict[str, Any] | None = None,
                   heard: list[str] | None = None) -> dict[str, Any]:
        result = self.call(tool, arguments, heard)
        assert not result.is_error, _text(result)
        assert result.structured_content is not None
        assert json.loads(_text(result)) == result.structured_content
        return result.structured_content

    def cancel_once(self, tool: str, arguments: dict[str, Any], heard: str) -> list[str]:
        """Call `tool`, and cancel the call when a progress line contains `heard`."""
        lines: list[str] = []

        async def call() -> None:
            with anyio.fail_after(WAIT_S):
                async with anyio.create_task_group() as group:
                    async def progress(progress: float, total: float | None,
                                       message: str | None) -> None:
                        lines.append(message or "")
                        if heard in (message or ""):
                            group.cancel_scope.cancel()

                    async def ask() -> None:
                        await self.session.call_tool(tool, arguments,
                                                     progress_callback=progress)
                        lines.append("<answered>")
                    group.start_soon(ask)
        self.portal.call(call)
        return lines

    def read(self, uri: str) -> str:
        async def read() -> str:
            (content,) = (await self.session.read_resource(uri)).contents
            assert isinstance(content, TextResourceContents)
            return content.text
        return self.portal.call(read)


def _text(result: CallToolResult) -> str:
    (content,) = result.content
    assert isinstance(content, TextContent)
    return content.text


@asynccontextmanager
async def _connected(root: Path, home: Path) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "selfcorrect_action", "mcp", "--root", str(root)],
        env=_server_environment(home), cwd=str(root))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def _child_pid(marker: str) -> int:
    """The server process: the child of this one whose command line names `marker`."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            command = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        parent = next(line.split()[1] for line in status.splitlines()
                      if line.startswith("PPid:"))
        if int(parent) == os.getpid() and marker in command:
            return int(entry.name)
    raise AssertionError("the MCP server process was not found")


@pytest.fixture(scope="module")
def client(sandbox_image: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    root = _root(tmp_path_factory.mktemp("mcp") / "root")
    home = tmp_path_factory.mktemp("mcp-home")
    with start_blocking_portal() as portal, \
            portal.wrap_async_context_manager(_connected(root, home)) as session:
        yield Client(portal, session, root, home, _child_pid(str(root)))


@pytest.fixture(scope="module")
def passed_run(client: Client) -> tuple[dict[str, Any], list[str]]:
    progress: list[str] = []
    result = client.structured("run_task", {"spec_path": "tasks/hello.yml",
                                            "replay": "hello.jsonl"}, progress)
    return result, progress


def _containers(docker_client: Any, pid: int) -> list[Any]:
    owner = f"{socket.gethostname()}:{pid}"
    return docker_client.containers.list(
        all=True, filters={"label": f"{LABEL_OWNER}={owner}"}, ignore_removed=True)


def _until(check: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if found := check():
            return found
        time.sleep(0.2)
    raise AssertionError(f"never happened: {what}")


def test_the_tools_are_listed_with_schemas_from_the_apis_models(client: Client) -> None:
    async def listed() -> Any:
        return await client.session.list_tools()
    tools = {tool.name: tool for tool in client.portal.call(listed).tools}
    assert set(tools) == TOOLS
    for name, model in (("run_task", RunResult), ("exec", ExecResult),
                        ("validate", ValidationResult)):
        schema = tools[name].output_schema
        assert schema is not None and set(schema["properties"]) == set(model.model_fields)
    exec_input = tools["exec"].input_schema
    assert exec_input["required"] == ["script"]
    assert "stdout_contains" in json.dumps(exec_input), "the contract is the CLI's model"
    assert set(tools["run_task"].input_schema["properties"]) == {
        "spec", "spec_path", "prompt", "replay"}
    assert all(tool.description for tool in tools.values())


def test_run_task_runs_a_replayed_task_to_passed_with_progress(
        client: Client, passed_run: tuple[dict[str, Any], list[str]]) -> None:
    result, progress = passed_run
    assert (result["status"], result["exit_code"], result["attempts"]) == ("passed", 0, 1)
    assert result["replayed"] and result["code"] == "print('hello')\n"
    folder = client.run_folder(result["run_id"])
    assert result["output"] == str(folder / "scripts" / "hello.py")
    assert Path(result["output"]).read_text() == result["code"]
    assert result["run_json"] == str(folder / "run.json") and Path(result["run_json"]).is_file()
    assert result["audit"] == str(folder / "AUDIT.md") and "passed" in result["summary_md"]
    steps = [line.split(":")[0] for line in progress]
    assert {"generate", "execute", "evaluate", "done"} <= set(steps)
    assert "execute: attempt 1: running hello.py" in progress
    assert progress[-1].startswith("done: passed")


def test_run_task_takes_a_prompt_and_records_it_as_the_spec(client: Client) -> None:
    result = client.structured("run_task", {"prompt": PROMPT, "replay": "prompt.jsonl"})
    assert result["status"] == "passed"
    assert result["output"].endswith("/scripts/print_hello_from_a_prompt_over.py")
    state = load_run_json(Path(result["run_json"]).read_text())
    assert (state.spec.prompt, state.spec_source) == (PROMPT, "prompt")


def test_repair_fixes_a_repository_under_the_root_and_applies_the_fix(client: Client) -> None:
    progress: list[str] = []
    result = client.structured("repair", {
        "repository": "calc", "prompt": CALC_PROMPT, "files": ["src/calc/*.py"],
        "budget": {"patch_attempts": 2, "rethink_attempts": 1}, "apply": True,
        "replay": "repair_calc.jsonl"}, progress)

    assert (result["status"], result["exit_code"], result["attempts"]) == ("passed", 0, 3)
    core = client.root / "calc" / "src" / "calc" / "core.py"
    assert result["applied"] and result["changed_files"] == [str(core)]
    assert "return total(values) / len(values)\n" in core.read_text()
    assert result["diff"].startswith("--- a/src/calc/core.py\n+++ b/src/calc/core.py\n")
    folder = client.run_folder(result["run_id"])
    assert Path(result["diff_path"]) == folder / "changes.diff"
    assert any(line.startswith("review") for line in progress), "the reviewer was asked"
    status = subprocess.run(["git", "-C", str(client.root / "calc"), "status", "--porcelain"],
                            capture_output=True, text=True, check=True).stdout
    assert status == " M src/calc/core.py\n", "the fix and nothing else"


def test_repair_refuses_a_repository_outside_the_root_and_unmatched_files(
        client: Client) -> None:
    outside = client.call("repair", {"repository": "..", "prompt": "fix", "files": ["*.py"]})
    assert outside.is_error and "outside the server's root" in _text(outside)
    unmatched = client.call("repair", {"repository": "calc", "prompt": "fix",
                                       "files": ["src/nothing/*.py"]})
    assert unmatched.is_error and "src/nothing/*.py" in _text(unmatched)


def test_list_runs_get_audit_and_the_audit_resource_read_the_runs(
        client: Client, passed_run: tuple[dict[str, Any], list[str]]) -> None:
    run_id = passed_run[0]["run_id"]
    listed = client.structured("list_runs")
    (summary,) = [run for run in listed["runs"] if run["run_id"] == run_id]
    assert summary["status"] == "passed" and summary["task"].endswith(HELLO["prompt"])
    audit = client.structured("get_audit", {"run_id": run_id})
    assert audit["audit_md"] == Path(passed_run[0]["audit"]).read_text()
    assert client.read(f"selfcorrect://runs/{run_id}/AUDIT.md") == audit["audit_md"]
    assert json.loads(client.read(f"selfcorrect://runs/{run_id}/run.json"))["run_id"] == run_id


def test_exec_runs_a_script_and_keeps_the_servers_secrets_out(client: Client) -> None:
    script = ("import os\nprint('variables:', sorted(os.environ))\n"
              f"print('token: {SECRET}')\nprint(open('numbers.csv').read())\n")
    result = client.structured("exec", {
        "script": script, "script_name": "show.py", "inputs": ["data/numbers.csv"],
        "contract": {"stdout_contains": ["token:"], "timeout_s": 30}})
    assert result["passed"] and result["exit_code"] == 0 and result["runtime"] == "runc"
    assert "token: [REDACTED:secret]" in result["stdout"] and "\n1\n2\n" in result["stdout"]
    assert SECRET not in json.dumps(result)
    assert "SELFCORRECT_E2E_API_KEY" not in result["stdout"], "no server variable inside"
    assert [check["name"] for check in result["checks"]][-1] == "stdout contains 'token:'"


def test_validate_returns_every_problem_located(client: Client) -> None:
    result = client.structured("validate", {"spec": "prompt: x\nkind: scirpt\n"
                                                    "contract: {network: maybe}\n"})
    assert not result["valid"]
    assert [(p["line"], p["column"], p["field"]) for p in result["problems"]] == [
        (2, 1, "kind"), (3, 12, "contract.network")]
    assert all(p["hint"] for p in result["problems"])
    assert client.structured("validate", {"spec_path": "tasks/hello.yml"})["valid"]


@pytest.mark.parametrize(("tool", "arguments"), [
    ("run_task", {"spec_path": "../outside/secret.txt"}),
    ("run_task", {"spec_path": "leak.txt"}),
    ("start_run", {"spec_path": "/etc/passwd"}),
    ("run_task", {"spec_path": "tasks/hello.yml", "replay": "../outside/secret.txt"}),
    ("exec", {"script": "print(1)", "inputs": ["leak.txt"]}),
    ("validate", {"spec_path": "tasks/../../outside/secret.txt"}),
])
def test_paths_outside_the_root_are_refused(client: Client, tool: str,
                                            arguments: dict[str, Any]) -> None:
    result = client.call(tool, arguments)
    assert result.is_error
    assert "outside the server's root" in _text(result) and "hint: " in _text(result)
    assert result.structured_content is not None
    assert result.structured_content["exit_code"] == 2


def test_a_run_id_that_is_a_path_is_refused(client: Client) -> None:
    result = client.call("get_audit", {"run_id": "../../../etc/passwd"})
    assert result.is_error and "not a run id" in _text(result)


def test_errors_carry_a_message_and_a_hint_in_the_tools_terms(client: Client) -> None:
    result = client.call("run_task", {"prompt": "Print hello."})  # no model, no replay
    assert result.is_error
    assert _text(result).startswith("error: no model is configured and no replay was given\n"
                                    "  hint: give the call a `replay` argument")
    error = result.structured_content or {}
    assert (error["error"], error["exit_code"]) == (
        "no model is configured and no replay was given", 2)
    assert "start the server with a model: --model PROVIDER/MODEL in its args" in error["hint"]
    assert "pass --model" not in error["hint"] and "--replay FILE" not in error["hint"]


def test_a_malformed_request_is_answered_in_the_tools_terms_and_the_server_goes_on(
        client: Client) -> None:
    for tool, arguments, error in (
            ("exec", {"script": 5}, "exec: argument script: expected a string; got an integer"),
            ("list_runs", {"limit": "many"},
             "list_runs: argument limit: expected an integer; got a string")):
        result = client.call(tool, arguments)
        assert result.is_error and (result.structured_content or {})["error"] == error
        assert _text(result).startswith(f"error: {error}\n  hint: {tool} takes ")
        assert "Arguments" not in _text(result) and "pydantic" not in _text(result)
    assert client.call("nonsense", {}).is_error
    assert client.structured("validate", {"spec": "prompt: fine\n"})["valid"]


def test_validate_of_a_missing_file_is_an_error(client: Client) -> None:
    result = client.call("validate", {"spec_path": "tasks/nope.yml"})
    assert result.is_error
    assert _text(result).startswith("error: spec_path 'tasks/nope.yml': no such file under "
                                    "the server's root")


def test_cancelling_run_task_stops_the_run_and_leaves_no_container(
        client: Client, docker_client: Any) -> None:
    lines = client.cancel_once("run_task", {"spec_path": "tasks/slow.yml",
                                            "replay": "slow.jsonl"},
                               heard="execute: attempt 1: running slow.py")
    cancelled_at = time.monotonic()
    assert "<answered>" not in lines and lines[-1] == "execute: attempt 1: running slow.py"

    def ended() -> dict[str, Any] | None:
        runs = client.structured("list_runs")["runs"]
        slow = [run for run in runs if run["task"].endswith(SLOW["prompt"])]
        return slow[0] if slow and slow[0]["status"] not in ("queued", "running") else None

    run = _until(ended, "the cancelled run ended")
    # The script sleeps 100 s: the run ended because its container was killed.
    assert time.monotonic() - cancelled_at < 60
    assert run["status"] == "cancelled"  # not "error" (issue 34)
    audit = Path(run["audit"]).read_text()
    assert "interrupted by a cancel request" in audit
    assert "**Status: cancelled: stopped before it ended.**" in audit
    assert load_run_json(Path(run["run_json"]).read_text()).interrupted_by == "cancelled"
    assert _containers(docker_client, client.server_pid) == []


def test_cancelling_exec_kills_the_script(client: Client, docker_client: Any) -> None:
    # Cancelled at the first "still waiting" notice, 5 s in: the script is running then.
    lines = client.cancel_once("exec", {"script": "import time\ntime.sleep(100)\n",
                                        "script_name": "sleepy.py", "timeout_s": 120},
                               heard="waiting for sleepy.py to finish")
    cancelled_at = time.monotonic()
    assert "<answered>" not in lines
    _until(lambda: not _containers(docker_client, client.server_pid), "no container left")
    assert time.monotonic() - cancelled_at < 60, "the script's 100 s were not waited for"


def test_runs_wait_their_turn_and_cancel_run_stops_either_kind(
        client: Client, docker_client: Any) -> None:
    task = {"spec_path": "tasks/slow.yml", "replay": "slow.jsonl"}
    first = client.structured("start_run", task)
    second = client.structured("start_run", task)
    # One run at a time (--max-runs 1): the second waits for the first, which runs or is
    # about to (issue 38: it said 0 while the first ran).
    assert (second["phase"], second["waiting_before"]) == ("queued", 1)

    def running() -> bool:
        progress = client.structured("get_run", {"run_id": first["run_id"]})["progress"]
        return any(line["message"] == "attempt 1: running slow.py" for line in progress)

    _until(running, "the first run runs its script")
    waiting = client.structured("get_run", {"run_id": second["run_id"]})
    assert (waiting["phase"], waiting["waiting_before"]) == ("queued", 1)
    assert client.structured("cancel_run", {"run_id": second["run_id"]})["phase"] == \
        "cancelled"
    client.structured("cancel_run", {"run_id": first["run_id"]})

    def finished() -> dict[str, Any] | None:
        now = client.structured("get_run", {"run_id": first["run_id"]})
        return now if now["phase"] == "finished" else None

    result = _until(finished, "the first run finished")["result"]
    assert (result["status"], result["interrupted_by"], result["exit_code"]) == (
        "cancelled", "cancelled", 130)
    assert Path(result["run_json"]).is_file()
    assert Path(result["run_json"]).parent == client.run_folder(first["run_id"])
    assert not (client.run_folder(first["run_id"]).parent / second["run_id"] /
                "run.json").exists(), "the cancelled queued run never started"
    assert _containers(docker_client, client.server_pid) == []


class RawServer:
    """The server under a bare JSON-RPC client: lines in, lines out, nothing checked."""

    def __init__(self, root: Path, home: Path, *flags: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "selfcorrect_action", "mcp", "--root", str(root), *flags],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=_server_environment(home))
        self._lines: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._ids = 0

    def _read(self) -> None:
        for line in self.process.stdout or []:
            self._lines.put(line.decode())

    def send(self, message: dict[str, Any] | str) -> None:
        assert self.process.stdin is not None
        text = message if isinstance(message, str) else json.dumps(message)
        self.process.stdin.write(text.encode() + b"\n")
        self.process.stdin.flush()

    def answer(self) -> dict[str, Any]:
        reply: dict[str, Any] = json.loads(self._lines.get(timeout=WAIT_S))
        return reply

    def ask(self, method: str, params: Any) -> dict[str, Any]:
        self._ids += 1
        self.send({"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params})
        reply = self.answer()
        assert reply["id"] == self._ids, reply
        return reply

    def initialize(self) -> None:
        self.ask("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "raw", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = self.ask("tools/call", {"name": tool,
                                                         "arguments": arguments})["result"]
        return result

    def end(self) -> tuple[int, str]:
        """Wait for it to exit; its exit code and what it said on stderr."""
        try:
            self.process.wait(WAIT_S)
        finally:
            self._reader.join(WAIT_S)
            err = self.process.stderr.read().decode() if self.process.stderr else ""
            for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
                if stream is not None:
                    stream.close()
        return self.process.returncode, err


def test_garbage_on_stdin_is_survived_and_bad_requests_get_errors(tmp_path: Path) -> None:
    """Below the SDK's client: a line that is not JSON, an unknown method, a call whose
    params do not fit; the server answers what it can and serves the next call."""
    (tmp_path / "root").mkdir()
    server = RawServer(tmp_path / "root", tmp_path / "home")
    try:
        server.initialize()
        server.send("{this is not json")
        assert server.ask("selfcorrect/nonsense", None)["error"]["code"] == -32601
        assert server.ask("tools/call", {"name": 5})["error"]["code"] == -32602
        result = server.call("validate", {"spec": "prompt: fine\n"})
        assert result["structuredContent"]["valid"] is True
    finally:
        assert server.process.stdin is not None
        server.process.stdin.close()
        code, _ = server.end()
    assert code == 0, "stdin closed: the server ends as a client expects"


def test_sigterm_ends_the_server_after_its_runs_are_stopped_cleanly(
        client: Client, docker_client: Any) -> None:
    """A client that gives up on a server sends SIGTERM: its running runs are cancelled,
    their reports written, their containers removed, and the server exits 143."""
    server = RawServer(client.root, client.home)
    try:
        server.initialize()
        run_id = server.call("start_run", {"spec_path": "tasks/slow.yml",
                                           "replay": "slow.jsonl"})["structuredContent"]["run_id"]

        def running() -> bool:
            progress = server.call("get_run", {"run_id": run_id})["structuredContent"]
            return any(line["message"] == "attempt 1: running slow.py"
                       for line in progress["progress"])

        _until(running, "the run runs its script")
    finally:
        server.process.send_signal(signal.SIGTERM)
        code, err = server.end()
    assert code == 143 and "interrupted by SIGTERM" in err
    state = load_run_json((client.run_folder(run_id) / "run.json").read_text())
    assert (state.status.value, state.interrupted_by) == ("cancelled", "cancelled")
    assert _containers(docker_client, server.process.pid) == []


def test_the_servers_runtime_reaches_its_sandboxes(client: Client, docker_client: Any) -> None:
    """--runtime runsc (gVisor) for every sandbox the server starts; the module's own
    server is runc's in every test above."""
    if "runsc" not in docker_client.info().get("Runtimes", {}):
        reason = "the Docker engine has no runsc runtime"
        if os.environ.get("CI", "").lower() == "true":  # as tests/conftest.py's fixtures do
            pytest.fail(f"CI=true but {reason}", pytrace=False)
        pytest.skip(reason)
    server = RawServer(client.root, client.home, "--runtime", "runsc")
    try:
        server.initialize()
        result = server.call("exec", {"script": "print('hello')"})["structuredContent"]
    finally:
        assert server.process.stdin is not None
        server.process.stdin.close()
        server.end()
    assert (result["passed"], result["runtime"], result["stdout"]) == (True, "runsc", "hello\n")


def test_the_servers_replay_plays_in_every_run_and_results_are_redacted(
        client: Client) -> None:
    """`selfcorrect mcp --replay FILE`: a run_task call without a replay of its own plays the
    server's, and what the run returns (code, output, summary) never holds the server's key."""
    # A flag's path is the command line's, read from where the server starts.
    server = RawServer(client.root, client.home, "--replay", str(client.root / "leaky.jsonl"))
    try:
        server.initialize()
        answer = server.call("run_task", {"spec_path": "tasks/hello.yml"})
    finally:
        assert server.process.stdin is not None
        server.process.stdin.close()
        server.end()
    result = answer["structuredContent"]
    assert (result["status"], result["replayed"]) == ("passed", True), result
    assert "[REDACTED:secret]" in result["code"], result["code"]
    assert SECRET not in json.dumps(answer)
    run_json = Path(result["run_json"]).read_text()
    assert SECRET not in run_json and "[REDACTED:secret]" in run_json


def test_runs_are_kept_in_the_history_and_the_root_is_left_untouched(
        client: Client, passed_run: tuple[dict[str, Any], list[str]]) -> None:
    """Issue 38: runs went to `<root>/.selfcorrect/mcp-runs/`, inside the user's repository,
    left untracked. They are in the history folder, where `selfcorrect history` lists them
    and `show`/`view` find their folders. Last in the module: every run above went by."""
    run_id = passed_run[0]["run_id"]
    folder = client.run_folder(run_id)
    assert folder.parent.parent == _history(client.home) / "mcp-runs"
    assert client.structured("list_runs")["folder"] == str(folder.parent)
    listed = subprocess.run(
        [sys.executable, "-m", "selfcorrect_action", "history", "--json"],
        env=_server_environment(client.home), capture_output=True, text=True, check=True)
    (entry,) = [run for run in json.loads(listed.stdout)["runs"] if run["run_id"] == run_id]
    assert entry["location"] == str(folder)
    assert _git(client.root, "status", "--porcelain", "--untracked-files=all") == "", \
        "the root is as it was committed"
    assert not (client.root / ".selfcorrect").exists()
