"""The MCP tools' work without the protocol: what is refused before anything is queued
(every path outside the root, a task given twice or not at all, a bad spec, no model), what
validate says, and reading runs back from the root's output folder."""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from selfcorrect_action.errors import SpecError, UsageError
from selfcorrect_action.mcp.jobs import JobQueue
from selfcorrect_action.mcp.tools import ExecArgs, RepairArgs, ServerConfig, TaskArgs, Tools
from selfcorrect_action.records import evolve
from selfcorrect_action.report.writer import write_reports
from selfcorrect_action.runs.settings import RunSettings
from tests.fakes.replays import fenced, write_replay
from tests.unit.report.runs import exhausted_run, passing_run

SPEC = "prompt: Print hello.\ncontract:\n  stdout_contains: [hello]\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "root" / "tasks").mkdir(parents=True)
    (tmp_path / "root" / "tasks" / "hello.yml").write_text(SPEC)
    (tmp_path / "secret.txt").write_text("not yours\n")
    return tmp_path / "root"


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """Where the server keeps its runs: in the history folder, never under the root."""
    return tmp_path / "history" / "mcp-runs" / "root-0123456789ab"


@pytest.fixture
def tools(root: Path, runs: Path) -> Iterator[Tools]:
    queue = JobQueue(workers=1, max_waiting=2, environ={}, secrets=[])
    yield Tools(ServerConfig(root=root, settings=RunSettings(), environ={}, runs=runs), queue)
    queue.close(1)


@pytest.mark.parametrize(("args", "expected"), [
    (TaskArgs(), "got none"),
    (TaskArgs(spec=SPEC, prompt="Print hello."), "got spec, prompt"),
    (TaskArgs(spec_path="../secret.txt"), "spec_path '../secret.txt': outside the server's root"),
    (TaskArgs(spec_path="/etc/passwd"), "outside the server's root"),
    (TaskArgs(spec=SPEC, replay="../secret.txt"), "replay '../secret.txt': outside"),
    (TaskArgs(prompt="Print hello."), "no model is configured"),
    (TaskArgs(prompt="   "), "prompt: the prompt is empty"),
])
def test_a_task_is_refused_before_it_is_queued(tools: Tools, args: TaskArgs,
                                               expected: str) -> None:
    with pytest.raises(UsageError) as refused:
        tools.start_run(args)
    assert expected in refused.value.message
    assert tools.queue.jobs() == []


NETWORK_SPEC = """prompt: Print hello.
contract:
  network:
    allow: [collect.example.com]
    ports: [80]
    credentials:
      collect.example.com: {header: X-Leak, secret: %s}
"""


def test_a_contract_cannot_send_the_servers_keys_to_a_host_it_names(root: Path) -> None:
    """The server's environment never reaches a sandbox (issue 17): a client's contract
    named OPENAI_API_KEY as a credential of its own host, and the proxy would have sent it."""
    environ = {"OPENAI_API_KEY": "sk-live-123", "SELFCORRECT_SECRET_WEATHER": "w-key",
               "SELFCORRECT_SECRET_WEATHER_HOSTS": "api.weather.example.com"}
    queue = JobQueue(workers=1, max_waiting=2, environ=environ, secrets=[])
    tools = Tools(ServerConfig(root=root, settings=RunSettings(), environ=environ,
                               runs=root.parent / "runs"), queue)
    try:
        with pytest.raises(SpecError) as refused:
            tools.start_run(TaskArgs(spec=NETWORK_SPEC % "OPENAI_API_KEY"))
        assert "starting SELFCORRECT_SECRET_" in refused.value.problems[0]
        with pytest.raises(UsageError) as unbound:
            tools.start_run(TaskArgs(spec=NETWORK_SPEC % "SELFCORRECT_SECRET_WEATHER"))
        assert "not bound to collect.example.com" in unbound.value.message
        assert tools.queue.jobs() == []
    finally:
        queue.close(1)


def test_a_bad_spec_comes_back_with_every_problem_located(tools: Tools) -> None:
    with pytest.raises(SpecError) as refused:
        tools.start_run(TaskArgs(spec="prompt: x\nkind: scirpt\nbudget: {tokens: -1}\n"))
    assert [problem.split(": ")[0] for problem in refused.value.problems] == [
        "spec:2:1", "spec:3:10"]
    with pytest.raises(SpecError, match=r"tests/missing\.py does not exist"):
        tools.start_run(TaskArgs(spec="prompt: x\ntests: [tests/missing.py]\n"))


