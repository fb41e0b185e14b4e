"""Copying artifacts out of the runner's tar stream onto the host, treating it as hostile.

Only regular files are written; names are checked (relative, no '..', no absolute paths);
links are recorded and never created or followed; sizes and counts are capped while reading,
so a lying header or an endless stream cannot grow our memory or disk.
"""

from __future__ import annotations

import os
import tarfile
from pathlib import Path, PurePosixPath
from typing import BinaryIO, Protocol

from selfcorrect_action.sandbox.models import ArtifactRecord, OutputCaps

# Tar headers, padding and end-of-archive blocks on top of the file bytes themselves.
_OVERHEAD_PER_MEMBER = 3 * 512
_OVERHEAD_FIXED = 64 * 1024


class Readable(Protocol):
    def read(self, size: int = -1) -> bytes: ...


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
    records: list[ArtifactRecord] = []
    written = 0
    try:
        with tarfile.open(fileobj=_Budget(source, limit), mode="r|") as archive:  # type: ignore[call-overload]
            for member in archive:
                record = _admit(member, records, written, caps)
                if record.rejected is None:
                    record = _write(archive, member, destination, record)
                    written += record.size if record.rejected is None else 0
                records.append(record)
    except ArchiveTooLarge:
        return records, "artifact stream exceeded its size cap; the rest was dropped"
    except (tarfile.TarError, OSError, EOFError) as exc:
        return records, f"artifact stream was malformed: {exc}"
    return records, None


def _admit(
    member: tarfile.TarInfo, seen: list[ArtifactRecord], written: int, caps: OutputCaps
) -> ArtifactRecord:
    name = safe_member_name(member.name)
    size = max(0, member.size)
    if name is None:
        return ArtifactRecord(path=member.name[:200], size=size, rejected="unsafe path")
    reason = None
    if member.issym() or member.islnk():
        reason = "link (not followed)"
    elif not member.isreg():
        reason = "not a regular file"
    elif sum(r.rejected is None for r in seen) >= caps.artifact_max_files:
        reason = "too many files"
    elif size > caps.artifact_max_file_bytes:
        reason = "file too large"
    elif written + size > caps.artifact_max_total_bytes:
        reason = "total size cap"
    elif any(r.path == name for r in seen):
        reason = "duplicate entry"
    return ArtifactRecord(path=name, size=size, rejected=reason)


def _write(
    archive: tarfile.TarFile, member: tarfile.TarInfo, destination: Path, record: ArtifactRecord
) -> ArtifactRecord:
    target = destination / record.path
    try:
        _make_parents(destination, record.path)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        return record.model_copy(update={"rejected": f"cannot be written on the host: {exc}"})
    handle = archive.extractfile(member)
    with os.fdopen(fd, "wb") as out:
        _copy(handle, out, member.size)
    return record.model_copy(update={"host_path": target})


def _make_parents(destination: Path, rel: str) -> None:
    """Create intermediate folders one by one, refusing any that is not a real folder we
    made (a file and a folder of the same name, or anything link-like)."""
    current = destination
    for part in PurePosixPath(rel).parts[:-1]:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            raise OSError(f"{current.name} is not a folder")
        current.mkdir(mode=0o700, exist_ok=True)


def _copy(handle: BinaryIO | None, out: BinaryIO, size: int) -> None:
    if handle is None:
        return
    remaining = size
    while remaining > 0:
        block = handle.read(min(remaining, 1 << 20))
        if not block:
            break
        out.write(block)
        remaining -= len(block)
