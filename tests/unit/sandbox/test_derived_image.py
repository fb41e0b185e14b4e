"""The derived image's pure parts (name, Dockerfile, context) and its build-or-reuse
decision at the Engine seam."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Callable, Iterator, Mapping
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


class ChattyBuild(FakeEngine):
    """Eight steps, 96 lines of apt and pip output between them, as a real build prints."""

    def build_image(self, context: IO[bytes], *, tag: str, labels: Mapping[str, str],
                    nocache: bool) -> Iterator[dict[str, Any]]:
        for step in range(1, 9):
            yield {"stream": f"Step {step}/8 : RUN something\n"}
            for line in range(12):
                yield {"stream": f"Get:{line} http://deb.debian.org/debian bookworm pkg-{line}\n"}
        self.images[tag] = dict(labels)
        yield {"aux": {"ID": f"sha256:{tag}"}}


def _ticking(step_s: float) -> Callable[[], float]:
    now = [0.0]

    def clock() -> float:
        now[0] += step_s
        return now[0]
    return clock


def test_a_build_shows_a_progress_line_now_and_then_not_its_output() -> None:
    """About 100 lines of docker output used to flood the terminal (issue 38, item 8)."""
    notes: list[str] = []
    tag = ensure_derived(ChattyBuild(images={BASE: {}}), BASE, "toolz\n",
                         progress=notes.append, ca_bundle=b"", clock=_ticking(1.0))
    assert all(note.startswith("==> ") for note in notes), "no line of the build's own"
    steps = [note for note in notes if ": step " in note]
    # ~105 s of build at one line a second: one line per 10 s at most.
    assert 8 <= len(steps) <= 11
    assert steps[0] == f"==> building {tag}: step 1/8, 10 s so far"
    assert steps[-1].startswith(f"==> building {tag}: step 8/8, ")
    assert notes[-1] == f"==> built {tag}"


def test_a_quick_build_says_only_that_it_starts_and_ends() -> None:
    notes: list[str] = []
    tag = ensure_derived(ChattyBuild(images={BASE: {}}), BASE, "toolz\n",
                         progress=notes.append, ca_bundle=b"", clock=_ticking(0.01))
    assert notes == [f"==> building {tag}: the requirements installed on {BASE}",
                     f"==> built {tag}"]


def test_a_failed_build_shows_its_output_in_the_error_only() -> None:
    notes: list[str] = []
    with pytest.raises(SandboxError) as caught:
        ensure_derived(FailingBuild(images={BASE: {}}), BASE, "nosuchpackage\n",
                       progress=notes.append, ca_bundle=b"")
    assert not any("nosuchpackage" in note for note in notes)
    assert "last build output:\n    ERROR: No matching distribution" in caught.value.message
