"""The Docker side of `selfcorrect check`, opened only when a spec needs it: the engine and
the sandbox image's identity when a record's image is to be compared, then a sandbox when a
change is to be re-verified. A check whose specs all match, or that finds no engine,
starts no container; with no engine, the identity is None and nothing is re-verified.

Closing removes every container it started: on Ctrl-C the signal raises where the check
stands and `with` unwinds; a cancel from another thread goes through `stoppable`, which
the front end builds (runs/stoppable.py: the running script's container is killed)."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from selfcorrect_action.choices import Runtime
from selfcorrect_action.errors import SandboxUnavailable
from selfcorrect_action.sandbox import engine, preload
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.docker_engine import DockerEngine
from selfcorrect_action.sandbox.egress.policy import settings_from_environ
from selfcorrect_action.sandbox.identity import image_identity
from selfcorrect_action.sandbox.image import ensure_image
from selfcorrect_action.sandbox.models import Limits
from selfcorrect_action.sandbox.prebuilt import require_image
from selfcorrect_action.verified.record import ImageRecord

if TYPE_CHECKING:  # the loop's imports cost a check that runs nothing (checker.py)
    from selfcorrect_action.loop.deps import Executor

Say = Callable[[str], None]
# A warm container starts in a few seconds (gVisor's import of pandas included); past this
# the attempt goes on and takes whatever the pool has, or starts one cold.
WARM_WAIT_S = 60.0


def _as_is(box: Sandbox) -> Executor:
    return box


class CheckSandbox:
    """Constructing it does no I/O; `image()` connects on first call, `executor()` opens
    the sandbox on first call. `engine` handed in is used and left open; `sandbox_image`:
    a prebuilt image instead of the one built from sandbox/, as a run takes it."""

    def __init__(self, *, runtime: Runtime, environ: Mapping[str, str], say: Say,
                 sandbox_image: str | None = None, engine: DockerEngine | None = None,
                 stoppable: Callable[[Sandbox], Executor] | None = None) -> None:
        self.runtime = runtime
        self._environ = environ
        self._say = say
        self._prebuilt = sandbox_image
        self._stoppable = stoppable or _as_is
        self._engine = engine
        self._stack = contextlib.ExitStack()
        self._connected = engine is not None
        self._tag = ""
        self._identity: ImageRecord | None = None
        self._box: Sandbox | None = None
        self._executor: Executor | None = None
        self.no_engine = ""  # why no engine answered, once tried
        self.work_root: Path | None = None

    def __enter__(self) -> CheckSandbox:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._box, self._executor = None, None
        self._stack.close()

    def image(self) -> ImageRecord | None:
        """The sandbox image's identity (built first if it is not current); None without a
        Docker engine. Read from the identity cache by image id: no container once known."""
        if self._identity is None and self._engine_or_none() is not None:
            assert self._engine is not None
            self._tag = (require_image(self._engine, self._prebuilt, progress=self._say)
                         if self._prebuilt else ensure_image(self._engine, progress=self._say))
            found = image_identity(self._engine, self._tag, environ=self._environ)
            self._identity = ImageRecord(tag=found.tag, context_hash=found.context_hash,
                                         packages_digest=found.packages_digest)
        return self._identity

    def executor(self, limits: Limits, source: str) -> Executor:
        """Where the script `source` is re-verified: one sandbox for the whole check, and a
        container warmed for it, its interpreter importing what the script imports, as a
        run's attempt finds one (a run starts it while the model answers). Its start is
        waited for here; its interpreter's imports, which a run's model calls hide, are
        still the attempt's."""
        if self.image() is None or self._engine is None:
            raise SandboxUnavailable(f"re-verification needs a Docker engine: {self.no_engine}")
        if self._box is None or self._executor is None:
            scratch = self._stack.enter_context(
                tempfile.TemporaryDirectory(prefix="selfcorrect-check-"))
            self.work_root = Path(scratch)
            self._box = self._stack.enter_context(Sandbox(
                self._engine, self._tag, pool_size=1, refill="never",
                preload_guess=preload.preloadable(preload.imports_of(source)),
                egress=settings_from_environ(self._environ)))
            self._executor = self._stoppable(self._box)
        self._box.warm(limits, self.runtime)
        self._box.settle(WARM_WAIT_S)
        return self._executor

    def _engine_or_none(self) -> DockerEngine | None:
        if not self._connected:
            self._connected = True
            try:
                self._engine = self._stack.enter_context(
                    contextlib.closing(engine.connect(self._environ)))
            except SandboxUnavailable as exc:
                self.no_engine = exc.message
                self._say(f"digests compared only, nothing re-verified: {exc.message}")
        return self._engine
