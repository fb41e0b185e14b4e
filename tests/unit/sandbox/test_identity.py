"""An image's identity without Docker: the listing's digest, the probe's parsing, and the
cache by image id over the fake engine (whose fake runner answers the probe with a listing
file). tests/integration/test_image_identity.py runs the probe in the real image."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.errors import SandboxError, SandboxUnavailable
from selfcorrect_action.sandbox import identity_probe
from selfcorrect_action.sandbox.identity import (
    ImageIdentity,
    cache_path,
    default_cache_dir,
    image_identity,
    listing_digest,
    listing_request,
)
from selfcorrect_action.sandbox.image import HASH_LABEL
from tests.fakes.fake_engine import FakeEngine, Reply

LISTING = ["deb:libc6=2.36-9+deb12u9", "deb:python3=3.11.2-1+b1", "py:numpy==1.24.2"]
TAG = "selfcorrect-sandbox:test"
IMAGE_ID = f"sha256:{TAG}"  # the fake engine's id for a tag


def test_the_digest_ignores_order_and_repeats() -> None:
    shuffled = [LISTING[2], LISTING[0], LISTING[1], LISTING[0]]
    assert listing_digest(shuffled) == listing_digest(LISTING)
    assert len(listing_digest(LISTING)) == 64


def test_a_changed_version_or_an_added_package_changes_the_digest() -> None:
    bumped = [*LISTING[:2], "py:numpy==1.24.3"]
    assert listing_digest(bumped) != listing_digest(LISTING)
    assert listing_digest([*LISTING, "py:fakepkg==1.0"]) != listing_digest(LISTING)


STATUS = """\
Package: libc6
Status: install ok installed
Multi-Arch: same
Version: 2.36-9+deb12u9
Description: GNU C Library: Shared libraries
 Package: not-a-field
 Version: 9

Package: removed-tool
Status: deinstall ok config-files
Version: 1.0

Package: held
Status: hold ok installed
Version: 3:1.2
"""


def test_dpkg_lines_are_the_installed_packages_only() -> None:
    assert identity_probe.dpkg_lines(STATUS) == ["deb:libc6=2.36-9+deb12u9", "deb:held=3:1.2"]


def test_python_names_are_normalised_and_nameless_ones_left_out() -> None:
    assert identity_probe.python_line("Ruamel.YAML", "0.17") == "py:ruamel-yaml==0.17"
    assert identity_probe.python_line(None, "1.0") is None
    assert identity_probe.python_line("x", None) is None


def test_the_probe_runs_as_a_script_and_writes_what_the_host_accepts(tmp_path: Path) -> None:
    probe = Path(identity_probe.__file__)
    done = subprocess.run([sys.executable, "-I", str(probe)], cwd=tmp_path, check=True,
                          capture_output=True, text=True, timeout=60)
    lines = (tmp_path / identity_probe.LISTING_FILE).read_text().splitlines()
    assert lines == identity_probe.listing(lines) and int(done.stdout) == len(lines)
    assert any(line.startswith("py:pydantic==") for line in lines)


def test_the_cache_folder_follows_xdg() -> None:
    assert default_cache_dir({"XDG_CACHE_HOME": "/c", "HOME": "/h"}) == Path(
        "/c/selfcorrect/image-identity")
    assert default_cache_dir({"XDG_CACHE_HOME": "rel", "HOME": "/h"}) == Path(
        "/h/.cache/selfcorrect/image-identity")
    assert default_cache_dir({}) is None
    assert cache_path(Path("/c"), "../etc/passwd") is None


def _engine(listing: bytes = "\n".join(LISTING).encode() + b"\n",
            report: dict[str, Any] | None = None) -> FakeEngine:
    return FakeEngine(images={TAG: {HASH_LABEL: "ctx"}}, behaviour=lambda header: Reply(
        report=report or {"exit_code": 0}, files={identity_probe.LISTING_FILE: listing}))


def test_a_first_call_lists_in_a_container_and_a_second_reads_the_cache(
        tmp_path: Path) -> None:
    engine = _engine()
    first = image_identity(engine, TAG, cache_dir=tmp_path)
    again = image_identity(engine, TAG, cache_dir=tmp_path)

    assert first == again == ImageIdentity(
        tag=TAG, context_hash="ctx", image_id=IMAGE_ID, packages_digest=listing_digest(LISTING),
        packages=3)
    assert len(engine.history) == 1, "the second call started no container"
    config, request = engine.history[0].config, engine.history[0].requests[0]
    assert config["image"] == IMAGE_ID, "the container runs the id the cache is keyed by"
    assert request["argv"] == listing_request().argv
    assert (tmp_path / f"{IMAGE_ID}.json").is_file()


def test_the_cache_is_read_from_its_file(tmp_path: Path) -> None:
    planted = ImageIdentity(tag="old:name", context_hash="old", image_id=IMAGE_ID,
                            packages_digest="f" * 64, packages=7)
    (tmp_path / f"{IMAGE_ID}.json").write_text(planted.model_dump_json())
    engine = _engine()

    found = image_identity(engine, TAG, cache_dir=tmp_path)

    assert engine.history == []
    # The packages are the image id's; its name and label are the ones asked about now.
    assert found == planted.model_copy(update={"tag": TAG, "context_hash": "ctx"})


@pytest.mark.parametrize("content", ["{not json", '{"tag": "x"}', ImageIdentity(
    tag=TAG, context_hash="", image_id="sha256:another", packages_digest="0" * 64,
    packages=1).model_dump_json()])
def test_a_corrupt_or_foreign_cache_file_is_ignored_and_rewritten(
        tmp_path: Path, content: str) -> None:
    path = tmp_path / f"{IMAGE_ID}.json"
    path.write_text(content)
    engine = _engine()

    found = image_identity(engine, TAG, cache_dir=tmp_path)

    assert len(engine.history) == 1 and found.packages_digest == listing_digest(LISTING)
    assert ImageIdentity.model_validate_json(path.read_text()) == found


def test_the_default_cache_lives_under_xdg_cache_home(tmp_path: Path) -> None:
    image_identity(_engine(), TAG, environ={"XDG_CACHE_HOME": str(tmp_path)})
    assert (tmp_path / "selfcorrect" / "image-identity" / f"{IMAGE_ID}.json").is_file()


def test_a_missing_image_is_unavailable_with_a_hint(tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailable, match="not on the Docker engine") as caught:
        image_identity(_engine(), "nowhere:1", cache_dir=tmp_path)
    assert caught.value.hint and "sandbox build" in caught.value.hint


@pytest.mark.parametrize(("engine", "says"), [
    (_engine(report={"exit_code": 1, "stderr": {"text": "Traceback\nOSError: boom\n",
                                                "total_bytes": 26}}),
     "exited with 1: OSError: boom"),
    (_engine(listing=b"deb:libc6=2.36\nWARNING: something\n"), "no package: 'WARNING"),
    (FakeEngine(images={TAG: {}}), "did not come back"),
])
def test_a_failed_listing_is_a_sandbox_error_and_nothing_is_cached(
        tmp_path: Path, engine: FakeEngine, says: str) -> None:
    with pytest.raises(SandboxError, match=says) as caught:
        image_identity(engine, TAG, cache_dir=tmp_path)
    assert "listing the packages installed in" in caught.value.message and caught.value.hint
    assert list(tmp_path.iterdir()) == []
