"""One run's connections to the outside, opened together and closed together: the model
client (or its replay), the Docker engine, the sandbox image and a warm sandbox, and a
scratch folder for the attempts' files. Constructing a RunSession does no I/O; `with` opens
it, `run` drives the loop, leaving closes everything (containers removed, scratch deleted),
so a front end only decides what to show and where to publish."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from selfcorrect_action.llm.base import LLM
from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.llm.retry import RetryPolicy
from selfcorrect_action.loop.budget import LimitsFn, PriceFn, no_limits, unpriced_cost_cap
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.orchestrator import run_loop
from selfcorrect_action.loop.state import RunState
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.sandbox import engine
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.image import ensure_image, require_image
from selfcorrect_action.sandbox.models import InputFile, Limits
from selfcorrect_action.spec import LoadedSpec


def _ignore_event(step: str, message: str) -> None:
    return None


def _ignore_state(state: RunState) -> None:
    return None


@dataclass(frozen=True)
class RunEvents:
    """What a front end hears while a run goes on; it never decides anything."""

    on_event: Callable[[str, str], None] = _ignore_event  # (step, message) progress lines
    on_state: Callable[[RunState], None] = _ignore_state  # after the plan and every attempt


class RunSession:
    def __init__(self, loaded: LoadedSpec, models: ModelTiers, settings: RunSettings, *,
                 environ: Mapping[str, str], secrets: Sequence[str],
                 events: RunEvents | None = None) -> None:
        self.loaded = loaded
        self.models = models
        self.settings = settings
        self._environ = environ
        self._secrets = list(secrets)
        self.events = events or RunEvents()
        self._stack = contextlib.ExitStack()
        self._deps: Deps | None = None

    def __enter__(self) -> RunSession:
        try:
            self._deps = self._open()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._deps = None
        self._stack.close()

    @property
    def work_root(self) -> Path:
        """Where attempt N's files are (attempt-N/run/...), until the session closes."""
        return self._opened().work_root

    def run(self, state: RunState) -> RunState:
        deps = self._opened()
        for warning in unpriced_cost_cap(state.budget.cost_usd, self.models, deps.price,
                                         replaying=self.settings.replaying):
            deps.on_event("budget", warning)
        return run_loop(state, deps)

    def _opened(self) -> Deps:
        if self._deps is None:
            raise RuntimeError("the run session is not open: use it in a `with` block")
        return self._deps

    def _open(self) -> Deps:
        llm = self._llm()
        client = self._stack.enter_context(contextlib.closing(engine.connect(self._environ)))
        say = self.events.on_event
        image = (require_image(client, self.settings.sandbox_image)
                 if self.settings.sandbox_image else
                 ensure_image(client, progress=lambda line: say("sandbox", line)))
        sandbox = self._stack.enter_context(Sandbox(client, image, pool_size=1))
        contract = self.loaded.spec.contract
        sandbox.warm(Limits(memory_mb=contract.memory_mb, network=contract.network),
                     self.settings.runtime)
        scratch = self._stack.enter_context(
            tempfile.TemporaryDirectory(prefix="selfcorrect-run-"))
        return Deps(llm=llm, sandbox=sandbox, work_root=Path(scratch),
                    inputs=_inputs(self.loaded), price=_price(),
                    limits=no_limits if self.settings.replaying else _limits(),
                    sees_images=_sees_images(),
                    on_event=say, on_state=self.events.on_state)

    def _llm(self) -> LLM:
        from selfcorrect_action.llm.factory import client_for  # litellm loads on first call

        settings = self.settings
        return client_for(
            self.models, replay=settings.replay, record=settings.record,
            api_base=settings.api_base, timeout_s=settings.llm_timeout_s,
            retry=RetryPolicy(max_attempts=settings.llm_retries + 1), secrets=self._secrets,
            on_wait=lambda message: self.events.on_event("llm", message),
            structured=settings.structured_output,
        )


def _inputs(loaded: LoadedSpec) -> list[InputFile]:
    return [InputFile(path=path.name, data=path.read_bytes()) for path in loaded.input_paths]


def _sees_images() -> Callable[[str], bool]:
    from selfcorrect_action.llm.limits import supports_images

    return supports_images


def _limits() -> LimitsFn:
    from selfcorrect_action.llm.limits import model_limits

    def limits(model: str) -> tuple[int | None, int | None]:
        known = model_limits(model)
        return known.context_tokens, known.answer_tokens
    return limits


def _price() -> PriceFn:
    from selfcorrect_action.llm.pricing import price_usd

    return price_usd
