"""An image's identity: what a verification record keeps of the image a script was verified
in, so a later check can tell when its libraries changed (issue 36).

The tag says which image was asked for and the context hash what it was built from, but two
builds of one context can install different Debian versions (apt runs at build time), and a
derived image (derived_image.py) pip-installs more on top. So the identity also holds a
digest of what is installed, listed inside the image itself (identity_probe.py) once per
image id: an image never changes under its id, so the answer is cached on the host by it.

The digest, the cache's paths and the reading of the probe's result are pure; the engine and
the sandbox are the thin part at the bottom.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from selfcorrect_action.errors import SandboxError, SandboxUnavailable
from selfcorrect_action.fileio import write_atomically
from selfcorrect_action.sandbox import identity_probe
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.engine_api import Engine
from selfcorrect_action.sandbox.image import HASH_LABEL
from selfcorrect_action.sandbox.models import ExecutionRequest, ExecutionResult, InputFile

PROBE_FILE = "identity_probe.py"
# A cold container and one pass over dpkg's status file and the dist-info folders: about a
# second under runc, a few under gVisor. A probe that takes longer is stuck.
PROBE_TIMEOUT_S = 30.0
_LINE = re.compile(r"(deb:[^=\s]+=\S+|py:[^=\s]+==\S+)")
# What an engine's image id looks like (sha256:<hex>): the only names the cache writes.
_IMAGE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9:._-]*")


class ImageIdentity(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    tag: str  # the name it was asked for by
    context_hash: str  # the org.selfcorrect.context-hash label; "" on an image without it
    image_id: str
    packages_digest: str  # sha256 hex of the canonical listing (listing_digest)
    packages: int  # the listing's lines: Debian packages and Python distributions


def listing_digest(lines: Iterable[str]) -> str:
    """sha256 of the canonical listing (sorted, deduplicated, one line each with its
    newline): the order the lines came in and repeats do not change it, a version does."""
    canonical = "".join(f"{line}\n" for line in identity_probe.listing(lines))
    return hashlib.sha256(canonical.encode()).hexdigest()


def default_cache_dir(environ: Mapping[str, str]) -> Path | None:
    """$XDG_CACHE_HOME/selfcorrect/image-identity, else ~/.cache/...; None where neither is
    set (a bare container): nothing is cached, each call lists again."""
    cache = environ.get("XDG_CACHE_HOME", "").strip()
    # The XDG spec: a relative XDG_CACHE_HOME is invalid and must be ignored.
    if cache and Path(cache).is_absolute():
        return Path(cache) / "selfcorrect" / "image-identity"
    home = environ.get("HOME", "").strip()
    return Path(home) / ".cache" / "selfcorrect" / "image-identity" if home else None


def cache_path(cache_dir: Path, image_id: str) -> Path | None:
    """Where an image's identity is cached; None for an id that is no plain file name."""
    return cache_dir / f"{image_id}.json" if _IMAGE_ID.fullmatch(image_id) else None


def read_cached(path: Path, image_id: str) -> ImageIdentity | None:
    """The identity cached at `path`; None when there is none, or the file is unreadable,
    corrupt or about another image: it is then listed again and the file rewritten."""
    try:
        cached = ImageIdentity.model_validate_json(path.read_bytes())
    except (OSError, ValidationError):
        return None
    return cached if cached.image_id == image_id else None


def write_cache(path: Path, identity: ImageIdentity) -> None:
    """A cache that cannot be written (a read-only home) costs a container next time,
    never the identity itself."""
    with contextlib.suppress(OSError):
        write_atomically(path, identity.model_dump_json(indent=2) + "\n")


def listing_request() -> ExecutionRequest:
    """The probe as a script of its own: `-I` keeps the work dir off sys.path (it holds the
    probe, not a distribution), and a fresh interpreter lists what any script would see."""
    probe = Path(identity_probe.__file__).read_bytes()
    return ExecutionRequest(
        argv=["python3", "-I", "--", PROBE_FILE], files=[InputFile(path=PROBE_FILE, data=probe)],
        timeout_s=PROBE_TIMEOUT_S, artifact_paths=[identity_probe.LISTING_FILE], warm=False)


def read_listing(result: ExecutionResult, image: str) -> list[str]:
    """The probe's listing from its result; SandboxError when the probe failed or left
    something that is not a listing."""
    if result.exit_code != 0:
        raise _failed(image, _why(result))
    found = [a for a in result.artifacts if a.path == identity_probe.LISTING_FILE]
    if not found or found[0].host_path is None:
        reason = found[0].rejected if found else result.artifact_note or "it was not written"
        raise _failed(image, f"its listing did not come back ({reason})")
    lines = found[0].host_path.read_text(encoding="utf-8", errors="replace").splitlines()
    odd = [line for line in lines if not _LINE.fullmatch(line)]
    if odd:
        raise _failed(image, f"its listing has a line that is no package: {odd[0][:120]!r}")
    return lines


def _why(result: ExecutionResult) -> str:
    if result.timed_out:
        return f"the probe did not finish within {PROBE_TIMEOUT_S:g} s"
    if result.sandbox_note:
        return result.sandbox_note
    tail = result.stderr.text.strip().splitlines()[-1:] or ["no output"]
    return f"the probe exited with {result.exit_code}: {tail[0][:300]}"


def _failed(image: str, why: str) -> SandboxError:
    return SandboxError(
        f"listing the packages installed in {image} failed: {why}",
        hint="the image must run python3 (3.8 or newer) as the sandbox image does; "
        "`selfcorrect sandbox build --force` rebuilds a damaged sandbox image")


# ---- Engine I/O below: thin; the engine adapter and the sandbox translate every failure. ----


def image_identity(engine: Engine, image_tag: str, *, cache_dir: Path | None = None,
                   environ: Mapping[str, str] | None = None) -> ImageIdentity:
    """The identity of the image `image_tag` names. Its packages are listed in a sandbox
    container of that image the first time an image id is seen, then read from
    `cache_dir` (default: default_cache_dir(environ)) without starting a container."""
    info = engine.image(image_tag)
    if info is None:
        raise SandboxUnavailable(f"the image {image_tag} is not on the Docker engine",
                                 hint="run `selfcorrect sandbox build`, or name an image "
                                 "`docker images` lists")
    folder = cache_dir if cache_dir is not None else default_cache_dir(
        os.environ if environ is None else environ)
    path = cache_path(folder, info.id) if folder is not None else None
    known = read_cached(path, info.id) if path is not None else None
    context = info.labels.get(HASH_LABEL, "")
    if known is not None:  # the same image under another name keeps its packages
        return known.model_copy(update={"tag": image_tag, "context_hash": context})
    lines = list_packages(engine, info.id)
    identity = ImageIdentity(tag=image_tag, context_hash=context, image_id=info.id,
                             packages_digest=listing_digest(lines),
                             packages=len(identity_probe.listing(lines)))
    if path is not None:
        write_cache(path, identity)
    return identity


def list_packages(engine: Engine, image: str) -> list[str]:
    """Run the probe once in a fresh sandbox container of `image` (by id: a tag rebuilt
    meanwhile must not answer for the id the listing is cached under)."""
    with tempfile.TemporaryDirectory(prefix="selfcorrect-identity-") as scratch, \
            Sandbox(engine, image, warm=False) as box:
        return read_listing(box.run(listing_request(), Path(scratch) / "artifacts"), image)
