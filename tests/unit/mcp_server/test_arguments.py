"""Arguments that do not fit a tool's schema (issue 38, item 6), through the server's own
call path: an error answer that names the tool's argument and what it takes, never
pydantic's text (its internal model names such as `exec_toolArguments`, its URLs)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server import MCPServer
from mcp.types import CallToolResult, TextContent

from selfcorrect_action.mcp.jobs import JobQueue
from selfcorrect_action.mcp.server import Answers, build_server
from selfcorrect_action.mcp.tools import ServerConfig, Tools
from selfcorrect_action.runs.settings import RunSettings


@pytest.fixture
def server(tmp_path: Path) -> Iterator[MCPServer[Any]]:
    queue = JobQueue(workers=1, max_waiting=2, environ={}, secrets=[])
    tools = Tools(ServerConfig(root=tmp_path, settings=RunSettings(), environ={},
                               runs=tmp_path.parent / "runs"), queue)
    yield build_server(tools, Answers(secrets=[], environ={}))
    queue.close(1)


def _call(server: MCPServer[Any], tool: str, arguments: dict[str, Any]) -> CallToolResult:
    async def call() -> CallToolResult:
        result = await server.call_tool(tool, arguments)
        assert isinstance(result, CallToolResult)
        return result
    return anyio.run(call)


def _text(result: CallToolResult) -> str:
    (content,) = result.content
    assert isinstance(content, TextContent)
    return content.text


@pytest.mark.parametrize(("tool", "arguments", "error"), [
    ("exec", {"script": 5}, "exec: argument script: expected a string; got an integer"),
    ("exec", {}, "exec: argument script is required"),
    ("list_runs", {"limit": "many"}, "list_runs: argument limit: expected an integer; "
     "got a string"),
    ("list_runs", {"limit": 0}, "list_runs: argument limit: should be greater than or equal "
     "to 1; got 0"),
    ("repair", {"prompt": "fix", "files": "src/*.py"},
     "repair: argument files: expected an array; got a string"),
    ("exec", {"script": "x", "contract": 5}, "exec: argument contract: expected an object; "
     "got an integer"),
    ("run_task", {"spec": 3}, "run_task: argument spec: expected a string; got an integer"),
    ("run_task", {"spec_path": "a.yml", "path": "b.yml"},
     "run_task: unknown argument path"),
])
def test_an_argument_that_does_not_fit_is_named(server: MCPServer[Any], tool: str,
                                                arguments: dict[str, Any], error: str) -> None:
    result = _call(server, tool, arguments)
    assert result.is_error
    text = _text(result)
    assert text.startswith(f"error: {error}\n  hint: "), text
    assert "Arguments" not in text and "pydantic" not in text and "[type=" not in text
    assert result.structured_content is not None
    assert result.structured_content["error"] == error
    assert result.structured_content["exit_code"] == 2


def test_the_hint_says_what_the_tool_takes(server: MCPServer[Any]) -> None:
    result = _call(server, "exec", {"script": 5})
    assert result.structured_content is not None
    assert result.structured_content["hint"] == (
        "exec takes script (string, required), script_name (string), contract (object), "
        "inputs (array of strings), timeout_s (number)")


def test_a_nested_field_is_named_by_its_path(server: MCPServer[Any]) -> None:
    result = _call(server, "exec", {"script": "x", "contract": {
        "network": "maybe", "artifacts": [{"path": 3}], "bogus": 1}})
    assert result.structured_content is not None
    error = result.structured_content["error"]
    assert error.startswith("exec: 3 arguments do not fit: ")
    assert "contract.artifacts.0.path: expected a string; got an integer" in error
    assert "contract.network: expected none, open or a mapping; got 'maybe'" in error
    assert "contract.bogus: unknown field" in error
    assert "(a word)" not in error


def test_a_fitting_call_is_untouched(server: MCPServer[Any]) -> None:
    result = _call(server, "validate", {"spec": "prompt: fine\n"})
    assert not result.is_error and result.structured_content == {"valid": True, "problems": []}
