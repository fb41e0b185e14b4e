"""A prebuilt sandbox image (a release's, or one the user names): its reference read, pulled
when missing, and refused unless its runner speaks our protocol, at the Engine seam. The
real pull from a real registry is tests/integration/test_prebuilt_images.py."""

from __future__ import annotations

import pytest

from selfcorrect_action import __version__
from selfcorrect_action.errors import ImagePullFailed, SandboxUnavailable, UsageError
from selfcorrect_action.sandbox.image import PROTOCOL_LABEL, VERSION_LABEL
from selfcorrect_action.sandbox.prebuilt import (
    Reference,
    parse_reference,
    protocol_problem,
    require_image,
)
from selfcorrect_action.sandbox.wire import PROTOCOL_VERSION
from tests.fakes.fake_engine import SPEAKS_OUR_PROTOCOL, FakeEngine

DIGEST = "sha256:" + "0123456789abcdef" * 4
RELEASED = f"ghcr.io/owner/selfcorrect-sandbox@{DIGEST}"


@pytest.mark.parametrize(("text", "expected"), [
    ("selfcorrect-sandbox:0.1.0-0c3c33eaefea",
     Reference("selfcorrect-sandbox", "0.1.0-0c3c33eaefea", None)),
    (RELEASED, Reference("ghcr.io/owner/selfcorrect-sandbox", None, DIGEST)),
    (f"127.0.0.1:5000/selfcorrect-sandbox:0.2.0@{DIGEST}",
     Reference("127.0.0.1:5000/selfcorrect-sandbox", "0.2.0", DIGEST)),
    ("localhost/team/sandbox", Reference("localhost/team/sandbox", None, None)),
])
def test_references_are_read_as_docker_reads_them(text: str, expected: Reference) -> None:
    assert parse_reference(text) == expected


@pytest.mark.parametrize("text", [
    "ghcr.io/Owner/selfcorrect-sandbox:1",  # repository paths are lower-case
    "selfcorrect sandbox",
    "ghcr.io/owner/selfcorrect-sandbox@sha256:abc",  # a digest is 64 hex digits
    "ghcr.io/owner/selfcorrect-sandbox@md5:" + "0" * 32,
    "",
])
def test_a_malformed_reference_is_a_usage_error_naming_it(text: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_reference(text)
    assert repr(text) in caught.value.message and caught.value.message.startswith("sandbox-image")
    assert caught.value.hint and "@sha256:" in caught.value.hint


def test_a_digest_is_what_gets_pulled_when_there_is_one() -> None:
    assert parse_reference(f"a/b:1.0@{DIGEST}").pull_tag == DIGEST
    assert parse_reference("a/b:1.0").pull_tag == "1.0"
    assert parse_reference("a/b").pull_tag == "latest"


def test_an_image_speaking_our_protocol_passes() -> None:
    assert protocol_problem(RELEASED, {PROTOCOL_LABEL: str(PROTOCOL_VERSION)}) is None


def test_a_mismatched_protocol_names_both_versions_and_the_fix() -> None:
    problem = protocol_problem(RELEASED, {PROTOCOL_LABEL: "2", VERSION_LABEL: "0.0.9"}, ours=3)
    assert problem is not None
    assert problem.message == (
        f"the sandbox image {RELEASED} speaks runner protocol 2 (built for selfcorrect "
        f"0.0.9); this selfcorrect ({__version__}) speaks protocol 3")
    assert problem.hint and "same selfcorrect release" in problem.hint
    assert "sandbox-image: ''" in problem.hint


def test_an_image_without_the_label_is_refused_as_unknown() -> None:
    """A `docker build sandbox/` by hand, or an image made before the label existed."""
    problem = protocol_problem("mine:latest", {}, ours=3)
    assert problem is not None
    assert "carries no org.selfcorrect.protocol label" in problem.message
    assert "speaks protocol 3" in problem.message


def test_an_image_on_the_engine_is_used_without_a_pull() -> None:
    engine = FakeEngine(images={RELEASED: SPEAKS_OUR_PROTOCOL})
    notes: list[str] = []
    assert require_image(engine, RELEASED, progress=notes.append) == RELEASED
    assert engine.pulled == []
    assert any(f"runner protocol {PROTOCOL_VERSION}" in note for note in notes)


def test_a_missing_image_is_pulled_by_digest_then_checked() -> None:
    engine = FakeEngine(registry={RELEASED: SPEAKS_OUR_PROTOCOL})
    notes: list[str] = []
    assert require_image(engine, RELEASED, progress=notes.append) == RELEASED
    assert engine.pulled == [RELEASED]
    assert any(note.endswith(f"pulling the prebuilt sandbox image {RELEASED}")
               for note in notes)


def test_a_failed_pull_names_the_reference_the_reason_and_the_fix() -> None:
    engine = FakeEngine()
    with pytest.raises(ImagePullFailed) as caught:
        require_image(engine, RELEASED)
    assert caught.value.message == f"pulling {RELEASED} failed: manifest unknown"
    hint = caught.value.hint or ""
    assert RELEASED in hint and "docker login" in hint and "sandbox-image: ''" in hint


def test_a_pulled_image_of_another_protocol_is_refused() -> None:
    engine = FakeEngine(registry={RELEASED: {PROTOCOL_LABEL: str(PROTOCOL_VERSION - 1)}})
    with pytest.raises(SandboxUnavailable) as caught:
        require_image(engine, RELEASED)
    assert f"speaks runner protocol {PROTOCOL_VERSION - 1}" in caught.value.message
    assert engine.history == [], "no container was started"


def test_a_malformed_reference_is_refused_before_the_engine_is_asked() -> None:
    engine = FakeEngine(images={"Bad Name": SPEAKS_OUR_PROTOCOL})
    with pytest.raises(UsageError):
        require_image(engine, "Bad Name")
    assert engine.pulled == []
