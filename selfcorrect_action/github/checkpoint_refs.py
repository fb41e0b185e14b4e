"""A run's checkpoint kept in the repository itself, where the next job reads it with the
token it already has (issue 37, item 4): `refs/selfcorrect/checkpoints/<key>` (beside the
lock refs of branch_lock.py) points at a commit whose tree holds the checkpoint folder's
two files (runs/checkpoint.py: checkpoint.json and exchanges.jsonl), and whose message is a
note of what they are: the run, the digests it is bound to, what it had done and spent, and
each file's sha256 and size.

The key is the issue's (or pull request's) number; a dispatched spec, which has none, keys
its checkpoint by its path, sanitized into one ref component and made unique by a digest.

The note is what a later job decides on before downloading anything: a checkpoint of
another selfcorrect version or older than MAX_AGE is stale (ignored, and removed by the
writer); the files are downloaded only when the tree holds exactly those two blobs, within
the cap, with the sizes and digests the note names: anything else (a ref someone pointed
elsewhere, a half-edited recording) is refused, never run. The core checks the rest
(runs/checkpoint.py: the spec, the approval, the version inside checkpoint.json).

This module only reads; every write is action/writes/checkpoints.py's, behind the door.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from selfcorrect_action.errors import UsageError
from selfcorrect_action.github.forge import Commit, Forge

CHECKPOINT_PREFIX = "refs/selfcorrect/checkpoints/"
# Both files of a checkpoint together. A run's recording is some tens of KiB an exchange;
# ten attempts of a large script stay well under it, and the cap keeps a runaway recording
# (or a forged ref) from filling the repository or the runner's disk.
MAX_CHECKPOINT_BYTES = 8 * 1024 * 1024
# A checkpoint is for going on with a run soon after it stopped; past this its task (and
# its models' prices) have likely moved on, and it is removed.
MAX_AGE = timedelta(days=30)
CHECKPOINT_FILE = "checkpoint.json"  # the names runs/checkpoint.py gives them
EXCHANGES_FILE = "exchanges.jsonl"
FILE_NAMES = (CHECKPOINT_FILE, EXCHANGES_FILE)
_NOTE_HEAD = "selfcorrect: checkpoint of "
_FIELD = re.compile(r"^(?P<name>[A-Z][A-Za-z0-9-]*): (?P<value>.*)$", re.MULTILINE)
_SLUG = re.compile(r"[^A-Za-z0-9_-]+")


def issue_key(number: int) -> str:
    """Issues and pull requests share one numbering: the number alone is unique."""
    return str(number)


def spec_key(path: str) -> str:
    """A dispatched spec's key: its path as one ref component (no dots, so no `..`, no
    `.lock`, no leading dot), then a digest of the path itself, so `a/b.yml` and `a-b.yml`
    differ."""
    slug = _SLUG.sub("-", path).strip("-")[:60] or "spec"
    return f"spec-{slug}-{hashlib.sha256(path.encode()).hexdigest()[:10]}"


def checkpoint_ref(key: str) -> str:
    return CHECKPOINT_PREFIX + key


class StoredFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size: int = Field(ge=0)


class CheckpointNote(BaseModel):
    """What a checkpoint commit's message says (render / parse below)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    label: str  # for people: "issue #12", ".selfcorrect/tasks/sales.yml"
    run_id: str
    version: str  # the selfcorrect that wrote it
    spec_sha256: str
    approval_sha256: str = ""  # "": a spec's run, approved by no issue text
    status: str = "running"
    attempts: int = Field(default=0, ge=0)
    tokens: int = Field(default=0, ge=0)
    cost_usd: float = Field(default=0.0, ge=0)
    llm_calls: int = Field(default=0, ge=0)
    saved_at: datetime
    files: tuple[StoredFile, ...] = ()

    def stale(self, *, now: datetime, version: str) -> str | None:
        """Why this checkpoint is ignored (and removed), or None when it is usable."""
        if self.version != version:
            return (f"it was made by selfcorrect {self.version}, and this is {version}: a "
                    "run is resumed only by the version that recorded it")
        if now - self.saved_at > MAX_AGE:
            return (f"it was saved on {self.saved_at:%Y-%m-%d}, more than "
                    f"{MAX_AGE.days} days ago")
        return None

    def saved(self) -> str:
        """What going on from it saves, for people."""
        calls = f"{self.llm_calls} model call{'' if self.llm_calls == 1 else 's'}"
        attempts = f"{self.attempts} attempt{'' if self.attempts == 1 else 's'}"
        cost = f", ${self.cost_usd:.4f}" if self.cost_usd else ""
        return f"{attempts}, {calls}, {self.tokens:,} tokens{cost}"


