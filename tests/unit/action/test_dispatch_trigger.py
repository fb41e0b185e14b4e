"""workflow_dispatch through the action's entry point: which specs it finds, and how each
one that cannot run is reported in the job log (a dispatch has no issue to comment on)
while the others still go ahead. No Docker: every task stops before its sandbox."""

from __future__ import annotations

from typing import Any

import pytest

from selfcorrect_action.errors import UsageError
from tests.e2e.action.harness import MAINTAINER
from tests.fakes.github_server import DEFAULT_REPO, FakeGitHub
from tests.unit.action.conftest import Act, InProcessRun


def _dispatch(act: Act, github: FakeGitHub, specs: dict[str, str],
              **given: Any) -> InProcessRun:
    if specs:
        github.commit_files(DEFAULT_REPO, "main", specs, message="specs")
    return act("workflow_dispatch", github.event("workflow_dispatch", DEFAULT_REPO,
                                                 sender=MAINTAINER), **given)


def test_a_glob_that_matches_nothing_fails_and_says_so(act: Act, github: FakeGitHub) -> None:
    run = _dispatch(act, github, {})
    assert run.code == 1
    assert "::error title=selfcorrect::no task spec matches '.selfcorrect/tasks/*.yml'" \
        in run.stdout
    assert [r for r in github.requests if r.method != "GET"] == []


def test_a_bad_spec_is_annotated_and_the_good_one_still_starts(act: Act,
                                                               github: FakeGitHub) -> None:
    run = _dispatch(act, github, {".selfcorrect/tasks/bad.yml": "prompt: x\nkind: scirpt\n",
                                  ".selfcorrect/tasks/good.yml": "prompt: print hello\n"})
    assert "::error file=.selfcorrect/tasks/bad.yml,line=2,col=1" in run.stdout
    assert "task: .selfcorrect/tasks/good.yml -> selfcorrect/task-good" in run.stdout
    assert "::error::.selfcorrect/tasks/good.yml: no model is configured" in run.stdout
    assert run.code == 2 and run.outputs["status"] == "error"
    assert github.pulls(DEFAULT_REPO) == []


def test_one_recording_for_two_specs_is_refused_for_each(act: Act, github: FakeGitHub) -> None:
    run = _dispatch(act, github, {".selfcorrect/tasks/a.yml": "prompt: a\n",
                                  ".selfcorrect/tasks/b.yml": "prompt: b\n",
                                  "replays/a.jsonl": "{}\n"}, replay="replays/a.jsonl")
    assert run.code == 1
    for name in ("a", "b"):
        assert (f"::error file=.selfcorrect/tasks/{name}.yml::input replay names one "
                "recording (replays/a.jsonl) but 2 task specs are to run") in run.stdout
    assert "task:" not in run.stdout


def test_a_replay_folder_without_the_specs_recording_is_refused(act: Act,
                                                                github: FakeGitHub) -> None:
    run = _dispatch(act, github, {".selfcorrect/tasks/a.yml": "prompt: a\n",
                                  "replays/other.jsonl": "{}\n"}, replay="replays")
    assert run.code == 1
    assert "the folder replays has no a.jsonl for .selfcorrect/tasks/a.yml" in run.stdout


def test_a_tasks_glob_outside_the_repository_is_a_usage_error(act: Act,
                                                              github: FakeGitHub) -> None:
    with pytest.raises(UsageError, match="must be a glob inside the repository"):
        _dispatch(act, github, {}, tasks="../*.yml")
