"""The protocol side of `selfcorrect mcp`, on the official SDK (the `mcp` extra): each tool's
schema comes from the API's pydantic models, its answer is structured content (and the same
JSON as text), its progress lines are progress notifications, a client's cancel stops the
work it started. tools.py does the work; nothing here decides anything about a run.

Errors are tool results with isError set: the text is the CLI's (`error: ...`, then
`  hint: ...`), the structured content the object `--json` prints for an error; arguments
that do not fit a tool's schema are one too, said in the tool's terms (arguments.py). A bug
in one call is reported as the CLI reports one (crash.py) and the server goes on serving.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Annotated, Any, TypeVar

import anyio
import anyio.to_thread
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from selfcorrect_action import __version__
from selfcorrect_action.api.results import ExecResult, RunResult, ValidationResult
from selfcorrect_action.contract import ExecutionContract
from selfcorrect_action.crash import EXIT_INTERNAL, report_crash
from selfcorrect_action.errors import SelfcorrectError
from selfcorrect_action.mcp.arguments import arguments_error, unknown_arguments, unknown_error
from selfcorrect_action.mcp.jobs import Job, JobQueue
from selfcorrect_action.mcp.models import Audit, ErrorInfo, RunList, RunProgress
from selfcorrect_action.mcp.tools import ExecArgs, RepairArgs, ServerConfig, TaskArgs, Tools
from selfcorrect_action.records import schema_words
from selfcorrect_action.redact import redact, redact_data, secrets_from_env
from selfcorrect_action.report.run_json import RUN_JSON
from selfcorrect_action.report.writer import AUDIT_MD
from selfcorrect_action.spec import Budget

POLL_S = 0.2  # how often a waiting call looks for new progress lines
STOP_WAIT_S = 120.0  # how long a cancelled call, or the shutdown, waits for work to end
MAX_WAITING = 16  # runs queued behind the running ones, at most
T = TypeVar("T")
INSTRUCTIONS = (
    "selfcorrect turns a task into a Python script shown to work, and runs scripts in a "
    "locked-down sandbox. run_task (or start_run, get_run, cancel_run for long runs) runs "
    "the whole loop; repair makes a repository's failing tests pass; exec runs one script; "
    "validate checks a task spec; list_runs and "
    "get_audit read earlier runs' records. Paths are relative to the server's root.")

SpecText = Annotated[str | None, Field(description="the task spec as YAML text (see "
                                       "docs/task-spec.md); its tests and inputs are paths "
                                       "under the server's root")]
SpecPath = Annotated[str | None, Field(description="a task spec file under the root")]
Prompt = Annotated[str | None, Field(description="the task in plain words, instead of a spec")]
Replay = Annotated[str | None, Field(description="a recording under the root (made with "
                                     "`selfcorrect run --record`) to play back instead of "
                                     "calling a model")]
RunId = Annotated[str, Field(description="the id start_run or list_runs gave")]


class Answers:
    """Turning what a tool did into the protocol's answer, redacted."""

    def __init__(self, secrets: Sequence[str], environ: dict[str, str]) -> None:
        self.secrets = list(secrets)
        self.environ = environ

    def ok(self, model: BaseModel) -> CallToolResult:
        data = redact_data(model.model_dump(mode="json"), secrets=self.secrets,
                           keep=schema_words(type(model)))
        return CallToolResult(content=[TextContent(type="text", text=json.dumps(data, indent=2))],
                              structured_content=data)

    def failed(self, error: ErrorInfo) -> CallToolResult:
        error = ErrorInfo.model_validate(redact_data(error.model_dump(), secrets=self.secrets))
        # As the CLI prints an error (errors.SelfcorrectError.__str__).
        text = f"error: {error.error}" + (f"\n  hint: {error.hint}" if error.hint else "")
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              structured_content=error.model_dump(), is_error=True)

    async def attempt(self, work: Callable[[], T]) -> T | CallToolResult:
        """`work()` on a worker thread; our errors and bugs as error answers."""
        try:
            return await anyio.to_thread.run_sync(work)
        except SelfcorrectError as exc:
            return self.failed(ErrorInfo.of(exc))
        except Exception as exc:  # a bug in this call: reported, and the server goes on
            report_crash(exc, secrets=self.secrets, environ=self.environ)
            return self.failed(ErrorInfo(
                error=f"selfcorrect failed with an internal error ({type(exc).__name__})",
                hint="this is a bug: the server's log names the file holding its traceback",
                exit_code=EXIT_INTERNAL))

    async def answer(self, work: Callable[[], BaseModel]) -> CallToolResult:
        done = await self.attempt(work)
        return done if isinstance(done, CallToolResult) else self.ok(done)

    async def follow(self, job: Job, ctx: Context, *, waiting: int | None = None
                     ) -> CallToolResult:
        """Relay the job's progress until it ends, then answer with how it ended. A cancel
        of the call stops the job and waits for it to end cleanly (reports written,
        containers removed) before the call is let go."""
        try:
            if waiting:
                await ctx.report_progress(0, None, f"queued: {waiting} run(s) before it")
            await _relay(job, ctx)
        except anyio.get_cancelled_exc_class():
            job.stop()
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(job.wait, STOP_WAIT_S)
            raise
        if job.error is not None:
            return self.failed(job.error)
        assert job.result is not None
        return self.ok(job.result)


