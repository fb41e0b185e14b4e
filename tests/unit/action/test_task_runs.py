"""The action's runs, without Docker: dispatched specs go through runs/pipeline.py with a
replayed model, the GitHub stand-in (a real HTTP server) and the container engine played at
the Engine seam by tests/fakes/fake_engine.py. The action publishes what the CLI would
print, and a cancelled job ends as the CLI's does: reports written, nothing published, no
further spec started, the interruption raised (cli.main turns it into 143)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import pytest

from selfcorrect_action.action.context import ActionContext
from selfcorrect_action.action.env import ActionEnv, open_env
from selfcorrect_action.action.handlers import on_dispatch, on_issue_labeled
from selfcorrect_action.action.inputs import ActionInputs
from selfcorrect_action.errors import Interrupted
from selfcorrect_action.github.events import Dispatch, IssueLabeled
from selfcorrect_action.github.naming import approval_marker, body_digest
from selfcorrect_action.loop.state import Status
from selfcorrect_action.report import load_run_json
from selfcorrect_action.report.run_json import RUNS_DIR
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.runs.pipeline import Connections
from selfcorrect_action.verified.header import with_header
from selfcorrect_action.verified.record import parse_record
from tests.fakes.fake_engine import SPEAKS_OUR_PROTOCOL, FakeEngine, Reply
from tests.fakes.github_server import DEFAULT_REPO, WRITE_TOKEN, FakeGitHub
from tests.fakes.replays import fenced, write_replay
from tests.unit.github.conftest import MakeForge

IMAGE = "selfcorrect-sandbox:fake"


def _spec(prompt: str) -> str:
    return json.dumps({
        "prompt": prompt, "output": "hello.py", "judge": False,
        "budget": {"patch_attempts": 1, "rethink_attempts": 0},
        "contract": {"artifacts": [], "stdout_contains": ["hello"], "timeout_s": 30,
                     "memory_mb": 256, "success_criteria": ["it says hello"]},
    })


def _workspace(root: Path, names: list[str]) -> Path:
    tasks = root / ".selfcorrect" / "tasks"
    tasks.mkdir(parents=True)
    (root / "replays").mkdir()
    for name in names:
        prompt = f"Print hello ({name})."
        (tasks / f"{name}.yml").write_text(_spec(prompt))
        write_replay(root / "replays" / f"{name}.jsonl", prompt,
                     [("generate", fenced("print('hello')"))] * 2)
    return root


def _env(workspace: Path, make_forge: MakeForge, fake_github: FakeGitHub, engine: FakeEngine,
         said: list[tuple[str, str]], cancel: CancelToken | None = None) -> ActionEnv:
    context = ActionContext(event_name="workflow_dispatch", event={}, repository=DEFAULT_REPO,
                            api_url=fake_github.api_url, server_url="https://gh.example",
                            workspace=workspace, run_id="9", run_attempt="1",
                            output_file=workspace.parent / "outputs", summary_file=None)
    (workspace.parent / "outputs").write_text("")
    inputs = ActionInputs(github_token=WRITE_TOKEN, replay="replays",
                          sandbox_image=IMAGE)
    return open_env(context, inputs, make_forge(), {}, [WRITE_TOKEN],
                     lambda step, message: said.append((step, message)),
                     cancel=cancel, connections=Connections(engine=engine))


def _printing(text: str) -> FakeEngine:
    return FakeEngine(images={IMAGE: SPEAKS_OUR_PROTOCOL}, behaviour=lambda header: Reply(report={
        "exit_code": 0, "stdout": {"text": text, "total_bytes": len(text)}}))


def test_a_dispatched_spec_that_passes_opens_its_pull_request(
        tmp_path: Path, make_forge: MakeForge, fake_github: FakeGitHub) -> None:
    workspace = _workspace(tmp_path / "workspace", ["hello"])
    said: list[tuple[str, str]] = []
    engine = _printing("hello\n")
    env = _env(workspace, make_forge, fake_github, engine, said)
    trigger = Dispatch(repository=DEFAULT_REPO, actor="maria", ref="main")
    assert on_dispatch(trigger, env) == 0
    pulls = fake_github.pulls(DEFAULT_REPO)
    assert len(pulls) == 1, said
    branch = pulls[0].head.split(":")[-1]
    script = fake_github.read_file(DEFAULT_REPO, branch, "hello.py")
    assert script == with_header("print('hello')\n", spec=".selfcorrect/tasks/hello.yml",
                                 lock=".selfcorrect/lock/hello.json").encode()
    runs = list((workspace / RUNS_DIR).glob("*/run.json"))
    assert len(runs) == 1 and load_run_json(runs[0].read_text()).status.value == "passed"
    # The commit carries what was verified: the script as committed, header in (issue 36).
    committed = fake_github.read_file(DEFAULT_REPO, branch, ".selfcorrect/lock/hello.json")
    assert committed is not None
    record = parse_record(committed.decode(), "r")
    assert record.spec == ".selfcorrect/tasks/hello.yml" and record.script.path == "hello.py"
    assert record.script.sha256 == hashlib.sha256(script).hexdigest()
    assert record.run_record == f"{RUNS_DIR}/{record.run_id}/run.json"
    assert fake_github.read_file(DEFAULT_REPO, branch, record.run_record)
    assert engine.containers == {}
    (check,) = fake_github.check_runs(DEFAULT_REPO)
    assert (check.head_sha, check.conclusion, check.name) == (
        pulls[0].head_sha, "success", "selfcorrect / .selfcorrect/tasks/hello.yml")
    assert "| # | strategy |" in (check.summary or "")
    assert f"blob/{branch}/.selfcorrect/runs/" in (check.summary or "")
    assert check.details_url == "https://gh.example/octo-org/hello-world/actions/runs/9"


def test_a_spec_that_fails_gets_a_red_check_on_its_draft(
        tmp_path: Path, make_forge: MakeForge, fake_github: FakeGitHub) -> None:
    workspace = _workspace(tmp_path / "workspace", ["hello"])
    write_replay(workspace / "replays" / "hello.jsonl", "Print hello (hello).",
                 [("generate", fenced("print('bye')")), ("repair", fenced("print('bye!')"))])
    said: list[tuple[str, str]] = []
    env = _env(workspace, make_forge, fake_github, _printing("bye\n"), said)
    env = replace(env, inputs=env.inputs.model_copy(update={"draft_on_failure": True}))
    trigger = Dispatch(repository=DEFAULT_REPO, actor="maria", ref="main")
    assert on_dispatch(trigger, env) == 1, said
    (pull,) = fake_github.pulls(DEFAULT_REPO)
    (check,) = fake_github.check_runs(DEFAULT_REPO)
    assert pull.draft and (check.head_sha, check.conclusion) == (pull.head_sha, "failure")
    assert (check.title or "").startswith("failed: budget exhausted")


def test_a_token_without_checks_write_still_publishes_and_warns(
        tmp_path: Path, make_forge: MakeForge, fake_github: FakeGitHub,
        capsys: pytest.CaptureFixture[str]) -> None:
    workspace = _workspace(tmp_path / "workspace", ["hello"])
    said: list[tuple[str, str]] = []
    fake_github.add_token("ghs_no_checks", without={"checks"})
    env = _env(workspace, make_forge, fake_github, _printing("hello\n"), said)
    summary = tmp_path / "summary.md"
    # The door is opened with the job's forge: the whole env again, with the other token.
    env = open_env(env.context.model_copy(update={"summary_file": summary}), env.inputs,
                   make_forge(token="ghs_no_checks"), env.environ, env.secrets, env.say,
                   cancel=env.cancel, connections=env.connections)
    trigger = Dispatch(repository=DEFAULT_REPO, actor="maria", ref="main")
    assert on_dispatch(trigger, env) == 0
    assert "**Check run:** no check run: the token may not write checks" in summary.read_text()
    assert len(fake_github.pulls(DEFAULT_REPO)) == 1
    assert fake_github.check_runs(DEFAULT_REPO) == []
    warning = [line for line in capsys.readouterr().out.splitlines()
               if line.startswith("::warning")]
    assert len(warning) == 1 and "checks: write" in warning[0]
    assert any("checks: write" in message for step, message in said if step == "publish")


def test_a_cancelled_job_publishes_nothing_and_starts_no_further_spec(
        tmp_path: Path, make_forge: MakeForge, fake_github: FakeGitHub) -> None:
    workspace = _workspace(tmp_path / "workspace", ["first", "second"])
    said: list[tuple[str, str]] = []
    token = CancelToken()

    def cancel_while_running(header: dict[str, object]) -> Reply:
        token.cancel("SIGTERM")  # the job is cancelled while the first script runs
        return Reply(report={"exit_code": 0, "stdout": {"text": "bye\n", "total_bytes": 4}})

    engine = FakeEngine(images={IMAGE: SPEAKS_OUR_PROTOCOL}, behaviour=cancel_while_running)
    env = _env(workspace, make_forge, fake_github, engine, said, token)
    trigger = Dispatch(repository=DEFAULT_REPO, actor="maria", ref="main")
    with pytest.raises(Interrupted) as raised:
        on_dispatch(trigger, env)
    assert raised.value.exit_code == 143
    assert fake_github.pulls(DEFAULT_REPO) == []
    # No branch, no lock: only the interrupted run's checkpoint, to resume it (issue 37).
    (kept,) = [ref for ref in fake_github.refs(DEFAULT_REPO) if "selfcorrect" in ref]
    assert kept.startswith("refs/selfcorrect/checkpoints/spec-selfcorrect-tasks-first-yml-")
    tasks = [message for step, message in said if step == "task"]
    assert len(tasks) == 1 and "first" in tasks[0], "the second spec was never started"
    runs = list((workspace / RUNS_DIR).glob("*/run.json"))
    assert len(runs) == 1
    state = load_run_json(runs[0].read_text())
    assert state.interrupted_by == "SIGTERM" and len(state.attempts) == 1
    assert state.status is Status.CANCELLED
    assert len(list(runs[0].parent.glob("selfcorrect-*.html"))) == 1  # its page too
    assert engine.containers == {}
    assert _output((tmp_path / "outputs").read_text(), "status") == "cancelled"


def test_a_cancelled_issue_run_says_cancelled_on_the_issue_and_drops_its_running_label(
        tmp_path: Path, make_forge: MakeForge, fake_github: FakeGitHub) -> None:
    workspace = _workspace(tmp_path / "workspace", [])
    prompt = "Print hello (issue)."
    write_replay(workspace / "replays" / "issue-1.jsonl", prompt,
                 [("generate", fenced("print('hello')"))] * 2)
    body = f"```yaml\n{_spec(prompt)}\n```\n"
    fake_github.add_collaborator(DEFAULT_REPO, "maria", "write")
    number = fake_github.add_issue(DEFAULT_REPO, "Hello", body, labels=["selfcorrect"])
    said: list[tuple[str, str]] = []
    token = CancelToken()

    def cancel_while_running(header: dict[str, object]) -> Reply:
        token.cancel("SIGTERM")
        return Reply(report={"exit_code": 0, "stdout": {"text": "bye\n", "total_bytes": 4}})

    engine = FakeEngine(images={IMAGE: SPEAKS_OUR_PROTOCOL}, behaviour=cancel_while_running)
    env = _env(workspace, make_forge, fake_github, engine, said, token)
    trigger = IssueLabeled(repository=DEFAULT_REPO, actor="maria", number=number,
                           title="Hello", body=body)
    with pytest.raises(Interrupted):
        on_issue_labeled(trigger, env)
    (comment,) = fake_github.comments(DEFAULT_REPO, number)
    assert "**Cancelled** (SIGTERM" in comment.body and "Nothing was published" in comment.body
    assert "after 1 attempt." in comment.body and "Updated as the run goes" not in comment.body
    assert approval_marker(body_digest(body)) in comment.body  # a retry may still run it
    assert "selfcorrect:running" not in fake_github.labels(DEFAULT_REPO, number)
    assert fake_github.pulls(DEFAULT_REPO) == []


def test_each_run_leaves_its_page_and_names_it_in_viewer_path(
        tmp_path: Path, make_forge: MakeForge, fake_github: FakeGitHub) -> None:
    """A Docker action cannot upload: the page goes beside the run's reports in the
    workspace, `viewer-path` names it for the workflow's upload step, the job summary too."""
    import io

    from PIL import Image

    picture = io.BytesIO()
    Image.new("RGB", (32, 24), "blue").save(picture, format="PNG")
    workspace = _workspace(tmp_path / "workspace", ["hello"])
    said: list[tuple[str, str]] = []
    engine = FakeEngine(images={IMAGE: SPEAKS_OUR_PROTOCOL}, behaviour=lambda header: Reply(
        report={"exit_code": 0, "stdout": {"text": "hello\n", "total_bytes": 6}},
        files={"plot.png": picture.getvalue()}))
    env = _env(workspace, make_forge, fake_github, engine, said)
    summary = tmp_path / "summary.md"
    event = {"repository": {"full_name": DEFAULT_REPO, "private": False, "visibility": "public"}}
    env = replace(env, context=env.context.model_copy(update={"summary_file": summary,
                                                              "event": event}))
    assert on_dispatch(Dispatch(repository=DEFAULT_REPO, actor="maria", ref="main"), env) == 0
    outputs = (tmp_path / "outputs").read_text()
    (run,) = list((workspace / RUNS_DIR).glob("*/run.json"))
    state = load_run_json(run.read_text())
    page = f"{RUNS_DIR}/{state.run_id}/selfcorrect-task-hello-{state.run_id}.html"
    assert "viewer-path<<" in outputs and f"\n{page}\n" in outputs
    html = (workspace / page).read_text()
    assert "data:image/png;base64," in html and "Content-Security-Policy" in html
    assert json.loads(_output(outputs, "results"))[0]["viewer_path"] == page
    assert f"Attempt viewer: `{page}`" in summary.read_text()
    assert state.origin is not None and (state.origin.repository, state.origin.visibility) == (
        DEFAULT_REPO, "public")


def test_a_repository_whose_visibility_is_not_said_counts_as_private() -> None:
    from selfcorrect_action.action.task_run import origin

    def context(event: dict[str, object]) -> ActionContext:
        return ActionContext(event_name="issues", event=event, repository="o/r", api_url="",
                             server_url="", workspace=Path("."), run_id="1", run_attempt="1",
                             output_file=None, summary_file=None)

    assert origin(context({})).visibility == "private"
    assert origin(context({"repository": {"private": False}})).visibility == "public"
    assert origin(context({"repository": {"visibility": "internal"}})).visibility == "internal"
    assert origin(context({"repository": "o/r"})).visibility == "private"


def _output(text: str, name: str) -> str:
    """One output from a GITHUB_OUTPUT file (name<<DELIMITER ... DELIMITER)."""
    _, _, rest = text.partition(f"{name}<<")
    delimiter, _, body = rest.partition("\n")
    return body.split(f"\n{delimiter}", 1)[0]
