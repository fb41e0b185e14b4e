"""Handler decisions that end before any run (no Docker): refusals, approvals, collisions,
and what a publish job may apply. Against the GitHub stand-in, through the real adapter."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfcorrect_action.action.context import ActionContext
from selfcorrect_action.action.env import ActionEnv, open_env
from selfcorrect_action.action.handlers import on_dispatch, on_retry
from selfcorrect_action.action.inputs import ActionInputs
from selfcorrect_action.action.writes.live import LiveComment
from selfcorrect_action.action.writes.plan import PlannedComment, WritePlan
from selfcorrect_action.action.writes.targets import publish_targets
from selfcorrect_action.errors import SpecError
from selfcorrect_action.github.events import Dispatch, IssueLabeled, RetryComment
from selfcorrect_action.github.naming import approval_marker, body_digest, report_marker
from tests.fakes.github_server import BOT_LOGIN, DEFAULT_REPO, FakeGitHub
from tests.unit.github.conftest import MakeForge

BODY = "```yaml\nprompt: say hi\n```\n"


@pytest.fixture
def env(tmp_path: Path, make_forge: MakeForge, fake_github: FakeGitHub) -> ActionEnv:
    fake_github.add_user("maria")
    fake_github.add_collaborator(DEFAULT_REPO, "maria", "write")
    context = ActionContext(event_name="issue_comment", event={}, repository=DEFAULT_REPO,
                            api_url=fake_github.api_url, server_url="https://gh.example",
                            workspace=tmp_path, run_id="9", run_attempt="1",
                            output_file=tmp_path / "out", summary_file=None)
    (tmp_path / "out").write_text("")
    said: list[tuple[str, str]] = []
    return open_env(context, ActionInputs(github_token="t"), make_forge(), {}, [],
                     lambda step, message: said.append((step, message)))


def _retry(number: int, *, on_pr: bool = False) -> RetryComment:
    return RetryComment(repository=DEFAULT_REPO, actor="maria", number=number,
                        on_pull_request=on_pr, comment_id=1, guidance="")


def test_a_retry_after_an_unreviewed_edit_is_refused(env: ActionEnv,
                                                     fake_github: FakeGitHub) -> None:
    number = fake_github.add_issue(DEFAULT_REPO, "x", BODY, user="visitor")
    env.forge.create_comment(number, f"{report_marker('run=1.1')}\n"
                                     f"{approval_marker(body_digest(BODY))}\nreport")
    fake_github.state.repo(DEFAULT_REPO).issues[number].body = (  # type: ignore[union-attr]
        BODY.replace("say hi", "say hi\ncontract: {network: open}"))
    assert on_retry(_retry(number), env) == 0
    last = fake_github.comments(DEFAULT_REPO, number)[-1]
    assert "changed after its" in last.body and "label again" in last.body


def test_an_approval_in_someone_elses_comment_counts_for_nothing(
    env: ActionEnv, fake_github: FakeGitHub
) -> None:
    fake_github.add_user("mallory")
    number = fake_github.add_issue(DEFAULT_REPO, "x", BODY, user="mallory")
    fake_github.add_comment(DEFAULT_REPO, number, approval_marker(body_digest(BODY)),
                            user="mallory")
    assert on_retry(_retry(number), env) == 0
    assert "no run started by its label" in fake_github.comments(DEFAULT_REPO, number)[-1].body


def test_specs_that_would_share_a_branch_are_refused(env: ActionEnv,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    for folder in ("a", "b"):
        (env.context.workspace / ".selfcorrect/tasks" / folder).mkdir(parents=True)
        (env.context.workspace / ".selfcorrect/tasks" / folder / "report.yml").write_text(
            "prompt: p\n")
    env = open_env(env.context, ActionInputs(github_token="t",
                                              tasks=".selfcorrect/tasks/**/*.yml"),
                    env.forge, {}, [], env.say)
    trigger = Dispatch(repository=DEFAULT_REPO, actor="maria", ref="refs/heads/main")
    assert on_dispatch(trigger, env) == 1
    out = capsys.readouterr().out
    assert out.count("its branch name selfcorrect/task-report is also that of") == 2


def test_a_spec_linked_outside_the_repository_is_not_read(env: ActionEnv,
                                                          tmp_path_factory: pytest.TempPathFactory
                                                          ) -> None:
    from selfcorrect_action.spec import load_repo_spec

    secret = tmp_path_factory.mktemp("elsewhere") / "netrc"
    secret.write_text("machine x password Hunter2Secret99\n")
    (env.context.workspace / "spec.yml").symlink_to(secret)
    with pytest.raises(SpecError) as caught:
        load_repo_spec(env.context.workspace, "spec.yml")
    assert "outside the repository" in caught.value.problems[0]
    assert "Hunter2" not in caught.value.problems[0]


def test_a_publish_job_applies_only_plans_for_its_own_event(env: ActionEnv,
                                                            fake_github: FakeGitHub) -> None:
    targets = publish_targets(IssueLabeled(repository=DEFAULT_REPO, actor="maria",
                                           number=4, title="t", body="b"), env)
    marker = report_marker("run=1.1 task=selfcorrect/issue-4")
    own = WritePlan(repository=DEFAULT_REPO, task="t", status="passed",
                    comment=PlannedComment(number=4, marker=marker, body="x"))
    other = own.model_copy(update={"comment": PlannedComment(number=77, marker=marker,
                                                              body="x")})
    assert targets.problem_with(own) is None
    assert "#77" in (targets.problem_with(other) or "")


def test_the_live_comment_writes_nothing_after_its_final_body(
    env: ActionEnv, fake_github: FakeGitHub
) -> None:
    number = fake_github.add_issue(DEFAULT_REPO, "x", "b")
    live = LiveComment(env.forge, number, report_marker("run=1.1"), task="t", run_url="u",
                       guidance="", secrets=[], min_interval_s=0)
    live.start()
    live.on_event("llm", "waiting for the plan answer: 5 s so far")
    assert "waiting for the plan answer" in fake_github.comments(DEFAULT_REPO, number)[0].body
    from selfcorrect_action.llm.models import ModelTiers
    from selfcorrect_action.loop.state import RunState
    from selfcorrect_action.spec import TaskSpec

    spec = TaskSpec(prompt="p")
    final = live.final_body(RunState(run_id="r", started_at="t", spec_source="s",
                                     spec=spec, output_name="x.py", contract=spec.contract,
                                     models=ModelTiers()))
    requests_before = len(fake_github.requests)
    live.on_event("llm", "a late notice")  # from the wait thread, after the end
    assert len(fake_github.requests) == requests_before
    assert "Finished" in final
    assert fake_github.comments(DEFAULT_REPO, number)[0].user == BOT_LOGIN