async def _relay(job: Job, ctx: Context) -> None:
    heard = 0
    while True:
        ended = job.wait(0)  # before reading the lines, so the last ones are relayed too
        for line in job.events(after=heard):
            await ctx.report_progress(line.index, None, f"{line.step}: {line.message}")
            heard = line.index
        if ended:
            return
        await anyio.sleep(POLL_S)


class _Server(MCPServer[Any]):
    """The SDK's server, but for a call whose arguments do not fit: our error answer,
    naming the tool's arguments, instead of pydantic's text (arguments.py)."""

    answers: Answers

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[Any, Any] | None = None
                        ) -> CallToolResult | InputRequiredResult:
        schemas = {tool.name: tool.input_schema for tool in await self.list_tools()}
        schema = schemas.get(name)
        if schema is not None and (unknown := unknown_arguments(arguments, schema)):
            return self.answers.failed(ErrorInfo.of(unknown_error(name, unknown, schema)))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if schema is None or not isinstance(exc.__cause__, ValidationError):
                raise
            return self.answers.failed(ErrorInfo.of(
                arguments_error(name, exc.__cause__, schema)))


def build_server(tools: Tools, answers: Answers) -> MCPServer[Any]:
    server = _Server("selfcorrect", version=__version__, log_level="WARNING",
                     instructions=INSTRUCTIONS)
    server.answers = answers
    _add_run_tools(server, tools, answers)
    _add_other_tools(server, tools, answers)
    _add_resources(server, tools, answers)
    return server


