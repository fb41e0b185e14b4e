"""scripts/release.py, the release workflow's own steps: the version check, the image names,
the labels the images are built with, and action.yml rewritten to name them by digest.
tests/integration/test_prebuilt_images.py runs them against images in a real registry."""

from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from scripts.release import (
    ROOT,
    ReleaseError,
    check_version,
    image_labels,
    image_names,
    main,
    rewrite_action_yml,
)
from selfcorrect_action import __version__
from selfcorrect_action.resources import sandbox_context
from selfcorrect_action.sandbox.image import PROTOCOL_LABEL, build_labels, context_hash
from selfcorrect_action.sandbox.wire import PROTOCOL_VERSION

SCRIPT = ROOT / "scripts" / "release.py"
DIGEST = "sha256:" + "5e" * 32
ACTION = f"ghcr.io/owner/selfcorrect-action@{DIGEST}"
SANDBOX = f"ghcr.io/owner/selfcorrect-sandbox@{DIGEST}"


def test_the_package_version_is_a_release_version_and_names_the_tag() -> None:
    assert check_version(__version__) == f"v{__version__}"


@pytest.mark.parametrize("asked", ["v0.1.0", "0.1", "0.1.0-beta", "0.1.0\n", "latest"])
def test_a_malformed_version_is_refused(asked: str) -> None:
    with pytest.raises(ReleaseError, match="is not a release version"):
        check_version(asked)


def test_a_version_the_commit_does_not_carry_is_refused_naming_both(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0.2.0"\n')
    with pytest.raises(ReleaseError) as caught:
        check_version("0.2.0", root=tmp_path, package="0.1.0")
    assert "pyproject.toml: 0.2.0" in str(caught.value) and "__init__.py: 0.1.0" in str(
        caught.value)


def test_image_names_are_lower_case_under_the_owner() -> None:
    assert image_names("Some-Org") == {"action": "ghcr.io/some-org/selfcorrect-action",
                                       "sandbox": "ghcr.io/some-org/selfcorrect-sandbox"}
    with pytest.raises(ReleaseError):
        image_names("a/b")


def test_the_sandbox_image_gets_the_labels_of_a_local_build() -> None:
    """So the release's image is checked as one built by `selfcorrect sandbox build`, and
    carries the protocol of the runner in it."""
    labels = image_labels("sandbox", version=__version__, source="https://github.com/o/r",
                          revision="abc")
    local = build_labels(wanted_hash=context_hash(sandbox_context()),
                         protocol=PROTOCOL_VERSION)
    assert local.items() <= labels.items()
    assert labels[PROTOCOL_LABEL] == str(PROTOCOL_VERSION)
    assert labels["org.opencontainers.image.source"] == "https://github.com/o/r"


def test_the_action_image_gets_the_oci_labels_only() -> None:
    labels = image_labels("action", version="1.0.0", source="s", revision="r")
    assert labels == {"org.opencontainers.image.version": "1.0.0",
                      "org.opencontainers.image.revision": "r",
                      "org.opencontainers.image.source": "s"}


def test_the_labels_need_nothing_installed() -> None:
    """The workflow runs them on the runner's python3 before installing anything: -S keeps
    site-packages (pydantic, docker...) out of reach."""
    done = subprocess.run([sys.executable, "-S", str(SCRIPT), "labels", "sandbox",
                           "--version", __version__, "--source", "s", "--revision", "r"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert f"{PROTOCOL_LABEL}={PROTOCOL_VERSION}" in done.stdout.splitlines()


def test_action_yml_names_both_images_by_digest_and_keeps_everything_else() -> None:
    before = (ROOT / "action.yml").read_text()
    after = rewrite_action_yml(before, action_image=ACTION, sandbox_image=SANDBOX,
                               revision="abc123")
    changed = [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(),
                                                     lineterm="", n=0)
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert changed == [
        '-    default: ""',
        f'+    default: "{SANDBOX}"',
        "-  image: Dockerfile",
        f"+  image: docker://{ACTION}  # built at abc123 by .github/workflows/release.yml",
    ]
    loaded = YAML(typ="safe").load(after)
    assert loaded["runs"]["image"] == f"docker://{ACTION}"
    assert loaded["inputs"]["sandbox-image"]["default"] == SANDBOX


def test_rewriting_a_released_action_yml_again_moves_only_the_digests() -> None:
    once = rewrite_action_yml((ROOT / "action.yml").read_text(), action_image=ACTION,
                              sandbox_image=SANDBOX)
    other = "sha256:" + "7f" * 32
    twice = rewrite_action_yml(once, action_image=ACTION.replace(DIGEST, other),
                               sandbox_image=SANDBOX.replace(DIGEST, other))
    assert twice == once.replace(DIGEST, other)


@pytest.mark.parametrize("reference", [
    "ghcr.io/owner/selfcorrect-action:1.0.0",  # a tag can be moved under the release
    "ghcr.io/owner/selfcorrect-action@sha256:abc",
])
def test_only_images_named_by_digest_are_written(reference: str) -> None:
    with pytest.raises(ReleaseError, match="not an image named by digest"):
        rewrite_action_yml((ROOT / "action.yml").read_text(), action_image=reference,
                           sandbox_image=SANDBOX)


def test_an_action_yml_that_is_not_a_docker_action_is_refused() -> None:
    with pytest.raises(ReleaseError, match="using: docker"):
        rewrite_action_yml("name: x\nruns:\n  using: node24\n  main: index.js\n",
                           action_image=ACTION, sandbox_image=SANDBOX)


def test_the_command_line_rewrites_the_file_and_reports_errors(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "action.yml"
    target.write_text((ROOT / "action.yml").read_text())
    assert main(["action-yml", "--action-image", ACTION, "--sandbox-image", SANDBOX,
                 "--file", str(target)]) == 0
    assert f"docker://{ACTION}" in target.read_text()
    assert main(["check-version", "v1"]) == 1
    assert capsys.readouterr().err.startswith("error: version 'v1' is not a release version")