def test_a_symlinked_spec_leading_out_is_refused(tools: Tools, root: Path) -> None:
    (root / "tasks" / "escape.yml").symlink_to(root.parent / "secret.txt")
    with pytest.raises(UsageError, match="outside the server's root"):
        tools.start_run(TaskArgs(spec_path="tasks/escape.yml"))


def test_validate_locates_every_problem(tools: Tools) -> None:
    checked = tools.validate("prompt: x\nkind: scirpt\nbudget: {tokens: -1}\n", None)
    assert not checked.valid
    assert [(p.line, p.column, p.field) for p in checked.problems] == [
        (2, 1, "kind"), (3, 10, "budget.tokens")]
    assert checked.problems[0].hint == "use one of the listed values"
    assert tools.validate(None, "tasks/hello.yml").valid
    with pytest.raises(UsageError, match="outside"):
        tools.validate(None, "../secret.txt")
    with pytest.raises(UsageError, match="one of them"):
        tools.validate(SPEC, "tasks/hello.yml")


def test_validate_refuses_a_spec_path_that_names_no_file(tools: Tools) -> None:
    """Issue 38: a missing spec_path came back as a valid answer (`is_error: false`)
    holding one problem; the file is not there to validate."""
    with pytest.raises(UsageError) as missing:
        tools.validate(None, "tasks/nope.yml")
    assert missing.value.message.startswith("spec_path 'tasks/nope.yml': no such file under "
                                            "the server's root")
    assert "spec" in (missing.value.hint or "")
    with pytest.raises(UsageError, match="spec_path 'tasks': not a file"):
        tools.validate(None, "tasks")


def test_no_model_is_said_in_the_tools_terms(tools: Tools) -> None:
    """A client has a `replay` argument, and the server's own flags and variables: not
    `pass --model` and `--replay FILE`, as if it typed a command."""
    with pytest.raises(UsageError) as refused:
        tools.start_run(TaskArgs(prompt="Print hello."))
    assert refused.value.message == "no model is configured and no replay was given"
    hint = refused.value.hint or ""
    assert "`replay` argument" in hint
    assert "--model" in hint and "SELFCORRECT_MODEL" in hint and "server" in hint
    assert "pass --model" not in hint and "--replay FILE" not in hint


def test_a_run_is_kept_in_the_servers_runs_folder_not_under_the_root(
        root: Path, runs: Path) -> None:
    replay = root / "hello.jsonl"
    write_replay(replay, "Print hello.", [("generate", fenced("print('hello')"))])
    queue = JobQueue(workers=1, max_waiting=2, environ={}, secrets=[])  # never started
    tools = Tools(ServerConfig(root=root, settings=RunSettings(), environ={}, runs=runs),
                  queue)
    job = tools.start_run(TaskArgs(spec=SPEC, replay="hello.jsonl"))
    progress = tools.progress(job)
    assert progress.folder == str(runs / job.id)
    assert (progress.phase, progress.waiting_before) == ("queued", 0)
    queue.close(1)


@pytest.mark.parametrize(("args", "expected"), [
    (ExecArgs("print(1)", script_name="../x.py"), "not a plain file name"),
    (ExecArgs("print(1)", script_name=".."), "not a plain file name"),
    (ExecArgs("print(1)", inputs=("../secret.txt",)), "outside the server's root"),
    (ExecArgs("print(1)", inputs=("tasks/hello.yml", "tasks/hello.yml")),
     "same place in the work dir"),
    (ExecArgs("print(1)", inputs=("tasks/nothing.csv",)), "no such file"),
    (ExecArgs("print(1)", timeout_s=-1), "--timeout must be"),
])
def test_exec_arguments_are_checked_before_a_container_starts(
        tools: Tools, args: ExecArgs, expected: str) -> None:
    with pytest.raises(UsageError, match=expected):
        tools.exec_job(args)


def _kept(runs: Path, run_id: str, state_run_id: str | None = None, *, age_s: float = 0,
          passed: bool = True, tmp: Path) -> Path:
    state = passing_run(tmp) if passed else exhausted_run()
    state = evolve(state, {"run_id": state_run_id or run_id})
    folder = runs / run_id
    paths = write_reports(state, folder, secrets=[])
    stamp = time.time() - age_s
    os.utime(paths.run_json, (stamp, stamp))
    return folder