def _add_run_tools(server: MCPServer[Any], tools: Tools, answers: Answers) -> None:
    async def run_task(ctx: Context, spec: SpecText = None, spec_path: SpecPath = None,
                       prompt: Prompt = None, replay: Replay = None
                       ) -> Annotated[CallToolResult, RunResult]:
        """Turn a task into a Python script shown to work: plan, generate, run in a
        locked-down sandbox, judge, repair, within the task's budget. Give one of spec,
        spec_path or prompt. Blocks until the run ends (minutes), with a progress
        notification per step; cancelling the call stops the run. Returns the status, the
        attempts, tokens and cost, the passing code, the paths of run.json and AUDIT.md and
        the summary in Markdown. For long runs, use start_run and get_run instead."""
        job = await answers.attempt(
            lambda: tools.start_run(TaskArgs(spec, spec_path, prompt, replay)))
        if isinstance(job, CallToolResult):
            return job
        return await answers.follow(job, ctx, waiting=tools.queue.position(job))

    async def repair(
            ctx: Context,
            prompt: Annotated[str, Field(description="what is wrong, in plain words (a "
                                         "failing test, a bug report)")],
            files: Annotated[list[str], Field(description="globs of the files the model may "
                                              "rewrite, from the repository's root (e.g. "
                                              "src/pkg/*.py); every other file is read-only",
                                              min_length=1)],
            repository: Annotated[str, Field(description="the repository's folder under the "
                                             "server's root")] = ".",
            test_command: Annotated[str | None, Field(
                description="how its tests run in the sandbox (default: python -m pytest "
                "-q)")] = None,
            failing_tests: Annotated[list[str] | None, Field(
                description="pytest node ids that must pass (default: those failing before "
                "the repair)")] = None,
            requirements: Annotated[str | None, Field(
                description="a requirements file in the repository to install into the "
                "sandbox")] = None,
            review: Annotated[bool, Field(description="a reviewer approves each change "
                                          "before it runs")] = True,
            apply: Annotated[bool, Field(description="write a passing fix into the "
                                         "repository (refused where its files changed "
                                         "meanwhile); otherwise the diff and changed files "
                                         "go to the run's folder")] = False,
            budget: Annotated[Budget | None, Field(description="the attempts and tokens "
                                                   "it may spend, as a spec's budget")] = None,
            replay: Replay = None) -> Annotated[CallToolResult, RunResult]:
        """Make a repository's failing tests pass: its tests run once unchanged (the
        baseline), then the loop rewrites only the allowed files, a reviewer approves each
        change, and the repository's own test suite judges it in the sandbox (no network):
        the target tests must pass and no test that passed before may fail. Blocks until
        it ends, with a progress notification per step; cancelling the call stops it.
        Returns the run's result with the diff and the changed files."""
        args = RepairArgs(prompt=prompt, files=tuple(files), repository=repository,
                          test_command=test_command, failing_tests=tuple(failing_tests or ()),
                          requirements=requirements, review=review, apply=apply,
                          replay=replay, budget=budget)
        job = await answers.attempt(lambda: tools.start_repair(args))
        if isinstance(job, CallToolResult):
            return job
        return await answers.follow(job, ctx, waiting=tools.queue.position(job))

    async def start_run(spec: SpecText = None, spec_path: SpecPath = None,
                        prompt: Prompt = None, replay: Replay = None
                        ) -> Annotated[CallToolResult, RunProgress]:
        """Queue a run, as run_task takes it, and return its run_id at once (the task is
        checked first: its problems come back now). At most a few runs go at once; the
        rest wait their turn. Follow it with get_run, stop it with cancel_run."""
        return await answers.answer(lambda: tools.progress(
            tools.start_run(TaskArgs(spec, spec_path, prompt, replay))))

    async def get_run(run_id: RunId) -> Annotated[CallToolResult, RunProgress]:
        """Where a run of this server stands: queued, running or finished, its latest
        progress lines, and once it has finished its result (as run_task returns it)."""
        return await answers.answer(lambda: tools.get_run(run_id))

    async def cancel_run(run_id: RunId) -> Annotated[CallToolResult, RunProgress]:
        """Stop a run: a queued one never starts; a running one stops at once, its script's
        container killed and removed, its reports written (status cancelled,
        interrupted_by 'cancelled')."""
        return await answers.answer(lambda: tools.cancel_run(run_id))

    for tool, hints in (
            (run_task, ToolAnnotations(title="Run a task", open_world_hint=True)),
            (repair, ToolAnnotations(title="Repair a repository", open_world_hint=True)),
            (start_run, ToolAnnotations(title="Start a run", open_world_hint=True)),
            (get_run, ToolAnnotations(title="How a run stands", read_only_hint=True)),
            (cancel_run, ToolAnnotations(title="Cancel a run", idempotent_hint=True))):
        server.add_tool(tool, annotations=hints)


