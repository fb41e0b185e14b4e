"""What changed between a verification record and the repository, and what that makes the
spec: verified (nothing: nothing runs), changed (re-verify in the sandbox, no model call),
or stale (the prompt changed: only the judge or a regeneration can say whether the script
still does what is asked). Pure."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from selfcorrect_action.verified.fingerprint import Fingerprint
from selfcorrect_action.verified.record import FileDigest, ImageRecord, VerifiedRecord


class What(StrEnum):
    PROMPT = "prompt"
    SPEC = "spec"
    INPUT = "input"
    TEST = "test"
    SCRIPT = "script"
    IMAGE = "image"


@dataclass(frozen=True)
class Change:
    what: What
    path: str = ""
    detail: str = ""  # added, removed, changed, or what differs in the image

    def __str__(self) -> str:
        named = f"{self.what.value} {self.path}".strip()
        return f"{named} ({self.detail})" if self.detail else named


def changes(record: VerifiedRecord, now: Fingerprint, image: ImageRecord | None
            ) -> list[Change]:
    """Every difference, in a fixed order; `image` None: not compared (no Docker engine)."""
    found: list[Change] = []
    if record.prompt_sha256 != now.prompt_sha256:
        found.append(Change(What.PROMPT, record.spec, "changed"))
    if record.fields_sha256 != now.fields_sha256:
        found.append(Change(What.SPEC, record.spec, "its fields changed"))
    found += _files(What.INPUT, record.inputs, now.inputs)
    found += _files(What.TEST, record.tests, now.tests)
    if now.script is None:
        found.append(Change(What.SCRIPT, record.script.path, "removed"))
    elif now.script != record.script:
        detail = "changed" if now.script.path == record.script.path else (
            f"now {now.script.path}")
        found.append(Change(What.SCRIPT, record.script.path, detail))
    if image is not None and (difference := image_difference(record.image, image)):
        found.append(Change(What.IMAGE, image.tag, difference))
    return found


def image_difference(recorded: ImageRecord, now: ImageRecord) -> str:
    """"" when the image is the one the record was verified in: the same installed
    packages when both sides know them, else the same build context."""
    if recorded.packages_digest and now.packages_digest:
        if recorded.packages_digest == now.packages_digest:
            return ""
        return (f"its installed packages differ: {recorded.packages_digest[:12]} recorded, "
                f"{now.packages_digest[:12]} now")
    if recorded.context_hash and recorded.context_hash == now.context_hash:
        return ""
    if recorded.tag == now.tag:
        return ""
    return f"{recorded.tag} recorded, {now.tag} now"


def is_stale(found: list[Change]) -> bool:
    return any(change.what is What.PROMPT for change in found)


def _files(what: What, recorded: list[FileDigest], now: tuple[FileDigest, ...]) -> list[Change]:
    before = {item.path: item.sha256 for item in recorded}
    after = {item.path: item.sha256 for item in now}
    found = [Change(what, path, "removed") for path in before if path not in after]
    found += [Change(what, path, "added") for path in after if path not in before]
    found += [Change(what, path, "changed") for path in after
              if path in before and before[path] != after[path]]
    return sorted(found, key=lambda change: (change.path, change.detail))
