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

from selfcorrect_action.errors import SelfcorrectError
from selfcorrect_action.llm.base import LLM
from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.llm.recording import RecordingMark
from selfcorrect_action.llm.retry import RetryPolicy
from selfcorrect_action.llm.server_probe import ServerInfo
from selfcorrect_action.loop.budget import LimitsFn, PriceFn, no_limits, unpriced_cost_cap
from selfcorrect_action.loop.deps import Deps, Executor, no_price
from selfcorrect_action.loop.orchestrator import run_loop
from selfcorrect_action.loop.state import RunState
from selfcorrect_action.loop.windows import ContextWindows
from selfcorrect_action.records import evolve
from selfcorrect_action.repair.repository import Snapshot
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.runs.checkpoint import CheckpointWriter, prune
from selfcorrect_action.runs.model_fit import fitted
from selfcorrect_action.runs.orchestration import drive_for
from selfcorrect_action.runs.resume import Keeping, resumed_line, with_played_back
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.runs.stoppable import StoppableExecutor, StoppableLLM
from selfcorrect_action.sandbox import engine, preload
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.derived_image import ensure_derived
from selfcorrect_action.sandbox.egress.policy import settings_from_environ
from selfcorrect_action.sandbox.engine_api import Engine
from selfcorrect_action.sandbox.identity import (
    ImageIdentity,
    cache_path,
    default_cache_dir,
    image_identity,
    read_cached,
)
from selfcorrect_action.sandbox.image import HASH_LABEL, ensure_image
from selfcorrect_action.sandbox.models import InputFile, Limits
from selfcorrect_action.sandbox.prebuilt import require_image
from selfcorrect_action.spec import LoadedSpec, TaskSpec


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
    """`llm`, `engine` and `sandbox` may be handed in (a benchmark shares one sandbox and one
    recording client over a problem's calls; tests pass stand-ins at the Engine seam): what
    was handed in is used and left open, what the session opened it closes."""

    def __init__(self, models: ModelTiers, settings: RunSettings, *, limits: Limits,
                 inputs: Sequence[InputFile] = (), environ: Mapping[str, str],
                 secrets: Sequence[str], events: RunEvents | None = None,
                 cancel: CancelToken | None = None, llm: LLM | None = None,
                 engine: Engine | None = None, sandbox: Executor | None = None,
                 priced: bool = True, server: ServerInfo | None = None,
                 task_prompt: str = "", replay_from: int = 0,
                 traced: Callable[[LLM], LLM] | None = None,
                 repository: Snapshot | None = None, requirements: str | None = None,
                 fit_note: dict[str, str] | None = None,
                 preload_guess: tuple[str, ...] | None = None,
                 keeping: Keeping | None = None) -> None:
        self.models = models
        self.settings = settings
        self._limits = limits
        self._inputs = list(inputs)
        self._environ = environ
        self._secrets = list(secrets)
        self.events = events or RunEvents()
        self.cancel = cancel or CancelToken()
        self._given = (llm, engine, sandbox)
        self._priced = priced
        self._repository = repository
        self._requirements = requirements
        self._stack = contextlib.ExitStack()
        self._deps: Deps | None = None
        # The engine and image the session opened its sandbox on ("": a sandbox was handed
        # in, and which image it runs is its caller's to say).
        self._engine: Engine | None = None
        self._image = ""
        self.server = server  # what answered at --api-base, if asked
        self._task_prompt = task_prompt
        # What the first pooled container preloads (first_preload); None: the data libraries.
        self._preload_guess = preload_guess
        # How the run asks for code, once run() decided; a recording's header says it.
        self._fit: dict[str, str] = fit_note if fit_note is not None else {}
        # Where a replay starts: a resumed run's calls so far were its first exchanges.
        self._replay_from = replay_from
        # What wraps the model client (each call an MLflow trace), on the calling thread.
        self._traced = traced or (lambda llm: llm)
        # Where the run keeps its checkpoint and recording (runs/resume.py), once open.
        self._keeping = keeping
        self._checkpoint: CheckpointWriter | None = None

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

    @property
    def llm(self) -> LLM:
        return self._opened().llm

    @property
    def deps(self) -> Deps:
        """What the loop's steps get, opened: to run them under another orchestrator, or as
        nodes of a larger LangGraph application (docs/langgraph.md)."""
        return self._opened()

    def run(self, state: RunState) -> RunState:
        deps = self._opened()
        state = fitted(state, self.settings, self.server, recorded_fit(self.settings))
        self._fit.update(profile=state.profile, generation=state.generation,
                         redraws=str(state.redraws),
                         profile_open="1" if state.profile_open else "0")
        if state.profile != "standard" or state.generation != "chat":
            deps.on_event("llm", f"asking for code with the {state.profile} profile, "
                          f"{state.generation} generation")
        for warning in unpriced_cost_cap(state.budget.cost_usd, self.models, deps.price,
                                         replaying=self.settings.replaying):
            deps.on_event("budget", warning)
        self._say_kept(state)
        state = run_loop(state, deps, drive=drive_for(self.settings, state, deps.on_event))
        if self._keeping is not None and self._keeping.resumed is not None:
            state = with_played_back(state, self._keeping.resumed.played_back)
        if self._checkpoint is not None:
            self._checkpoint.end(state)
        return state

    def _say_kept(self, state: RunState) -> None:
        """Said first: a run killed outright (SIGKILL, a lost machine) prints nothing after."""
        say = self.events.on_event
        if state.resumes:
            say("resume", resumed_line(state))
        if self._checkpoint is None:
            if self._keeping is None and not self.settings.replaying:
                say("resume", "this run keeps no checkpoint (no history folder): if it "
                    "stops, it cannot be resumed; pass --history DIR to keep one")
            return
        recorded = "and every model exchange " if self._checkpoint.mark is not None else ""
        say("resume", f"run {state.run_id}: each finished step {recorded}is kept in "
            f"{self._checkpoint.folder}; if the run stops, `--resume {state.run_id}` goes "
            "on from there")

    def image_identity(self, *, list_packages: bool) -> ImageIdentity | None:
        """The identity of the image the run's sandbox ran (issue 36); None when the
        sandbox was handed in, or the engine no longer knows the image. `list_packages`:
        list what is installed in it when no earlier listing of that image is cached (a
        container, about a second; a run that publishes into a repository records it).
        A listing that fails costs the run nothing: the identity then holds no packages,
        and the event says why."""
        if self._engine is None or not self._image:
            return None
        try:
            if list_packages:
                return image_identity(self._engine, self._image, environ=self._environ)
            return known_identity(self._engine, self._image, environ=self._environ)
        except SelfcorrectError as exc:
            self.events.on_event("sandbox", f"the image's installed packages were not listed: "
                                 f"{exc.message}")
            try:
                return known_identity(self._engine, self._image, environ=self._environ)
            except SelfcorrectError:
                return None

    def _opened(self) -> Deps:
        if self._deps is None:
            raise RuntimeError("the run session is not open: use it in a `with` block")
        return self._deps

    def _open(self) -> Deps:
        llm, engine_given, sandbox = self._given
        say = self.events.on_event
        # What the session opens gives way to a cancel from another thread (stoppable.py);
        # what was handed in is its caller's to stop.
        mark = None
        if self._keeping is not None:
            self._checkpoint = self._keeping.writer(secrets=self._secrets, mark=None)
            self._checkpoint.open()
        if llm is None:
            settings, self.server = detected(self.settings, self.models, say)
            llm = llm_client(
                self.models, settings, secrets=self._secrets,
                on_wait=lambda message: say("llm", message), task_prompt=self._task_prompt,
                fit=lambda: self._fit, replay_from=self._replay_from)
            llm, mark = self._kept(llm)
            llm = StoppableLLM(self._traced(llm), self.cancel)
        else:
            llm, mark = self._kept(llm)
            llm = self._traced(llm)
        if self._checkpoint is not None:
            self._checkpoint.mark = mark
        image = ""
        if sandbox is None:
            # What the session connects it closes; an engine handed in stays open.
            client = engine_given or self._stack.enter_context(
                contextlib.closing(engine.connect(self._environ)))

            def progress(line: str) -> None:
                say("sandbox", line)

            # Before the first container and so before any model call: a prebuilt image is
            # pulled if missing and refused if its runner speaks another protocol.
            image = (require_image(client, self.settings.sandbox_image, progress=progress)
                     if self.settings.sandbox_image else ensure_image(client, progress=progress))
            if self._requirements is not None:
                image = ensure_derived(client, image, self._requirements, progress=progress)
            # The egress proxy reads credentials' secrets from the run's environment.
            # A live model's call between attempts gives the pool's next container time to
            # start and import once an attempt is done; a replayed answer comes at once, so
            # there it starts beside the attempt.
            opened = self._stack.enter_context(Sandbox(
                client, image, pool_size=1, egress=settings_from_environ(self._environ),
                preload_guess=self._preload_guess,
                refill="on_take" if self.settings.replaying else "after_run"))
            opened.warm(self._limits, self.settings.runtime)
            sandbox = StoppableExecutor(opened, self.cancel)
            self._engine, self._image = client, image
        scratch = self._stack.enter_context(
            tempfile.TemporaryDirectory(prefix="selfcorrect-run-"))
        deps = loop_deps(llm, sandbox, Path(scratch), self.settings, inputs=self._inputs,
                         events=self.events, cancel=self.cancel, priced=self._priced,
                         served_window=self.server.context_tokens if self.server else None)
        deps.repository, deps.image = self._repository, image
        if self._checkpoint is not None:
            deps.on_step = self._checkpoint.save
        return deps

    def _kept(self, llm: LLM) -> tuple[LLM, Callable[[], RecordingMark] | None]:
        """`llm` recording into the run's checkpoint folder, or going on with an earlier
        run's recording; old checkpoints nobody resumed are removed first."""
        if self._keeping is None:
            return llm, None
        history = self.settings.history_dir
        if history is not None:
            prune(history)
        from selfcorrect_action.llm.recording import task_digest

        if self._keeping.resumed is not None:
            self._keeping.resumed.model_for = \
                lambda request: request.model or self.models.for_tier(request.tier or "strong")
        return self._keeping.client(
            llm, secrets=self._secrets,
            task_sha256=task_digest(self._task_prompt) if self._task_prompt else None,
            fit=lambda: self._fit)