def _add_other_tools(server: MCPServer[Any], tools: Tools, answers: Answers) -> None:
    async def exec_tool(
            ctx: Context,
            script: Annotated[str, Field(description="the Python script's text")],
            script_name: Annotated[str, Field(description="its file name in the work dir")
                                   ] = "script.py",
            contract: ExecutionContract | None = None,
            inputs: Annotated[list[str], Field(description="files under the root, placed "
                                               "beside the script by name")] | None = None,
            timeout_s: Annotated[float | None, Field(description="over the contract's")] = None,
            ) -> Annotated[CallToolResult, ExecResult]:
        """Run one Python script in a fresh locked-down container (no network unless the
        contract says so, no host files but the inputs given, no environment of the
        server's) and judge it: did it run cleanly, did it meet the contract (artifacts,
        stdout). Returns what `selfcorrect exec --json` prints: the verdict, the failure
        category and evidence, exit code, output, artifacts and every check."""
        args = ExecArgs(script, script_name, contract, tuple(inputs or ()), timeout_s)
        job = await answers.attempt(lambda: tools.exec_job(args))
        if isinstance(job, CallToolResult):
            return job
        started = await answers.attempt(lambda: tools.queue.start_beside(job))
        return started if isinstance(started, CallToolResult) else await answers.follow(job,
                                                                                        ctx)

    async def validate(spec: SpecText = None, spec_path: SpecPath = None
                       ) -> Annotated[CallToolResult, ValidationResult]:
        """Check a task spec (its text, or a file under the root) and return every problem
        with its line, column, field and a hint, as `selfcorrect validate` prints them."""
        return await answers.answer(lambda: tools.validate(spec, spec_path))

    async def list_runs(limit: Annotated[int, Field(ge=1, le=200)] = 20
                        ) -> Annotated[CallToolResult, RunList]:
        """The runs of this root (kept in the server's history folder, never under the
        root), this server's and earlier ones', the latest first: status, task, attempts,
        tokens, cost and the paths of their reports."""
        return await answers.answer(lambda: tools.list_runs(limit))

    async def get_audit(run_id: RunId) -> Annotated[CallToolResult, Audit]:
        """A finished run's audit trail (AUDIT.md): every attempt, its code, what failed
        and why, the model calls and their cost. Also readable as the resource
        selfcorrect://runs/{run_id}/AUDIT.md."""
        return await answers.answer(lambda: tools.get_audit(run_id))

    server.add_tool(exec_tool, name="exec",
                    annotations=ToolAnnotations(title="Run a script in the sandbox"))
    for tool in (validate, list_runs, get_audit):
        server.add_tool(tool, annotations=ToolAnnotations(read_only_hint=True))


def _add_resources(server: MCPServer[Any], tools: Tools, answers: Answers) -> None:
    def report(run_id: str, name: str) -> str:
        try:
            return redact(tools.report(run_id, name), secrets=answers.secrets)
        except SelfcorrectError as exc:
            raise ResourceError(str(exc)) from exc

    @server.resource("selfcorrect://runs/{run_id}/AUDIT.md", name="audit",
                     mime_type="text/markdown", description="a run's audit trail (AUDIT.md)")
    def audit(run_id: str) -> str:
        return report(run_id, AUDIT_MD)

    @server.resource("selfcorrect://runs/{run_id}/run.json", name="run-json",
                     mime_type="application/json",
                     description="a run's whole record (run.json, schema in docs/loop.md)")
    def run_json(run_id: str) -> str:
        return report(run_id, RUN_JSON)


def serve(config: ServerConfig, *, max_runs: int) -> int:
    """Serve over stdin and stdout until the client closes them. The protocol runs on a
    thread of its own: the main thread waits for it, where a signal (Ctrl-C, SIGTERM)
    raises, and either way the runs still going are cancelled and waited for (their
    reports written, containers removed). A signal cannot stop the protocol's event loop
    itself: its stdin reader blocks in a thread that nothing but input or EOF ends."""
    environ = dict(config.environ)
    secrets = secrets_from_env(environ)
    queue = JobQueue(workers=max_runs, max_waiting=MAX_WAITING, environ=environ,
                     secrets=secrets).start()
    server = build_server(Tools(config, queue), Answers(secrets, environ))
    print(f"selfcorrect mcp: serving {config.root} on stdio ({config.settings.runtime}, at "
          f"most {max_runs} run(s) at once; runs kept in {config.runs})", file=sys.stderr,
          flush=True)
    failed: list[BaseException] = []

    def protocol() -> None:
        try:
            anyio.run(server.run_stdio_async)
        except BaseException as exc:  # handed to the main thread, which raises it
            failed.append(exc)

    thread = threading.Thread(target=protocol, name="mcp-stdio", daemon=True)
    thread.start()
    try:
        thread.join()
    finally:
        queue.close(STOP_WAIT_S)
    if failed:
        raise failed[0]
    return 0
