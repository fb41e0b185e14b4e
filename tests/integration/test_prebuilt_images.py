"""The release workflow's path, against a real registry on 127.0.0.1 standing in for GHCR
(tests/e2e/local_registry.py): both images pushed as the workflow pushes them (amd64, the
same Dockerfiles and labels: the content-hash-tagged images the other tests already build),
their names dropped from the engine, action.yml rewritten by scripts/release.py to name them
by digest, then the runner's pull of the action image by digest and a labelled issue taken
to a pull request by the released action.yml, which pulls its sandbox image by digest. A
sandbox image of another runner protocol, and a digest the registry lacks, are refused with
the reference and the fix.

The pulls find the layers already on this engine (the images keep their other names, so
no other test rebuilds them): the registry is asked for each manifest and config, and
every blob they list is checked to be served, which is what a fresh runner downloads.
benchmarks/action_overhead.py times cold pulls."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import docker
import pytest
from ruamel.yaml import YAML

from selfcorrect_action import __version__
from selfcorrect_action.errors import ImagePullFailed, SandboxUnavailable
from selfcorrect_action.sandbox.base_image import BASE_IMAGE
from selfcorrect_action.sandbox.docker_engine import DockerEngine
from selfcorrect_action.sandbox.image import PROTOCOL_LABEL, VERSION_LABEL
from selfcorrect_action.sandbox.prebuilt import require_image
from selfcorrect_action.sandbox.wire import PROTOCOL_VERSION
from tests.e2e.action.harness import (
    MAINTAINER,
    REPLAY,
    SALES,
    SPEC,
    checkout,
    labeled,
    runner_inputs,
)
from tests.e2e.action.runner import ActionRun, run_action
from tests.e2e.action_image import build_action_image
from tests.e2e.local_registry import (
    LocalRegistry,
    RegistryUnavailable,
    forget,
    local_registry,
    push,
)
from tests.fakes.github_server import DEFAULT_REPO, WRITE_TOKEN, FakeGitHub, seeded

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Released:
    registry: LocalRegistry
    action: str  # <registry>/selfcorrect-action@sha256:...
    sandbox: str  # <registry>/selfcorrect-sandbox@sha256:...
    action_yml: Path


@pytest.fixture(scope="module")
def registry(docker_engine: DockerEngine, tmp_path_factory: pytest.TempPathFactory
             ) -> Iterator[LocalRegistry]:
    try:
        with local_registry(tmp_path_factory.mktemp("registry")) as running:
            yield running
    except RegistryUnavailable as exc:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but {exc}", pytrace=False)
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def released(registry: LocalRegistry, docker_client: docker.DockerClient, sandbox_image: str,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[Released]:
    action_image = build_action_image(docker_client, progress=lambda line: None).tag
    names = {"action": f"{registry.host}/selfcorrect-action",
             "sandbox": f"{registry.host}/selfcorrect-sandbox"}
    digests = {"action": push(docker_client, action_image, names["action"], __version__),
               "sandbox": push(docker_client, sandbox_image, names["sandbox"], __version__)}
    pinned = {key: f"{names[key]}@{digests[key]}" for key in names}
    forget(docker_client, *(f"{name}:{__version__}" for name in names.values()),
           *pinned.values())
    action_yml = tmp_path_factory.mktemp("release") / "action.yml"
    action_yml.write_text((ROOT / "action.yml").read_text())
    subprocess.run([sys.executable, str(ROOT / "scripts" / "release.py"), "action-yml",
                    "--action-image", pinned["action"], "--sandbox-image", pinned["sandbox"],
                    "--file", str(action_yml)], check=True, capture_output=True)
    yield Released(registry, pinned["action"], pinned["sandbox"], action_yml)
    forget(docker_client, *pinned.values())


def test_the_released_action_yml_names_both_images_by_digest(released: Released) -> None:
    spec = YAML(typ="safe").load(released.action_yml.read_text())
    assert spec["runs"] == {"using": "docker", "image": f"docker://{released.action}"}
    assert spec["inputs"]["sandbox-image"]["default"] == released.sandbox


def test_the_registry_serves_everything_a_fresh_runner_pulls(released: Released) -> None:
    for reference in (released.action, released.sandbox):
        name, _, digest = reference.partition("@")
        repository = name.split("/", 1)[1]
        manifest = released.registry.manifest(repository, digest)
        blobs = [manifest["config"], *manifest["layers"]]
        assert len(blobs) > 2
        for blob in blobs:
            assert released.registry.blob_digest(repository, blob["digest"]) == blob["digest"]


def test_a_labelled_issue_becomes_a_pull_request_with_the_released_images(
        released: Released, docker_client: docker.DockerClient, docker_engine: DockerEngine,
        tmp_path: Path) -> None:
    """The runner pulls `docker://<action image>` by digest before the step; the action,
    given nothing but the released action.yml's defaults, pulls the sandbox image."""
    assert docker_engine.image(released.action) is None
    assert docker_engine.image(released.sandbox) is None
    docker_client.images.pull(released.action)
    github = seeded(tmp_path / "github")
    try:
        run = _label_to_pull_request(github, released, tmp_path)
        assert run.returncode == 0, run.log
        assert run.outputs["status"] == "passed", run.log
        (pull,) = github.pulls(DEFAULT_REPO)
        assert pull.head.endswith(":selfcorrect/issue-1")
    finally:
        github.stop()
    assert f"pulling the prebuilt sandbox image {released.sandbox}" in run.log
    assert (f"using the prebuilt sandbox image {released.sandbox} (runner protocol "
            f"{PROTOCOL_VERSION})") in run.log
    pulled = docker_engine.image(released.sandbox)
    assert pulled is not None
    assert pulled.labels[PROTOCOL_LABEL] == str(PROTOCOL_VERSION)
    assert pulled.labels[VERSION_LABEL] == __version__