def test_list_runs_reads_the_output_folder_latest_first(tools: Tools, runs: Path,
                                                        tmp_path: Path) -> None:
    _kept(runs, "aaaaaaaaaaaa", age_s=60, tmp=tmp_path)
    _kept(runs, "bbbbbbbbbbbb", passed=False, tmp=tmp_path)
    broken = runs / "cccccccccccc"
    broken.mkdir()
    (broken / "run.json").write_text("{not json")
    os.utime(broken / "run.json", (time.time() - 120, time.time() - 120))
    (runs / "not-a-run").mkdir()
    listed = tools.list_runs(limit=10)
    assert [(run.run_id, run.status) for run in listed.runs] == [
        ("bbbbbbbbbbbb", "exhausted"), ("aaaaaaaaaaaa", "passed"),
        ("cccccccccccc", "unreadable")]
    assert listed.runs[1].task == (".selfcorrect/tasks/sales-chart.yml: Read sales.csv and "
                                   "plot the monthly sales totals to chart.png as a line chart.")
    assert listed.runs[1].audit == str(runs / "aaaaaaaaaaaa" / "AUDIT.md")
    assert listed.folder == str(runs)
    assert "not valid JSON" in (listed.runs[2].problem or "")
    assert [run.run_id for run in tools.list_runs(limit=1).runs] == ["bbbbbbbbbbbb"]


def test_get_audit_reads_a_runs_audit_trail(tools: Tools, runs: Path, tmp_path: Path) -> None:
    folder = _kept(runs, "aaaaaaaaaaaa", tmp=tmp_path)
    audit = tools.get_audit("aaaaaaaaaaaa")
    assert audit.audit_md == (folder / "AUDIT.md").read_text()
    assert audit.run_json == str(folder / "run.json")
    with pytest.raises(UsageError, match=r"has no AUDIT\.md") as missing:
        tools.get_audit("dddddddddddd")
    assert "list_runs" in (missing.value.hint or "")


@pytest.mark.parametrize("run_id", ["../../../etc", "aaaaaaaaaaaa/../x", "AAAAAAAAAAAA", ""])
def test_a_run_id_is_never_a_path(tools: Tools, run_id: str) -> None:
    for read in (tools.get_audit, tools.get_run, tools.cancel_run):
        with pytest.raises(UsageError, match="not a run id"):
            read(run_id)


def test_a_run_this_server_never_had_is_said_so(tools: Tools) -> None:
    with pytest.raises(UsageError, match="this server has no such run"):
        tools.get_run("aaaaaaaaaaaa")


@pytest.mark.parametrize(("repository", "expected"), [
    ("..", "repository '..': outside the server's root"),
    ("tasks/hello.yml", "repository 'tasks/hello.yml': not a folder under the root"),
    ("missing", "not a folder under the root"),
])
def test_a_repair_is_refused_before_it_is_queued(tools: Tools, repository: str,
                                                 expected: str) -> None:
    with pytest.raises(UsageError) as refused:
        tools.start_repair(RepairArgs(prompt="fix it", files=("*.py",), repository=repository))
    assert expected in refused.value.message
    assert tools.queue.jobs() == []


def test_a_repairs_files_that_match_nothing_are_located(tools: Tools, root: Path) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "core.py").write_text("x = 1\n")
    with pytest.raises(SpecError, match=r"repair:\d+:\d+: .*src/\*\*/\*\.py"):
        tools.start_repair(RepairArgs(prompt="fix it", files=("src/**/*.py",)))
    assert tools.queue.jobs() == []


def test_the_commands_help_names_every_tool_the_server_lists(tools: Tools) -> None:
    import anyio

    from selfcorrect_action.cli import build_parser
    from selfcorrect_action.mcp.server import Answers, build_server

    server = build_server(tools, Answers(secrets=[], environ={}))
    listed = {tool.name for tool in anyio.run(server.list_tools)}
    subcommands = next(action for action in build_parser()._actions
                       if isinstance(action, argparse._SubParsersAction))
    description = subcommands.choices["mcp"].description or ""
    assert listed and all(name in description for name in listed), (listed, description)


def test_the_package_says_it_is_typed() -> None:
    """PEP 561: without py.typed, a project that installs selfcorrect and calls its API
    gets no type checking of those calls."""
    from importlib.resources import files

    assert files("selfcorrect_action").joinpath("py.typed").is_file()
