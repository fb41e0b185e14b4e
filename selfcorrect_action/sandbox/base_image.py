"""The base the sandbox image is built FROM: debian:bookworm-slim, pulled when a registry
answers and otherwise made on this machine with debootstrap.

CI and development machines reach no registry, but they reach Debian's mirror; a minbase
debootstrap, trimmed like the official slim image and imported under the same name, makes
`FROM debian:bookworm-slim` build the same way here as on a machine that pulls it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections import deque
from collections.abc import Iterator
from pathlib import Path

from selfcorrect_action.errors import SandboxError, SandboxUnavailable
from selfcorrect_action.sandbox.engine_api import Engine
from selfcorrect_action.sandbox.progress import NOTE, Progress

BASE_IMAGE = "debian:bookworm-slim"
SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
SECURITY_MIRROR = "http://deb.debian.org/debian-security"
# docker-py gives pulls no client-side timeout; where no registry answers, DNS or connect may
# hang for minutes before the daemon gives up.
PULL_TIMEOUT_S = 20.0
# What the official slim image leaves out (debuerreotype's slimify), minus the copyrights.
SLIM_EXCLUDES = (
    "usr/share/doc",
    "usr/share/man",
    "usr/share/info",
    "usr/share/locale",
    "usr/share/groff",
    "usr/share/lintian",
)
CACHES = ("var/lib/apt/lists", "var/cache/apt", "var/log")
PULL_HINT = f"where a registry is reachable, `docker pull {BASE_IMAGE}` makes this step moot"


def split_image(name: str) -> tuple[str, str]:
    repository, _, tag = name.rpartition(":")
    return (repository, tag) if repository and "/" not in tag else (name, "latest")


def debootstrap_problem(*, euid: int, debootstrap: str | None, tar: str | None) -> str | None:
    """Why this machine cannot make the base, or None when it can."""
    if debootstrap is None:
        return (
            f"{BASE_IMAGE} is not available locally and cannot be pulled, and debootstrap "
            "(needed to make it) is not installed; fix: `sudo apt-get install debootstrap` "
            "(or `bash .ci/docker-up`, which installs it)"
        )
    if tar is None:
        return "making the base image needs `tar`; fix: `sudo apt-get install tar`"
    if euid != 0:
        return (
            f"{BASE_IMAGE} is not available locally and cannot be pulled; making it with "
            "debootstrap needs root (it creates device nodes and chroots); fix: run "
            "`sudo selfcorrect sandbox build` once"
        )
    return None


def debootstrap_argv(target: Path, *, suite: str = SUITE, mirror: str = MIRROR) -> list[str]:
    return ["debootstrap", "--variant=minbase", suite, str(target), mirror]


def apt_sources(*, suite: str = SUITE) -> str:
    """The apt sources of the official image (deb822), so a Dockerfile's apt-get sees the
    same suites, updates and security fixes included, as it would on a pulled base."""
    return (
        f"Types: deb\nURIs: {MIRROR}\nSuites: {suite} {suite}-updates\nComponents: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
        f"Types: deb\nURIs: {SECURITY_MIRROR}\nSuites: {suite}-security\nComponents: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
    )


def dpkg_excludes() -> str:
    """Keeps the trims in place for packages installed later on top of the base."""
    lines = [f"path-exclude /{path}/*" for path in SLIM_EXCLUDES]
    lines.insert(1, "path-include /usr/share/doc/*/copyright")
    return "\n".join(lines) + "\n"


def slim_removals(root: Path) -> Iterator[Path]:
    """What to delete from a fresh debootstrap to match the slim image: docs (except
    copyrights), man pages, translations; and the files, not the folders, of apt's lists and
    caches and of the logs, since apt expects those folders to exist."""
    for rel in SLIM_EXCLUDES:
        for child in _children(root / rel):
            if rel == "usr/share/doc" and _is_real_dir(child):
                yield from (p for p in child.iterdir() if p.name != "copyright")
            elif not (rel == "usr/share/doc" and child.is_symlink()):
                yield child
    for rel in CACHES:
        yield from (p for p in sorted((root / rel).rglob("*")) if not _is_real_dir(p))


def _children(folder: Path) -> list[Path]:
    return sorted(folder.iterdir()) if _is_real_dir(folder) else []


def _is_real_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def mounts_under(root: Path, mountinfo: str) -> list[str]:
    """Mount points below root in /proc/self/mountinfo's text, deepest first: the order to
    unmount them in. (Our temporary paths contain no characters mountinfo would escape.)"""
    prefix = str(root).rstrip("/") + "/"
    points = [fields[4] for fields in map(str.split, mountinfo.splitlines()) if len(fields) > 4]
    return sorted((p for p in points if p.startswith(prefix)), key=len, reverse=True)


def import_failed(reply: str) -> str | None:
    """The engine answers an import with JSON lines; a failure may still come with HTTP 200."""
    for line in reply.splitlines():
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(message, dict) and message.get("error"):
            return str(message["error"])
    return None


# ---- I/O below. ----


def ensure_base(engine: Engine, *, progress: Progress) -> None:
    if engine.image(BASE_IMAGE) is not None:
        return
    progress(NOTE + f"{BASE_IMAGE} is missing; trying to pull it")
    if _pull(engine, BASE_IMAGE, timeout_s=PULL_TIMEOUT_S) and engine.image(BASE_IMAGE):
        return
    progress(NOTE + f"cannot pull {BASE_IMAGE}; making it with debootstrap (about a minute)")
    make_base(engine, progress=progress)


def make_base(engine: Engine, *, progress: Progress, tag: str = BASE_IMAGE) -> None:
    problem = debootstrap_problem(
        euid=os.geteuid(), debootstrap=shutil.which("debootstrap"), tar=shutil.which("tar")
    )
    if problem:
        raise SandboxUnavailable(problem, hint=PULL_HINT)
    with tempfile.TemporaryDirectory(prefix="selfcorrect-base-") as tmp:
        root = Path(tmp) / "rootfs"
        try:
            _run_logged(debootstrap_argv(root), progress=progress, what="debootstrap")
        finally:
            _unmount_leftovers(root)
        _slim(root)
        progress(NOTE + f"importing the root filesystem as {tag}")
        import_rootfs(engine, root, tag)
    progress(NOTE + f"made {tag}")


def _unmount_leftovers(root: Path) -> None:
    """debootstrap mounts /proc and /sys (and, in LXC, binds /dev) inside the target and
    unmounts them when it exits; if it was killed they stay, and deleting the temporary
    folder would then walk into the host's own /proc, /sys or /dev."""
    with contextlib.suppress(OSError):
        for point in mounts_under(root, Path("/proc/self/mountinfo").read_text()):
            subprocess.run(["umount", "--lazy", point], check=False, capture_output=True)


