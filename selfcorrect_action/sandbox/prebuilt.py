"""A prebuilt sandbox image: the one a release's action.yml names by digest (its
`sandbox-image` default), or one the user names (`sandbox-image`, SELFCORRECT_SANDBOX_IMAGE,
`--sandbox-image`). It is used as it is: pulled when the engine does not have it, never
built, and refused before its first container (so before any model call) unless its runner
speaks this selfcorrect's protocol, which the image carries as a label written at build
time from its runner.py (image.PROTOCOL_LABEL).

Parsing the reference and judging the labels are pure; the engine calls are the few lines of
`require_image` at the bottom.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass

from selfcorrect_action import __version__
from selfcorrect_action.errors import ImagePullFailed, SandboxUnavailable, UsageError
from selfcorrect_action.sandbox.engine_api import Engine
from selfcorrect_action.sandbox.image import PROTOCOL_LABEL, VERSION_LABEL
from selfcorrect_action.sandbox.progress import NOTE, Progress, ignore_progress
from selfcorrect_action.sandbox.wire import PROTOCOL_VERSION

# Docker's reference grammar (distribution/reference), narrowed to what a registry serves:
# an optional registry host[:port]/, lower-case path components, an optional tag, an
# optional sha256 digest.
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_DOMAIN = rf"(?:{_LABEL}(?:\.{_LABEL})*(?::[0-9]+)?/)?"
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_REFERENCE = re.compile(
    rf"(?P<name>{_DOMAIN}{_COMPONENT}(?:/{_COMPONENT})*)"
    r"(?::(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?"
    r"(?:@(?P<digest>sha256:[0-9a-f]{64}))?"
)
SAME_RELEASE = ("use the sandbox image of the same selfcorrect release (the `sandbox-image` "
                "default of the action.yml you pinned)")
BUILD_INSTEAD = ("leave sandbox-image empty (`sandbox-image: ''`; --sandbox-image and "
                 "SELFCORRECT_SANDBOX_IMAGE unset) to have selfcorrect build one from its own "
                 "source on first use (about two minutes)")


@dataclass(frozen=True)
class Reference:
    name: str
    tag: str | None
    digest: str | None

    @property
    def pull_tag(self) -> str:
        """What the engine's pull takes beside the name: the digest when there is one (as
        `docker pull name:tag@digest` does), else the tag, else latest."""
        return self.digest or self.tag or "latest"


def parse_reference(text: str, *, where: str = "sandbox-image") -> Reference:
    match = _REFERENCE.fullmatch(text)
    if match is None:
        raise UsageError(
            f"{where}: {text!r} is not an image reference",
            hint="name an image as registry/name:tag or registry/name@sha256:<64 hex digits>, "
            "e.g. ghcr.io/owner/selfcorrect-sandbox@sha256:…; repository names are lower-case",
        )
    return Reference(match["name"], match["tag"], match["digest"])


def protocol_problem(reference: str, labels: Mapping[str, str], *,
                     ours: int = PROTOCOL_VERSION) -> SandboxUnavailable | None:
    """Why an image's runner cannot be spoken to, or None when its label says it can."""
    theirs = labels.get(PROTOCOL_LABEL)
    if theirs == str(ours):
        return None
    built_for = labels.get(VERSION_LABEL)
    origin = f" (built for selfcorrect {built_for})" if built_for else ""
    if theirs is None:
        said = (f"carries no {PROTOCOL_LABEL} label{origin}, so which runner protocol it "
                "speaks is unknown")
    else:
        said = f"speaks runner protocol {theirs}{origin}"
    return SandboxUnavailable(
        f"the sandbox image {reference} {said}; this selfcorrect ({__version__}) speaks "
        f"protocol {ours}", hint=f"{SAME_RELEASE}, or {BUILD_INSTEAD}")


def pull_hint(reference: str) -> str:
    return (f"check the reference {reference} (a release names its image by digest) and "
            "that this machine reaches its registry; a private image: pull it in a step "
            "before this one (`docker login`, then `docker pull`), an image already on the "
            f"engine is used without a pull; or {BUILD_INSTEAD}")


# ---- Engine I/O below: thin. ----


def require_image(engine: Engine, reference: str, *,
                  progress: Progress = ignore_progress) -> str:
    """`reference`, on the engine and checked: pulled first when the engine lacks it."""
    parsed = parse_reference(reference)
    if engine.image(reference) is None:
        progress(NOTE + f"pulling the prebuilt sandbox image {reference}")
        started = time.monotonic()
        try:
            engine.pull_image(parsed.name, parsed.pull_tag)
        except ImagePullFailed as exc:
            raise ImagePullFailed(exc.message, hint=pull_hint(reference)) from exc
        progress(NOTE + f"pulled {reference} in {time.monotonic() - started:.0f} s")
    image = engine.image(reference)
    if image is None:
        raise ImagePullFailed(f"the engine reported pulling {reference}, yet has no such image",
                              hint=pull_hint(reference))
    problem = protocol_problem(reference, image.labels)
    if problem is not None:
        raise problem
    progress(NOTE + f"using the prebuilt sandbox image {reference} (runner protocol "
             f"{PROTOCOL_VERSION})")
    return reference