def render_note(note: CheckpointNote) -> str:
    lines = [f"{_NOTE_HEAD}{note.label} after {note.attempts} attempt(s)", "",
             f"Key: {note.key}", f"Run: {note.run_id}", f"Version: {note.version}",
             f"Spec-Sha256: {note.spec_sha256}",
             f"Approval-Sha256: {note.approval_sha256 or 'none'}", f"Status: {note.status}",
             f"Attempts: {note.attempts}", f"Tokens: {note.tokens}",
             f"Cost-Usd: {note.cost_usd:.6f}", f"Llm-Calls: {note.llm_calls}",
             f"Saved-At: {note.saved_at.astimezone(UTC).isoformat(timespec='seconds')}"]
    lines += [f"File: {f.name} {f.sha256} {f.size}" for f in note.files]
    return "\n".join(lines) + "\n"


def parse_note(message: str) -> CheckpointNote | None:
    """The note of a checkpoint commit; None when the message is not one (someone else's
    commit, or one we cannot read)."""
    if not message.startswith(_NOTE_HEAD):
        return None
    fields: dict[str, str] = {}
    files: list[dict[str, object]] = []
    for match in _FIELD.finditer(message):
        name, value = match.group("name"), match.group("value").strip()
        if name == "File":
            parts = value.split(" ")
            if len(parts) != 3 or not parts[2].isdigit():
                return None
            files.append({"name": parts[0], "sha256": parts[1], "size": int(parts[2])})
        else:
            fields[name] = value
    label = message[len(_NOTE_HEAD):].partition("\n")[0].rpartition(" after ")[0]
    approval = fields.get("Approval-Sha256", "")
    names = {"Key": "key", "Run": "run_id", "Version": "version",
             "Spec-Sha256": "spec_sha256", "Status": "status", "Attempts": "attempts",
             "Tokens": "tokens", "Cost-Usd": "cost_usd", "Llm-Calls": "llm_calls",
             "Saved-At": "saved_at"}
    data: dict[str, object] = {field: fields[name] for name, field in names.items()
                               if name in fields}
    try:
        return CheckpointNote.model_validate({
            **data, "label": label, "files": files,
            "approval_sha256": "" if approval == "none" else approval})
    except ValidationError:
        return None


def describe_files(files: dict[str, bytes]) -> tuple[StoredFile, ...]:
    return tuple(StoredFile(name=name, sha256=hashlib.sha256(data).hexdigest(),
                            size=len(data)) for name, data in sorted(files.items()))


@dataclass(frozen=True)
class Found:
    """A checkpoint ref as found: its commit, and its note (None: not one we can read)."""

    key: str
    ref: str
    commit: Commit
    note: CheckpointNote | None

    def stale(self, *, now: datetime, version: str) -> str | None:
        if self.note is None:
            return "its commit is not a checkpoint this selfcorrect can read"
        if self.note.key != self.key:
            return f"its note is of {self.note.key!r}, not of {self.key!r}"
        return self.note.stale(now=now, version=version)


def find_checkpoint(forge: Forge, key: str) -> Found | None:
    """The checkpoint kept under `key`, None when there is none."""
    ref = checkpoint_ref(key)
    commit = forge.read_ref(ref)
    if commit is None:
        return None
    return Found(key, ref, commit, parse_note(commit.message))


def download(forge: Forge, found: Found, folder: Path) -> Path:
    """The checkpoint's two files written into `folder` (made), once their tree, sizes and
    digests are the ones its note names; UsageError otherwise, with nothing run."""
    note = found.note
    if note is None:
        raise _refused(found, "its commit is not a checkpoint this selfcorrect can read")
    declared = {f.name: f for f in note.files}
    if sorted(declared) != sorted(FILE_NAMES):
        raise _refused(found, f"its note names {sorted(declared)}, not {list(FILE_NAMES)}")
    if sum(f.size for f in declared.values()) > MAX_CHECKPOINT_BYTES:
        raise _refused(found, f"it is larger than {MAX_CHECKPOINT_BYTES // 2**20} MiB")
    entries = {entry.path: entry for entry in forge.read_tree(found.commit.tree_sha)}
    if sorted(entries) != sorted(FILE_NAMES) or any(e.type != "blob" for e in entries.values()):
        raise _refused(found, f"its tree holds {sorted(entries)}, not {list(FILE_NAMES)}")
    data: dict[str, bytes] = {}
    for name, entry in sorted(entries.items()):
        if entry.size != declared[name].size:
            raise _refused(found, f"{name} is {entry.size} bytes, its note says "
                           f"{declared[name].size}")
        data[name] = forge.read_blob(entry.sha)
        if hashlib.sha256(data[name]).hexdigest() != declared[name].sha256:
            raise _refused(found, f"{name} is not the file its note names (its digest "
                           "differs): it was changed after it was saved")
    folder.mkdir(parents=True, exist_ok=True)  # only once both are what the note says
    for name, content in data.items():
        (folder / name).write_bytes(content)
    return folder


def _refused(found: Found, why: str) -> UsageError:
    return UsageError(f"the checkpoint {found.ref} ({found.commit.sha[:7]}) cannot be resumed: "
                      f"{why}", hint="comment `/selfcorrect retry` to start the run afresh; "
                      "a new run replaces the checkpoint")