def _slim(root: Path) -> None:
    for path in list(slim_removals(root)):
        if _is_real_dir(path):
            shutil.rmtree(path)
        else:
            path.unlink()
    (root / "etc/apt/sources.list").unlink(missing_ok=True)
    (root / "etc/apt/sources.list.d/debian.sources").write_text(apt_sources())
    (root / "etc/dpkg/dpkg.cfg.d/docker").write_text(dpkg_excludes())


def _run_logged(argv: list[str], *, progress: Progress, what: str) -> None:
    tail: deque[str] = deque(maxlen=20)
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
    ) as proc:
        assert proc.stdout is not None
        for raw in proc.stdout:
            tail.append(raw.rstrip())
            progress(tail[-1])
    if proc.returncode != 0:
        quoted = "\n".join(f"    {line}" for line in tail)
        raise SandboxError(
            f"{what} failed with exit code {proc.returncode}; last output:\n{quoted}",
            hint=f"check that {MIRROR} is reachable; {PULL_HINT}",
        )


def import_rootfs(engine: Engine, root: Path, tag: str) -> None:
    """Streams `tar` straight into the engine: the root filesystem is never held in memory."""
    repository, version = split_image(tag)
    argv = ["tar", "--numeric-owner", "-C", str(root), "-c", "."]
    with subprocess.Popen(argv, stdout=subprocess.PIPE) as tar:
        assert tar.stdout is not None
        reply = engine.import_image(tar.stdout, repository=repository, tag=version)
    error = import_failed(reply)
    if tar.returncode and not error:
        error = f"tar exited with code {tar.returncode}"
        # What got imported is a truncated filesystem under the real name: do not keep it.
        engine.remove_image(tag)
    if error:
        raise SandboxError(f"importing the debootstrap root as {tag} failed: {error}")


def _pull(engine: Engine, name: str, *, timeout_s: float) -> bool:
    """Tries a pull for at most timeout_s. Any failure just means "not pulled": the caller
    falls back to debootstrap. A pull still hanging keeps running in a daemon thread."""
    repository, tag = split_image(name)
    done: list[bool] = []

    def attempt() -> None:
        if engine.pull(repository, tag):
            done.append(True)

    worker = threading.Thread(target=attempt, name="selfcorrect-pull", daemon=True)
    worker.start()
    worker.join(timeout_s)
    return bool(done)
