"""Builds the action's image (the repository-root Dockerfile) for the e2e tests and benchmarks.

The context is what `docker build .` would send from this working tree: the files git knows
or would add (`git ls-files -co --exclude-standard`, so uncommitted changes are built too),
filtered by .dockerignore, plus an extra CA for the builder's pip, dropped in as
.ci/ca-certificates/host-proxy.crt inside the tar only (never into the checkout).

The tar is deterministic (sorted members, zero times and owners, 0644/0755 modes), and its
sha256 is stored on the image as a label: an image carrying the label of the current context
is reused without asking the engine to build at all, so a test session with nothing changed
costs one image lookup.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import re
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import docker
import docker.errors
from docker.models.images import Image
from docker.utils.build import PatternMatcher

from selfcorrect_action.sandbox.image import BuildLog

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_REPOSITORY = "selfcorrect-action"
HASH_LABEL = "org.selfcorrect.action-context-hash"
EXTRA_CA_NAME = ".ci/ca-certificates/host-proxy.crt"
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
DEFAULT_EXTRA_CA: Path | None = HOST_CA_BUNDLE if HOST_CA_BUNDLE.is_file() else None
# Always sent, whatever .dockerignore says, as the docker CLI does.
ALWAYS_SENT = ("Dockerfile", ".dockerignore")
LOG_TAIL_LINES = 30
# A per-read socket timeout: pip can stay silent for minutes while it installs.
BUILD_READ_TIMEOUT_S = 3600

Progress = Callable[[str], None]


class ActionImageBuildError(RuntimeError):
    """The engine refused or failed the build; the message quotes the end of its log."""


@dataclass(frozen=True)
class BuildResult:
    tag: str
    image_id: str
    seconds: float
    size_bytes: int
    cached: bool
    context_hash: str


@dataclass(frozen=True)
class Member:
    """One file of the build context: its name in the tar, its bytes and whether it runs."""

    name: str
    data: bytes
    executable: bool


def dockerignore_patterns(root: Path = REPO_ROOT) -> list[str]:
    """.dockerignore's patterns the way the docker SDK reads them (comments and blanks out)."""
    path = root / ".dockerignore"
    if not path.is_file():
        return []
    lines = (line.strip() for line in path.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def working_tree_files(root: Path = REPO_ROOT) -> list[str]:
    """Tracked and untracked-but-not-ignored files that exist (a deleted tracked file is
    still listed by git until the deletion is staged)."""
    listing = subprocess.run(
        ["git", "ls-files", "-z", "-co", "--exclude-standard"],
        cwd=root, check=True, capture_output=True,
    ).stdout.decode()
    names = {name for name in listing.split("\0") if name}
    return sorted(n for n in names if (root / n).is_file() and not (root / n).is_symlink())


def context_members(root: Path = REPO_ROOT, *, extra_ca: Path | None = DEFAULT_EXTRA_CA,
                    overrides: Mapping[str, bytes] | None = None) -> list[Member]:
    """The context's files, sorted by name: the working tree minus .dockerignore, plus the
    extra CA (replacing a file of that name in the tree, should there be one), with the
    files named in `overrides` given other bytes (benchmarks/action_overhead.py builds on
    a base of its own that way, so no layer is shared with the images already here)."""
    matcher = PatternMatcher(dockerignore_patterns(root))
    names = [
        name for name in working_tree_files(root)
        if name != EXTRA_CA_NAME and (name in ALWAYS_SENT or not matcher.matches(name))
    ]
    members = [
        Member(name, (root / name).read_bytes(), bool((root / name).stat().st_mode & 0o111))
        for name in names
    ]
    if extra_ca is not None:
        members.append(Member(EXTRA_CA_NAME, extra_ca.read_bytes(), False))
    unknown = set(overrides or {}) - {member.name for member in members}
    if unknown:
        raise ValueError(f"no such file in the build context: {sorted(unknown)}")
    members = [Member(m.name, (overrides or {}).get(m.name, m.data), m.executable)
               for m in members]
    return sorted(members, key=lambda member: member.name)


def write_context_tar(members: list[Member], out: IO[bytes]) -> None:
    """Byte-for-byte the same tar for the same members: no times, owners or umask in it."""
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for member in members:
            info = tarfile.TarInfo(member.name)
            info.size = len(member.data)
            info.mode = 0o755 if member.executable else 0o644
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(member.data))


def context_tar(root: Path = REPO_ROOT, *, extra_ca: Path | None = DEFAULT_EXTRA_CA,
                overrides: Mapping[str, bytes] | None = None) -> bytes:
    buffer = io.BytesIO()
    write_context_tar(context_members(root, extra_ca=extra_ca, overrides=overrides), buffer)
    return buffer.getvalue()


