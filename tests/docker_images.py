"""Images a test builds from a Dockerfile of its own on the real engine (one layer on the
sandbox image: a package added or changed, as a newer or derived image would have it)."""

from __future__ import annotations

import io
import tarfile

from selfcorrect_action.sandbox.docker_engine import DockerEngine
from selfcorrect_action.sandbox.image import BuildLog


def build_dockerfile(engine: DockerEngine, dockerfile: str, tag: str) -> str:
    """Build `dockerfile` (a context holding it alone) as `tag`; its image id."""
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        data = dockerfile.encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    context.seek(0)
    log = BuildLog()
    for chunk in engine.build_image(context, tag=tag, labels={}, nocache=False):
        log.feed(chunk)
    assert log.image_id and not log.error, list(log.tail)
    return log.image_id