def known_identity(engine: Engine, image: str, *, environ: Mapping[str, str]
                   ) -> ImageIdentity | None:
    """The image's identity with no container started: its id and context hash from the
    engine, its packages from an earlier listing of that id when one is cached (else none:
    packages_digest "")."""
    info = engine.image(image)
    if info is None:
        return None
    folder = default_cache_dir(environ)
    path = cache_path(folder, info.id) if folder is not None else None
    cached = read_cached(path, info.id) if path is not None else None
    if cached is not None:
        return cached.model_copy(update={"tag": image,
                                         "context_hash": info.labels.get(HASH_LABEL, "")})
    return ImageIdentity(tag=image, context_hash=info.labels.get(HASH_LABEL, ""),
                         image_id=info.id, packages_digest="", packages=0)


def detected(settings: RunSettings, models: ModelTiers, say: Callable[[str, str], None]
             ) -> tuple[RunSettings, ServerInfo | None]:
    """The settings with what the server at --api-base takes (once per run, never for a
    replay): its structured-output mode, where `auto` left it open."""
    if settings.api_base is None or settings.replaying:
        return settings, None
    from selfcorrect_action.llm.server_probe import probe

    server = probe(settings.api_base, models.cheap)
    say("llm", f"server at the API base: {server.described()}")
    if settings.structured_output == "auto" and server.structured_output is not None:
        settings = evolve(settings, {"structured_output": server.structured_output})
    return settings, server