def build_action_image(
    engine_client: docker.DockerClient,
    *,
    tag: str | None = None,
    extra_ca: Path | None = DEFAULT_EXTRA_CA,
    progress: Progress = print,
    root: Path = REPO_ROOT,
    nocache: bool = False,
    overrides: Mapping[str, bytes] | None = None,
) -> BuildResult:
    """The image of the current working tree under `tag`, built only when no image carries
    the current context's hash (`nocache`: built anyway, without the layer cache, to time
    a cold build). The default tag names the context's hash: one shared tag moved under
    the feet of a test session in another checkout of this machine whenever it built."""
    started = time.monotonic()
    context = context_tar(root, extra_ca=extra_ca, overrides=overrides)
    wanted = hashlib.sha256(context).hexdigest()
    tag = tag or f"{DEFAULT_REPOSITORY}:test-{wanted[:12]}"
    with _build_lock(tag):
        existing = None if nocache else _image_with_hash(engine_client, wanted)
        if existing is not None:
            if tag not in existing.tags:
                existing.tag(tag)
            progress(f"==> reusing {tag} ({existing.id[7:19]}): context unchanged "
                     f"(hash {wanted[:12]})")
            return _result(engine_client, tag, existing.id, started, cached=True, wanted=wanted)
        previous = _image_id(engine_client, tag)
        progress(f"==> building {tag} from {root} (context {len(context) / 1e6:.1f} MB, "
                 f"hash {wanted[:12]}"
                 + (f", extra CA {extra_ca}" if extra_ca is not None else "") + ")")
        image_id = _build(engine_client, context, tag=tag, wanted=wanted, progress=progress,
                          nocache=nocache)
        if previous and previous != image_id:
            _remove_quietly(engine_client, previous)
        result = _result(engine_client, tag, image_id, started, cached=False, wanted=wanted)
        progress(f"==> built {tag} ({image_id[7:19]}) in {result.seconds:.0f} s, "
                 f"{result.size_bytes / 1e6:.0f} MB")
        return result


def _build(client: docker.DockerClient, context: bytes, *, tag: str, wanted: str,
           progress: Progress, nocache: bool = False) -> str:
    log = BuildLog(keep=LOG_TAIL_LINES)
    with tempfile.TemporaryFile() as fileobj:
        fileobj.write(context)
        fileobj.seek(0)
        try:
            stream = client.api.build(
                fileobj=fileobj, custom_context=True, pull=False, rm=True, forcerm=True,
                decode=True, tag=tag, labels={HASH_LABEL: wanted}, nocache=nocache,
                timeout=BUILD_READ_TIMEOUT_S,
            )
            for chunk in stream:
                for line in log.feed(chunk):
                    progress(line)
        except docker.errors.APIError as exc:
            log.error = log.error or str(exc)
    for line in log.close():
        progress(line)
    if log.error or not log.image_id:
        reason = log.error or "the build stream ended without an image id"
        quoted = "\n".join(f"    {line}" for line in log.tail)
        raise ActionImageBuildError(f"building {tag} failed: {reason}\n"
                                    f"  last {len(log.tail)} lines of build output:\n{quoted}")
    return log.image_id


def _image_with_hash(client: docker.DockerClient, wanted: str) -> Image | None:
    images = client.images.list(filters={"label": f"{HASH_LABEL}={wanted}"})
    return images[0] if images else None


def _image_id(client: docker.DockerClient, tag: str) -> str | None:
    try:
        return str(client.images.get(tag).id)
    except docker.errors.ImageNotFound:
        return None


def _remove_quietly(client: docker.DockerClient, image_id: str) -> None:
    """The image the tag pointed at before: gone unless something still uses it (a container,
    another tag), so repeated edits do not pile up untagged copies of the venv layer."""
    with contextlib.suppress(docker.errors.APIError):
        client.images.remove(image_id)


def _result(client: docker.DockerClient, tag: str, image_id: str, started: float, *,
            cached: bool, wanted: str) -> BuildResult:
    image = client.images.get(image_id)
    return BuildResult(tag=tag, image_id=str(image.id), seconds=time.monotonic() - started,
                       size_bytes=int(image.attrs["Size"]), cached=cached, context_hash=wanted)


@contextlib.contextmanager
def _build_lock(tag: str) -> Iterator[None]:
    """One build per tag at a time on this machine (parallel sessions, a benchmark)."""
    name = "selfcorrect-action-build-" + re.sub(r"[^A-Za-z0-9_.-]", "_", tag) + ".lock"
    with open(Path(tempfile.gettempdir()) / name, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


if __name__ == "__main__":
    result = build_action_image(docker.from_env())
    print(result)
