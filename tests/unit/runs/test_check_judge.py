"""The model `selfcorrect check --judge` asks (runs/check_judge.py, issue 36 item 2), opened
from the run settings as a run opens its own: refused before anything is spent when no
model is configured (the hint `selfcorrect run` gives) or the replay was made for other
tasks; each spec's judge tier resolved as its run would; and one replay serving the whole
check, through litellm's replay provider, each spec's client playing on where the last
one stopped."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfcorrect_action.errors import UsageError
from selfcorrect_action.llm.models import ChatMessage, ChatRequest
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.runs.check_judge import RunJudgeModels
from selfcorrect_action.runs.prepare import NO_MODEL_HINT
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.sandbox.models import ExecutionRequest, ExecutionResult
from selfcorrect_action.spec import LoadedSpec, load_spec_text
from selfcorrect_action.verified.reverify import NoModel
from tests.fakes.replays import write_replay

FIRST = "Print the totals per region."
SECOND = "Print the totals per month."


class NoSandbox:
    def run(self, request: ExecutionRequest, artifact_dir: Path) -> ExecutionResult:
        raise AssertionError("nothing runs here")


def loaded(tmp_path: Path, prompt: str, extra: str = "") -> LoadedSpec:
    return load_spec_text(f"prompt: {prompt}\noutput: out.py\n{extra}", "t.yml",
                          root=tmp_path, name="t.yml")


def judges(settings: RunSettings, environ: dict[str, str] | None = None) -> RunJudgeModels:
    return RunJudgeModels(settings, environ=environ or {}, secrets=[], cancel=CancelToken(),
                          say=lambda line: None)


def test_no_model_configured_is_refused_with_runs_hint(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no model is configured") as raised:
        judges(RunSettings()).prepare([loaded(tmp_path, FIRST)])
    assert raised.value.hint == NO_MODEL_HINT


def test_a_model_from_the_spec_or_a_variable_is_configured(tmp_path: Path) -> None:
    spec = loaded(tmp_path, FIRST, "models: {judge: openai/gpt-4o-mini}\n")
    keyed = {"OPENAI_API_KEY": "sk-test"}  # a hosted model without its key is refused
    judges(RunSettings(), keyed).prepare([spec])
    found = judges(RunSettings(fallback_model="openai/gpt-4o"), keyed).model_for(
        loaded(tmp_path, FIRST))
    assert found.models.judge == "openai/gpt-4o"
    assert judges(RunSettings(), keyed).model_for(spec).models.judge == "openai/gpt-4o-mini"
    with pytest.raises(UsageError, match="OPENAI_API_KEY is not set"):
        judges(RunSettings()).prepare([spec])


def test_a_replay_made_for_another_task_is_refused(tmp_path: Path) -> None:
    replay = write_replay(tmp_path / "judge.jsonl", "Something else entirely",
                          [("judge", "{}")])
    with pytest.raises(UsageError, match="made for a different task"):
        judges(RunSettings(replay=replay)).prepare([loaded(tmp_path, FIRST)])


def test_one_replay_plays_on_from_spec_to_spec(tmp_path: Path) -> None:
    replay = tmp_path / "judge.jsonl"
    write_replay(replay, f"{FIRST}\n{SECOND}", [("judge", "first answer"),
                                                ("judge", "second answer")])
    models = judges(RunSettings(replay=replay))
    specs = [loaded(tmp_path, FIRST), loaded(tmp_path, SECOND)]
    models.prepare(specs)
    answers = []
    for spec in specs:
        deps = models.model_for(spec).with_model(
            Deps(llm=NoModel(), sandbox=NoSandbox(), work_root=tmp_path))
        answers.append(deps.llm.complete(ChatRequest(purpose="judge", tier="judge", messages=(
            ChatMessage(role="user", content=spec.spec.prompt),))).text)
    assert answers == ["first answer", "second answer"]
    assert models.calls == 2
