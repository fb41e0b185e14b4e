"""The sandbox image: built from the sandbox/ folder, reused while that folder is unchanged.

Staleness is a content hash of the build context, stored on the image as a label: a tag alone
would keep serving an old image after sandbox/ changed within one package version (every
development checkout). Naming, hashing, the decision and the build-log handling are pure;
the Docker calls are the thin part at the bottom, and docker exceptions stop there.
"""

from __future__ import annotations

import ast
import contextlib
import fcntl
import hashlib
import re
import tarfile
import tempfile
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from selfcorrect_action import __version__
from selfcorrect_action.errors import SandboxError
from selfcorrect_action.resources import sandbox_context
from selfcorrect_action.sandbox.base_image import ensure_base
from selfcorrect_action.sandbox.engine_api import Engine
from selfcorrect_action.sandbox.progress import NOTE, Progress, ignore_progress

IMAGE_REPOSITORY = "selfcorrect-sandbox"
HASH_LABEL = "org.selfcorrect.context-hash"
VERSION_LABEL = "org.selfcorrect.version"
# The runner's protocol version (PROTOCOL_VERSION in the context's runner.py), read from the
# file that goes into the image: what a prebuilt image is checked by (prebuilt.py).
PROTOCOL_LABEL = "org.selfcorrect.protocol"
RUNNER = "runner.py"
# Lines of build output quoted in the error when a build fails.
LOG_TAIL_LINES = 25
# The classic builder colours a step's stderr red with these; they garble logs and errors.
_ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def image_tag(version: str = __version__, wanted_hash: str | None = None) -> str:
    """The package version, and the build context's hash when known: two checkouts on one
    machine (a worktree, a helper's branch) with different sandbox/ folders then keep an
    image each instead of rebuilding one tag over the other in the middle of a run."""
    return f"{IMAGE_REPOSITORY}:{version}" + (f"-{wanted_hash[:12]}" if wanted_hash else "")


def context_files(root: Path) -> list[str]:
    """The build context: every file under root, as sorted POSIX paths relative to it.
    Bytecode caches are left out: importing runner.py on the host must not make the image
    stale."""
    files = [
        path.relative_to(root).as_posix()
        for path in root.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    ]
    return sorted(files)


