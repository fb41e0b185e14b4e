"""The derived image's pure parts (name, Dockerfile, context) and its build-or-reuse
decision at the Engine seam."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterator, Mapping
from typing import IO, Any

import pytest

from selfcorrect_action.errors import SandboxError, SandboxUnavailable
from selfcorrect_action.sandbox.derived_image import (
    STAGING,
    context_tar,
    derived_tag,
    dockerfile,
    ensure_derived,
    requirements_hash,
)
from selfcorrect_action.sandbox.image import HASH_LABEL
from tests.fakes.fake_engine import FakeEngine

BASE = "selfcorrect-sandbox:0.1.0-abc"


def test_the_dockerfile_installs_with_pip_as_root_and_runs_as_the_sandbox_user() -> None:
    text = dockerfile(BASE)
    assert text.startswith(f"FROM {BASE}\nUSER root\n")
    assert "python3 -m pip install --no-input --break-system-packages" in text
    assert f"-r {STAGING}/requirements.txt" in text
    assert f"rm -rf {STAGING} /root/.cache" in text  # the CA bundle does not stay
    assert "chmod a-s {} +" in text
    assert text.endswith("USER 10001:10001\nWORKDIR /work\n")


def test_the_context_holds_the_dockerfile_the_requirements_and_the_ca_bundle() -> None:
    with tarfile.open(fileobj=io.BytesIO(context_tar(BASE, "toolz\n", b"PEM"))) as tar:
        names = {member.name: tar.extractfile(member).read()  # type: ignore[union-attr]
                 for member in tar.getmembers()}
    assert names == {"Dockerfile": dockerfile(BASE).encode(), "requirements.txt": b"toolz\n",
                     "build-ca.pem": b"PEM"}


def test_the_hash_changes_with_the_text_and_the_base_image() -> None:
    one = requirements_hash("toolz\n", "sha256:aaa")
    assert one == requirements_hash("toolz\n", "sha256:aaa")
    assert one != requirements_hash("toolz==1\n", "sha256:aaa")
    assert one != requirements_hash("toolz\n", "sha256:bbb")


def test_a_first_call_builds_and_a_second_reuses() -> None:
    engine = FakeEngine(images={BASE: {}})
    notes: list[str] = []

    first = ensure_derived(engine, BASE, "toolz\n", progress=notes.append, ca_bundle=b"")
    second = ensure_derived(engine, BASE, "toolz\n", progress=notes.append, ca_bundle=b"")

    wanted = requirements_hash("toolz\n", f"sha256:{BASE}")
    assert first == second == derived_tag(wanted)
    assert engine.images[first][HASH_LABEL] == wanted
    assert [n for n in notes if n.startswith("==>")] == [
        f"==> building {first}: the requirements installed on {BASE}", f"==> built {first}",
        f"==> reusing {first}: requirements and base unchanged"]


def test_an_image_under_the_tag_with_another_hash_is_rebuilt() -> None:
    wanted = requirements_hash("toolz\n", f"sha256:{BASE}")
    engine = FakeEngine(images={BASE: {}, derived_tag(wanted): {HASH_LABEL: "other"}})
    notes: list[str] = []
    ensure_derived(engine, BASE, "toolz\n", progress=notes.append, ca_bundle=b"")
    assert any(n.startswith("==> building") for n in notes)


def test_a_missing_base_image_says_how_to_build_it() -> None:
    with pytest.raises(SandboxUnavailable, match="selfcorrect sandbox build"):
        ensure_derived(FakeEngine(), BASE, "toolz\n", ca_bundle=b"")


class FailingBuild(FakeEngine):
    def build_image(self, context: IO[bytes], *, tag: str, labels: Mapping[str, str],
                    nocache: bool) -> Iterator[dict[str, Any]]:
        yield {"stream": "ERROR: No matching distribution found for nosuchpackage\n"}
        yield {"error": "The command '/bin/sh -c set -eu; ...' returned a non-zero code: 1"}


def test_a_failed_install_quotes_the_build_and_points_at_the_requirements() -> None:
    with pytest.raises(SandboxError) as caught:
        ensure_derived(FailingBuild(images={BASE: {}}), BASE, "nosuchpackage\n", ca_bundle=b"")
    assert "No matching distribution found for nosuchpackage" in caught.value.message
    assert caught.value.hint is not None and "requirements file" in caught.value.hint
