"""Copying artifacts out of the runner's tar stream onto the host, treating it as hostile.

Only regular files are written; names are checked (relative, no '..', no absolute paths);
links are recorded and never created or followed; sizes and counts are capped while reading,
so a lying header or an endless stream cannot grow our memory or disk.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from selfcorrect_action.records import evolve
from selfcorrect_action.sandbox.models import ArtifactRecord, OutputCaps
from selfcorrect_action.sandbox.ustar import Member, Readable, UstarError, UstarReader

# Tar headers, padding and end-of-archive blocks on top of the file bytes themselves.
_OVERHEAD_PER_MEMBER = 3 * 512
_OVERHEAD_FIXED = 64 * 1024
# Rejected entries (links, fifos, oversized files) listed beyond the file cap.
_MAX_REJECTED_MEMBERS = 100


class _Budget:
    """A reader that refuses to hand out more than `limit` bytes in total."""

    def __init__(self, source: Readable, limit: int) -> None:
        self._source, self._left = source, limit

    def read(self, size: int = -1) -> bytes:
        data = self._source.read(size)
        self._left -= len(data)
        if self._left < 0:
            raise ArchiveTooLarge
        return data


class ArchiveTooLarge(Exception):
    pass


def safe_member_name(name: str) -> str | None:
    """The normalised relative path of a member, or None when it points outside."""
    if not name or "\\" in name or "\x00" in name:
        return None
    pure = PurePosixPath(name)
    if pure.is_absolute() or ".." in pure.parts:
        return None
    parts = [part for part in pure.parts if part not in ("", ".")]
    return "/".join(parts) or None


def extract_artifacts(
    source: Readable, destination: Path, caps: OutputCaps
) -> tuple[list[ArtifactRecord], str | None]:
    """Write the stream's regular files under `destination`. Returns the records and, when
    the stream had to be abandoned, why."""
    limit = caps.artifact_max_total_bytes + _OVERHEAD_FIXED
    limit += caps.artifact_max_files * _OVERHEAD_PER_MEMBER
    reader = UstarReader(_Budget(source, limit))
    records: list[ArtifactRecord] = []
    seen: set[str] = set()
    stored, written = 0, 0
    try:
        for member in reader.members():
            record = _admit(member, seen, stored, written, caps)
            if record.rejected is None:
                record = _write(reader, destination, record)
            if record.rejected is None:
                stored, written = stored + 1, written + record.size
            seen.add(record.path.casefold())
            records.append(record)
            if len(records) > caps.artifact_max_files + _MAX_REJECTED_MEMBERS:
                return records, "artifact stream listed too many entries; the rest was dropped"
    except ArchiveTooLarge:
        return records, "artifact stream exceeded its size cap; the rest was dropped"
    except (UstarError, OSError) as exc:
        return records, f"artifact stream was malformed: {exc}"
    return records, None


def _admit(
    member: Member, seen: set[str], stored: int, written: int, caps: OutputCaps
) -> ArtifactRecord:
    name = safe_member_name(member.name)
    size = max(0, member.size)
    if name is None:
        return ArtifactRecord(path=member.name[:200], size=size, rejected="unsafe path")
    reason = None
    if member.kind in ("symlink", "hardlink"):
        reason = "link (not followed)"
    elif member.kind != "file":
        reason = "not a regular file"
    elif stored >= caps.artifact_max_files:
        reason = "too many files"
    elif size > caps.artifact_max_file_bytes:
        reason = "file too large"
    elif written + size > caps.artifact_max_total_bytes:
        reason = "total size cap"
    elif name.casefold() in seen:  # also a case-only twin, fatal on case-insensitive disks
        reason = "duplicate entry"
    return ArtifactRecord(path=name, size=size, rejected=reason)


def _write(reader: UstarReader, destination: Path, record: ArtifactRecord) -> ArtifactRecord:
    target = destination / record.path
    try:
        _make_parents(destination, record.path)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        return evolve(record, {"rejected": f"cannot be written on the host: {exc}"})
    with os.fdopen(fd, "wb") as out:
        while block := reader.read_member(1 << 20):
            out.write(block)
    return evolve(record, {"host_path": target})


def _make_parents(destination: Path, rel: str) -> None:
    """Create intermediate folders one by one, refusing any that is not a real folder we
    made (a file and a folder of the same name, or anything link-like)."""
    current = destination
    for part in PurePosixPath(rel).parts[:-1]:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            raise OSError(f"{current.name} is not a folder")
        current.mkdir(mode=0o700, exist_ok=True)


