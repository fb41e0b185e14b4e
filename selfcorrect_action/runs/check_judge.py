"""The model `selfcorrect check --judge` asks (issue 36, item 2), opened from the run
settings as `selfcorrect run` opens its own: each stale spec's models resolved as its run
would resolve them (flags, the spec's `models:`, SELFCORRECT_MODEL, a provider key;
runs/prepare.py), the same refusals before anything is spent (no model configured, a name
nothing routes, a replay made for other tasks), and the client a run's settings ask for
(runs/session.py: live, or a replay). One replay serves the whole check: each spec's
client plays on from the exchange the previous spec's judge stopped at."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from selfcorrect_action.llm.base import LLM
from selfcorrect_action.llm.models import ChatRequest, ChatResponse, ModelTiers
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.runs.prepare import check_models, check_replay_fits, resolve_models
from selfcorrect_action.runs.session import RunEvents, detected, llm_client, loop_deps
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.runs.stoppable import StoppableLLM
from selfcorrect_action.spec import LoadedSpec
from selfcorrect_action.verified.check_judge import JudgeModel

Say = Callable[[str], None]


class RunJudgeModels:
    """verified/check_judge.py's JudgeModels, from a run's settings. Constructing it does no
    I/O; each `model_for` opens a client (a live one probes --api-base once per check)."""

    def __init__(self, settings: RunSettings, *, environ: Mapping[str, str],
                 secrets: Sequence[str], cancel: CancelToken, say: Say) -> None:
        self.settings = settings
        self._environ = environ
        self._secrets = list(secrets)
        self._cancel = cancel
        self._say = say
        self._probed: RunSettings | None = None
        self.calls = 0  # model calls made so far: where the next spec's replay goes on

    def prepare(self, stale: Sequence[LoadedSpec]) -> None:
        for loaded in stale:
            check_models(self._models(loaded), self.settings)
            if self.settings.replay is not None:
                check_replay_fits(self.settings.replay, loaded.spec.prompt,
                                  secrets=self._secrets)

    def model_for(self, loaded: LoadedSpec) -> JudgeModel:
        models = self._models(loaded)
        settings = self._detected(models)
        llm = StoppableLLM(_Counted(llm_client(
            models, settings, secrets=self._secrets, replay_from=self.calls,
            on_wait=lambda message: self._say(f"{loaded.source}: {message}")), self),
            self._cancel)

        def with_model(deps: Deps) -> Deps:
            return loop_deps(llm, deps.sandbox, deps.work_root, settings, inputs=deps.inputs,
                             events=RunEvents(on_event=deps.on_event), cancel=self._cancel)
        return JudgeModel(models=models, with_model=with_model)

    def _models(self, loaded: LoadedSpec) -> ModelTiers:
        return resolve_models(loaded, self.settings, self._environ)

    def _detected(self, models: ModelTiers) -> RunSettings:
        if self._probed is None:
            self._probed, _ = detected(self.settings, models,
                                       lambda step, message: self._say(message))
        return self._probed


class _Counted:
    """Counts the calls a spec's judge made, answered or not (a malformed answer asked
    again is a second exchange of a replay)."""

    def __init__(self, inner: LLM, owner: RunJudgeModels) -> None:
        self._inner = inner
        self._owner = owner

    def complete(self, request: ChatRequest) -> ChatResponse:
        self._owner.calls += 1
        return self._inner.complete(request)
