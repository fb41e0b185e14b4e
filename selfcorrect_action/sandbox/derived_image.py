"""A sandbox image with a repair's test dependencies in it: built `FROM` the sandbox image
with pip, tagged by the hash of the requirements and the base image's id, reused while
both are unchanged (issue 18, "Dependencies without network at run time").

Installing happens here, at build time, where the engine's build has network; every run in
the image is still `network: none`. The build trusts the host's CA bundle for pip only
(behind a TLS-intercepting proxy pip would otherwise refuse PyPI), in the one step that
needs it, and the bundle is gone from the image afterwards; it is not part of the hash,
since it changes nothing that gets installed.

The naming, the Dockerfile and the build context are pure; the engine calls are the thin
part at the bottom, through the same Engine seam as the sandbox image. The build's own output
(about 100 lines of apt and pip) is not shown while it runs, only a progress line now and
then (issue 38, item 8); a failed build quotes its last lines in the error.
"""

from __future__ import annotations

import hashlib
import io
import re
import ssl
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from selfcorrect_action import __version__
from selfcorrect_action.errors import SandboxError, SandboxUnavailable
from selfcorrect_action.sandbox.engine_api import Engine
from selfcorrect_action.sandbox.image import HASH_LABEL, BuildLog, build_labels, build_lock
from selfcorrect_action.sandbox.models import SANDBOX_UID
from selfcorrect_action.sandbox.progress import NOTE, Progress, ignore_progress

DERIVED_REPOSITORY = "selfcorrect-sandbox-deps"
BASE_LABEL = "org.selfcorrect.base-image"
STAGING = "/tmp/selfcorrect-deps"
# A build says where it is at most this often; a faster build says nothing between its start
# and its end.
PROGRESS_EVERY_S = 10.0
_STEP = re.compile(r"^Step (\d+)/(\d+) : ")
Clock = Callable[[], float]
# pip comes from Debian (the base has none), in a step of its own that every derived image
# shares through the engine's build cache; the requirements' step is the only one that
# differs between two requirements files.
DOCKERFILE = """\
FROM {base}
USER root
RUN apt-get update \\
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-pip \\
 && apt-get clean \\
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt/* /var/log/dpkg.log
COPY requirements.txt build-ca.pem {staging}/
RUN set -eu; \\
    if [ -s {staging}/build-ca.pem ]; then export PIP_CERT={staging}/build-ca.pem; fi; \\
    PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore \\
      python3 -m pip install --no-input --break-system-packages \\
        -r {staging}/requirements.txt; \\
    rm -rf {staging} /root/.cache; \\
    find / -xdev -perm /6000 -type f -exec chmod a-s {{}} +
USER {uid}:{uid}
WORKDIR /work
"""


def requirements_hash(text: str, base_image_id: str) -> str:
    """What a derived image is tagged by: the requirements as written and the image they are
    installed on; either changing builds another."""
    digest = hashlib.sha256()
    digest.update(base_image_id.encode() + b"\0" + text.encode())
    return digest.hexdigest()


def derived_tag(wanted_hash: str, version: str = __version__) -> str:
    return f"{DERIVED_REPOSITORY}:{version}-{wanted_hash[:16]}"


def dockerfile(base: str) -> str:
    return DOCKERFILE.format(base=base, staging=STAGING, uid=SANDBOX_UID)


def context_tar(base: str, requirements: str, ca_bundle: bytes) -> bytes:
    """The build context: the Dockerfile, the requirements as written, the CA bundle."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in (("Dockerfile", dockerfile(base).encode()),
                           ("requirements.txt", requirements.encode()),
                           ("build-ca.pem", ca_bundle)):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def host_ca_bundle() -> bytes:
    """The host's CA bundle (empty when it has none to offer): what pip trusts in the
    build, as the host itself trusts it."""
    paths = ssl.get_default_verify_paths()
    for candidate in (paths.cafile, paths.openssl_cafile):
        if candidate and Path(candidate).is_file():
            return Path(candidate).read_bytes()
    return b""


# ---- Engine I/O below: thin; the engine adapter translates every failure. ----


def ensure_derived(engine: Engine, base: str, requirements: str, *,
                   progress: Progress = ignore_progress, ca_bundle: bytes | None = None,
                   clock: Clock = time.monotonic) -> str:
    """The tag of an image holding `requirements` on top of `base`, built if needed."""
    base_image = engine.image(base)
    if base_image is None:
        raise SandboxUnavailable(f"the sandbox image {base} is not on the Docker engine",
                                 hint="run `selfcorrect sandbox build`")
    wanted = requirements_hash(requirements, base_image.id)
    tag = derived_tag(wanted)
    if _built(engine, tag, wanted):
        progress(NOTE + f"reusing {tag}: requirements and base unchanged")
        return tag
    with build_lock(tag):
        if _built(engine, tag, wanted):  # another run built it while we waited
            progress(NOTE + f"reusing {tag}: requirements and base unchanged")
            return tag
        progress(NOTE + f"building {tag}: the requirements installed on {base}")
        _build(engine, tag, wanted, context_tar(base, requirements, ca_bundle
                                                if ca_bundle is not None else host_ca_bundle()),
               base=base, progress=BuildProgress(progress, tag, clock))
    progress(NOTE + f"built {tag}")
    return tag


def _built(engine: Engine, tag: str, wanted: str) -> bool:
    existing = engine.image(tag)
    return existing is not None and existing.labels.get(HASH_LABEL) == wanted


class BuildProgress:
    """The build's lines in, a progress line out now and then: the step it is at and the
    seconds so far, at most every PROGRESS_EVERY_S."""

    def __init__(self, progress: Progress, tag: str, clock: Clock) -> None:
        self._progress, self._tag, self._clock = progress, tag, clock
        self._started = self._said = clock()
        self._step = ""

    def __call__(self, line: str) -> None:
        if match := _STEP.match(line):
            self._step = f"step {match[1]}/{match[2]}"
        now = self._clock()
        if self._step and now - self._said >= PROGRESS_EVERY_S:
            self._said = now
            self._progress(NOTE + f"building {self._tag}: {self._step}, "
                           f"{now - self._started:.0f} s so far")


def _build(engine: Engine, tag: str, wanted: str, context: bytes, *, base: str,
           progress: Progress) -> None:
    log = BuildLog()
    labels = {**build_labels(wanted_hash=wanted), BASE_LABEL: base}
    with tempfile.TemporaryFile() as file:
        file.write(context)
        file.seek(0)
        for chunk in engine.build_image(file, tag=tag, labels=labels, nocache=False):
            for line in log.feed(chunk):
                progress(line)
    log.close()
    if log.error or not log.image_id:
        quoted = "\n".join(f"    {line}" for line in log.tail)
        raise SandboxError(
            f"installing the requirements into {tag} failed: "
            f"{log.error or 'the build ended without an image'}\n  last build output:\n{quoted}",
            hint="check the requirements file (each package must exist on the package index "
            "and install on the sandbox's Python 3.11 without a compiler), and that the "
            "Docker engine's builds reach the index")