def _label_to_pull_request(github: FakeGitHub, released: Released, scratch: Path
                           ) -> ActionRun:
    github.add_user(MAINTAINER)
    github.add_collaborator(DEFAULT_REPO, MAINTAINER, "maintain")
    github.commit_files(DEFAULT_REPO, "main", {"examples/data/sales.csv": SALES,
                                               "replays/issue-1.jsonl": REPLAY,
                                               ".selfcorrect/tasks/bar_chart.yml": SPEC})
    inputs = runner_inputs({"replay": "replays"}, token=WRITE_TOKEN,
                           action_yml=released.action_yml)
    return run_action(released.action, workspace=checkout(github, scratch / "workspace"),
                      scratch=scratch, event_name="issues", event=labeled(github),
                      inputs=inputs, repository=DEFAULT_REPO, api_url=github.api_url)


def test_a_sandbox_image_of_another_protocol_is_refused_once_pulled(
        released: Released, registry: LocalRegistry, docker_client: docker.DockerClient,
        docker_engine: DockerEngine, sandbox_image: str) -> None:
    """The sandbox image of another release: the same image, labelled with another
    protocol as its build would have labelled it."""
    older = PROTOCOL_VERSION - 1
    dockerfile = f"FROM {sandbox_image}\nLABEL {PROTOCOL_LABEL}={older}\n"
    image, _ = docker_client.images.build(fileobj=io.BytesIO(dockerfile.encode()), rm=True,
                                          pull=False)
    name = f"{registry.host}/selfcorrect-sandbox"
    try:
        reference = f"{name}@{push(docker_client, image.id, name, 'older')}"
        forget(docker_client, f"{name}:older", reference)
        with pytest.raises(SandboxUnavailable) as caught:
            require_image(docker_engine, reference)
        assert caught.value.message == (
            f"the sandbox image {reference} speaks runner protocol {older} (built for "
            f"selfcorrect {__version__}); this selfcorrect ({__version__}) speaks protocol "
            f"{PROTOCOL_VERSION}")
        assert caught.value.hint and "same selfcorrect release" in caught.value.hint
        assert docker_engine.image(reference) is not None, "refused after the pull, on its label"
    finally:
        forget(docker_client, f"{name}:older")
        docker_client.images.remove(image.id, force=True)


def test_a_digest_the_registry_does_not_hold_fails_naming_it(
        registry: LocalRegistry, docker_engine: DockerEngine) -> None:
    reference = f"{registry.host}/selfcorrect-sandbox@sha256:{'0' * 64}"
    with pytest.raises(ImagePullFailed) as caught:
        require_image(docker_engine, reference)
    assert caught.value.message.startswith(f"pulling {reference} failed: ")
    assert "manifest unknown" in caught.value.message
    assert caught.value.hint and reference in caught.value.hint


def test_a_blob_the_registry_lost_fails_the_pull_with_the_engines_reason(
        registry: LocalRegistry, docker_client: docker.DockerClient,
        docker_engine: DockerEngine) -> None:
    """The manifest is there, the image's configuration is not: the engine answers 200 and
    reports the failure inside its progress stream, not as an HTTP error."""
    dockerfile = f"FROM {BASE_IMAGE}\nLABEL org.selfcorrect.test=lost-blob-{registry.host}\n"
    image, _ = docker_client.images.build(fileobj=io.BytesIO(dockerfile.encode()), rm=True,
                                          pull=False)
    name = f"{registry.host}/lost-blob"
    digest = push(docker_client, image.id, name, "t")
    forget(docker_client, f"{name}:t")  # its only name: the image goes with it
    config = registry.manifest("lost-blob", digest)["config"]["digest"]
    shutil.rmtree(registry.blob_path(config))
    with pytest.raises(ImagePullFailed) as caught:
        require_image(docker_engine, f"{name}@{digest}")
    assert caught.value.message.startswith(f"pulling {name}@{digest} failed: ")
    assert "unknown blob" in caught.value.message