def context_hash(root: Path) -> str:
    """sha256 over each file's path, executable bit and content. Not mtimes: a fresh checkout
    or a `touch` changes them without changing what gets built."""
    digest = hashlib.sha256()
    for name in context_files(root):
        path = root / name
        digest.update(f"{name}\0{_mode(path):o}\0{path.stat().st_size}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _mode(path: Path) -> int:
    return 0o755 if path.stat().st_mode & 0o111 else 0o644


@dataclass(frozen=True)
class Decision:
    build: bool
    reason: str


def build_decision(*, tag: str, existing_hash: str | None, wanted_hash: str,
                   force: bool) -> Decision:
    """Whether to build. existing_hash is None when there is no image with that tag; "" when
    the image exists but carries no hash label (built by hand)."""
    if force:
        return Decision(True, f"rebuilding {tag} as asked (--force)")
    if existing_hash is None:
        return Decision(True, f"building {tag}: no such image yet")
    if existing_hash != wanted_hash:
        return Decision(True, f"rebuilding {tag}: sandbox/ changed since it was built")
    return Decision(False, f"reusing {tag}: sandbox/ unchanged (hash {wanted_hash[:12]})")


def runner_protocol(source: str) -> int | None:
    """The whole number a runner's source assigns to PROTOCOL_VERSION at module level, or
    None when it assigns none (or is not Python). Read, never imported: the runner imports
    modules only the image has."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return None
    for node in body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "PROTOCOL_VERSION"
                and isinstance(node.value, ast.Constant) and type(node.value.value) is int):
            return node.value.value
    return None


def context_protocol(root: Path) -> int | None:
    runner = root / RUNNER
    return runner_protocol(runner.read_text()) if runner.is_file() else None


def build_labels(*, wanted_hash: str, version: str = __version__,
                 protocol: int | None = None) -> dict[str, str]:
    """What selfcorrect writes on every sandbox image it builds, and the release workflow on
    the images it pushes (scripts/release.py): the context's hash, the package version and,
    when the runner names one, its protocol version."""
    labels = {HASH_LABEL: wanted_hash, VERSION_LABEL: version}
    if protocol is not None:
        labels[PROTOCOL_LABEL] = str(protocol)
    return labels


def context_labels(root: Path, *, version: str = __version__) -> dict[str, str]:
    return build_labels(wanted_hash=context_hash(root), version=version,
                        protocol=context_protocol(root))


class BuildLog:
    """Turns the engine's decoded JSON build stream into whole lines, remembers the last few
    for the error message, and notes the error and the image id when they come by."""

    def __init__(self, keep: int = LOG_TAIL_LINES) -> None:
        self._partial = ""
        self.tail: deque[str] = deque(maxlen=keep)
        self.error: str | None = None
        self.image_id: str | None = None

    def feed(self, chunk: Mapping[str, Any]) -> list[str]:
        if "error" in chunk:
            self.error = str(chunk["error"]).strip()
            text = f"{self.error}\n"
        elif "aux" in chunk:
            self.image_id = chunk["aux"].get("ID", self.image_id)
            return []
        else:
            text = str(chunk.get("stream") or chunk.get("status") or "")
        lines = (self._partial + _ANSI_COLOUR.sub("", text)).split("\n")
        self._partial = lines.pop()
        return self._keep([line.rstrip("\r") for line in lines if line.strip()])

    def close(self) -> list[str]:
        rest, self._partial = self._partial, ""
        return self._keep([rest]) if rest.strip() else []

    def _keep(self, lines: list[str]) -> list[str]:
        self.tail.extend(lines)
        return lines

    def failure(self, tag: str) -> SandboxError:
        reason = self.error or "the build stream ended without an image id"
        quoted = "\n".join(f"    {line}" for line in self.tail)
        return SandboxError(
            f"building {tag} failed: {reason}\n  last build output:\n{quoted}",
            hint="fix sandbox/Dockerfile, or run `selfcorrect sandbox build --force` if a "
            "download failed midway",
        )


def write_context_tar(root: Path, out: IO[bytes]) -> None:
    """Exactly the hashed files, with normalised owners, modes and times, so what is built is
    what was hashed whatever the checkout's umask or the host's users."""
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name in context_files(root):
            path = root / name
            info = tarfile.TarInfo(name)
            info.size = path.stat().st_size
            info.mode = _mode(path)
            with path.open("rb") as data:
                tar.addfile(info, data)


# ---- Engine I/O below: thin; the engine adapter translates every failure. ----


def ensure_image(
    engine: Engine,
    *,
    force: bool = False,
    progress: Progress = ignore_progress,
    context: Path | None = None,
    tag: str | None = None,
) -> str:
    """The tag of a sandbox image built from the current context, building it if needed."""
    root = context or sandbox_context()
    wanted = context_hash(root)
    tag = tag or image_tag(wanted_hash=wanted)
    existing_id, existing_hash = _existing(engine, tag)
    decision = build_decision(tag=tag, existing_hash=existing_hash, wanted_hash=wanted, force=force)
    if not decision.build:
        progress(NOTE + decision.reason)
        return tag
    with build_lock(tag):
        # Another run on this machine may have built it while we waited for the lock.
        existing_id, existing_hash = _existing(engine, tag)
        decision = build_decision(tag=tag, existing_hash=existing_hash, wanted_hash=wanted,
                                  force=force)
        progress(NOTE + decision.reason)
        if not decision.build:
            return tag
        return _build_and_replace(engine, root, tag, wanted, existing_id, force=force,
                                  progress=progress)


@contextlib.contextmanager
def build_lock(tag: str) -> Iterator[None]:
    """One build per tag at a time on this machine: parallel runs after a change to sandbox/
    would otherwise all build the same image at once."""
    name = "selfcorrect-build-" + re.sub(r"[^A-Za-z0-9_.-]", "_", tag) + ".lock"
    with open(Path(tempfile.gettempdir()) / name, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build_and_replace(
    engine: Engine, root: Path, tag: str, wanted: str, existing_id: str | None,
    *, force: bool, progress: Progress,
) -> str:
    ensure_base(engine, progress=progress)
    new_id = _build(engine, root, tag=tag, wanted_hash=wanted, nocache=force, progress=progress)
    if existing_id and existing_id != new_id:
        engine.remove_image(existing_id)
    progress(NOTE + f"built {tag}")
    return tag


def image_status(engine: Engine, *, context: Path, tag: str) -> Decision:
    """What ensure_image would do, without doing it."""
    _, existing_hash = _existing(engine, tag)
    wanted = context_hash(context)
    return build_decision(tag=tag, existing_hash=existing_hash, wanted_hash=wanted, force=False)


def _existing(engine: Engine, tag: str) -> tuple[str | None, str | None]:
    image = engine.image(tag)
    if image is None:
        return None, None
    return image.id, image.labels.get(HASH_LABEL, "")


def _build(
    engine: Engine,
    root: Path,
    *,
    tag: str,
    wanted_hash: str,
    nocache: bool,
    progress: Progress,
) -> str:
    log = BuildLog()
    labels = build_labels(wanted_hash=wanted_hash, protocol=context_protocol(root))
    with tempfile.TemporaryFile() as context:
        write_context_tar(root, context)
        context.seek(0)
        for chunk in engine.build_image(context, tag=tag, labels=labels, nocache=nocache):
            for line in log.feed(chunk):
                progress(line)
    for line in log.close():
        progress(line)
    if log.error or not log.image_id:
        raise log.failure(tag)
    return log.image_id

