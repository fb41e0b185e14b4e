"""An image's identity against a real engine: the sandbox image's packages listed inside it
once and read from the cache after, and an image with one more distribution on top told
apart by its digest though it carries the same context hash (issue 36)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.sandbox.docker_engine import DockerEngine
from selfcorrect_action.sandbox.engine_api import StartedContainer
from selfcorrect_action.sandbox.identity import image_identity, list_packages, listing_digest
from selfcorrect_action.sandbox.image import HASH_LABEL
from selfcorrect_action.sandbox.models import SANDBOX_UID
from tests.docker_images import build_dockerfile

pytestmark = pytest.mark.docker

# One more Python distribution, and nothing else: what a derived image's pip install does
# to the listing, built offline.
FAKE_DIST = """\
FROM {base}
USER root
RUN mkdir -p /usr/lib/python3/dist-packages/fakepkg-1.0.dist-info \\
 && printf 'Metadata-Version: 2.1\\nName: fakepkg\\nVersion: 1.0\\n' \\
      > /usr/lib/python3/dist-packages/fakepkg-1.0.dist-info/METADATA
USER {uid}:{uid}
"""


class CountingEngine:
    """The real engine, counting the containers it starts: whether a call listed or read
    the cache is observed at the seam."""

    def __init__(self, engine: DockerEngine) -> None:
        self._engine = engine
        self.started = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)

    def start_container(self, config: Mapping[str, Any]) -> StartedContainer:
        self.started += 1
        return self._engine.start_container(config)


@pytest.fixture
def fake_dist_image(docker_engine: DockerEngine, sandbox_image: str) -> Iterator[str]:
    tag = f"selfcorrect-identity-test:{uuid.uuid4().hex[:12]}"
    image_id = build_dockerfile(docker_engine, FAKE_DIST.format(base=sandbox_image,
                                                                uid=SANDBOX_UID), tag)
    yield tag
    docker_engine.remove_image(image_id)


def test_the_sandbox_image_is_listed_once_and_then_read_from_the_cache(
        docker_engine: DockerEngine, sandbox_image: str, tmp_path: Path) -> None:
    counting = CountingEngine(docker_engine)
    first = image_identity(counting, sandbox_image, cache_dir=tmp_path)
    again = image_identity(counting, sandbox_image, cache_dir=tmp_path)

    assert first == again
    assert counting.started == 1, "the second call started no container"
    info = docker_engine.image(sandbox_image)
    assert info is not None and first.image_id == info.id
    assert first.context_hash == info.labels[HASH_LABEL] and first.tag == sandbox_image
    lines = list_packages(docker_engine, info.id)
    assert listing_digest(lines) == first.packages_digest and len(lines) == first.packages
    assert any(line.startswith("deb:python3=") for line in lines)
    assert any(line.startswith("py:numpy==") for line in lines)


def test_one_more_distribution_changes_the_digest_not_the_context_hash(
        docker_engine: DockerEngine, sandbox_image: str, fake_dist_image: str,
        tmp_path: Path) -> None:
    base = image_identity(docker_engine, sandbox_image, cache_dir=tmp_path)
    derived = image_identity(docker_engine, fake_dist_image, cache_dir=tmp_path)

    assert derived.context_hash == base.context_hash, "FROM carries the base's label over"
    assert derived.image_id != base.image_id
    assert derived.packages_digest != base.packages_digest
    assert derived.packages == base.packages + 1
