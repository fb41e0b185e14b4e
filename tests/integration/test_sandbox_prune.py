"""`sandbox prune` against a real engine, on repositories of the test's own (never the
machine's real sandbox images): a stale image and a derived image of a stale base go, the
current image and its derived image stay, an image a container uses is kept and said so."""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterator

import docker
import pytest

from selfcorrect_action.sandbox.derived_image import BASE_LABEL
from selfcorrect_action.sandbox.docker_engine import DockerEngine
from selfcorrect_action.sandbox.image import HASH_LABEL
from selfcorrect_action.sandbox.prune import prune_images


@pytest.fixture
def repositories(docker_client: docker.DockerClient) -> Iterator[tuple[str, str]]:
    own = f"selfcorrect-prune-test-{uuid.uuid4().hex[:8]}"
    yield own, f"{own}-deps"
    for image in docker_client.images.list():
        for tag in image.tags:
            if tag.startswith(own):
                docker_client.images.remove(tag, force=True)


def _build(client: docker.DockerClient, base: str, tag: str, labels: dict[str, str]) -> str:
    # A label is the only difference: no layer is written, the build takes a moment.
    dockerfile = io.BytesIO(f"FROM {base}\nLABEL org.selfcorrect.test={tag}\n".encode())
    image, _ = client.images.build(fileobj=dockerfile, tag=tag, labels=labels, rm=True,
                                   pull=False)
    return str(image.id)


def test_stale_images_go_the_current_ones_and_those_in_use_stay(
        docker_engine: DockerEngine, docker_client: docker.DockerClient, sandbox_image: str,
        repositories: tuple[str, str]) -> None:
    own, deps = repositories
    current, stale, used = f"{own}:1-current", f"{own}:1-stale", f"{own}:1-used"
    _build(docker_client, sandbox_image, current, {HASH_LABEL: "current"})
    _build(docker_client, sandbox_image, stale, {HASH_LABEL: "stale"})
    _build(docker_client, sandbox_image, used, {HASH_LABEL: "used"})
    _build(docker_client, current, f"{deps}:1-of-current", {HASH_LABEL: "d1", BASE_LABEL: current})
    _build(docker_client, stale, f"{deps}:1-of-stale", {HASH_LABEL: "d2", BASE_LABEL: stale})
    holder = docker_client.containers.create(used, command=["true"], network_mode="none")
    try:
        dry = prune_images(docker_engine, current_tag=current, dry_run=True,
                           repositories=repositories)
        assert dry.plan.remove == [f"{deps}:1-of-stale", stale, used]
        assert docker_engine.image(stale) is not None, "a dry run removes nothing"

        pruned = prune_images(docker_engine, current_tag=current, repositories=repositories)

        assert pruned.removed == [f"{deps}:1-of-stale", stale]
        assert pruned.in_use == [used]
        for gone in pruned.removed:
            assert docker_engine.image(gone) is None
        for kept in (current, f"{deps}:1-of-current", used, sandbox_image):
            assert docker_engine.image(kept) is not None, kept
    finally:
        holder.remove(force=True)