def recorded_fit(settings: RunSettings) -> Mapping[str, str]:
    """How a replayed run's recording asked for code (its header says, when it does)."""
    if settings.replay is None:
        return {}
    from selfcorrect_action.llm.recording import read_recording

    header = read_recording(settings.replay).header
    fit: dict[str, str] = {name: value for name, value in (("profile", header.profile),
                                           ("generation", header.generation)) if value}
    if header.profile_open:
        fit["profile_open"] = "1"
    return {**fit, "redraws": str(header.redraws or 0)}


def llm_client(models: ModelTiers, settings: RunSettings, *, secrets: Sequence[str],
               on_wait: Callable[[str], None] | None = None, task_prompt: str = "",
               fit: Callable[[], Mapping[str, str]] | None = None,
               replay_from: int = 0) -> LLM:
    """The model client a run's settings ask for: replayed (from exchange `replay_from`),
    recorded, or live. A recording names the task it was made for by its prompt's digest
    (`task_prompt`)."""
    from selfcorrect_action.llm.factory import client_for  # litellm loads on first call
    from selfcorrect_action.llm.recording import task_digest

    return client_for(
        models, replay=settings.replay, record=settings.record,
        api_base=settings.api_base, timeout_s=settings.llm_timeout_s,
        retry=RetryPolicy(max_attempts=settings.llm_retries + 1), secrets=secrets,
        on_wait=on_wait, structured=settings.structured_output,
        task_sha256=task_digest(task_prompt) if task_prompt else None, fit=fit,
        replay_from=replay_from,
    )


def loop_deps(llm: LLM, sandbox: Executor, work_root: Path, settings: RunSettings, *,
              inputs: Sequence[InputFile] = (), events: RunEvents | None = None,
              cancel: CancelToken | None = None, priced: bool = True,
              served_window: int | None = None) -> Deps:
    """What the loop's steps get. A replayed run is not held to live models' limits (its
    answers were made by whatever model recorded them); `priced=False` leaves its calls
    unpriced, for replays whose tiers do not name the model that answered.
    `served_window`: the context window the server at the API base said it serves."""
    events = events or RunEvents()
    return Deps(llm=llm, sandbox=sandbox, work_root=work_root, inputs=list(inputs),
                price=_price() if priced else no_price,
                limits=ContextWindows(no_limits) if settings.replaying else ContextWindows(
                    _limits(), served=served_window),
                sees_images=_sees_images(), on_event=events.on_event,
                on_state=events.on_state,
                check_cancelled=(cancel or CancelToken()).check)


def spec_inputs(loaded: LoadedSpec) -> list[InputFile]:
    return [InputFile(path=path.name, data=path.read_bytes()) for path in loaded.input_paths]


def first_preload(spec: TaskSpec) -> tuple[str, ...] | None:
    """What the run's first pooled container preloads, before any script exists: for a
    script, None (the sandbox's default, the data libraries most scripts import); for a
    function or a repair, only what the task names (a HumanEval function imports none of
    them, and their imports would take the CPU its attempt runs on)."""
    if spec.kind == "script":
        return None
    return preload.named_in("\n".join((spec.prompt, spec.signature or "")))


def spec_limits(loaded: LoadedSpec) -> Limits:
    contract = loaded.spec.contract
    return Limits(memory_mb=contract.memory_mb)
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
