"""A strict reader for the plain ustar stream the runner writes, fed by hostile bytes.

The standard library's tarfile follows pax and GNU extension headers recursively and keeps
every member (with the global pax dictionary copied into each) in memory: a crafted stream
of a megabyte can recurse past Python's limit or grow to gigabytes. The runner writes plain
ustar only, so this reader accepts exactly that: one 512-byte header per member, checksum
verified, octal size, name from prefix + name, and refuses every extension header outright.
Memory stays at one block plus the caller's copy buffer.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

BLOCK = 512
# typeflag -> kind; anything else (x, g, L, K, S, ...) ends the stream as malformed.
KINDS = {b"0": "file", b"\0": "file", b"7": "file", b"1": "hardlink", b"2": "symlink",
         b"3": "device", b"4": "device", b"5": "folder", b"6": "fifo"}


class Readable(Protocol):
    def read(self, size: int = -1) -> bytes: ...


class UstarError(Exception):
    """The stream is not the plain ustar the runner writes."""


@dataclass(frozen=True)
class Member:
    name: str
    kind: str
    size: int


class UstarReader:
    def __init__(self, source: Readable) -> None:
        self._source = source
        self._data_left = 0
        self._pad_left = 0

    def members(self) -> Iterator[Member]:
        while True:
            self.skip_rest()
            header = self._read_exact(BLOCK, eof_ok=True)
            if not header or header == b"\0" * BLOCK:
                return
            member = parse_header(header)
            if member.kind == "file":
                self._data_left = member.size
                self._pad_left = _padded(member.size) - member.size
            yield member

    def read_member(self, size: int) -> bytes:
        """Up to `size` bytes of the current member's data (b'' at its end)."""
        if self._data_left <= 0:
            return b""
        chunk = self._read_exact(min(size, self._data_left))
        self._data_left -= len(chunk)
        return chunk

    def skip_rest(self) -> None:
        while self._data_left > 0:
            self.read_member(1 << 16)
        if self._pad_left:
            self._read_exact(self._pad_left)
            self._pad_left = 0

    def _read_exact(self, size: int, *, eof_ok: bool = False) -> bytes:
        parts, left = [], size
        while left:
            chunk = self._source.read(left)
            if not chunk:
                if eof_ok and left == size:
                    return b""
                raise UstarError("the stream ended inside a member")
            parts.append(chunk)
            left -= len(chunk)
        return b"".join(parts)


def parse_header(header: bytes) -> Member:
    if header[257:262] != b"ustar":
        raise UstarError("not a ustar header")
    if _checksum(header) != _octal(header[148:156]):
        raise UstarError("header checksum mismatch")
    kind = KINDS.get(header[156:157])
    if kind is None:
        raise UstarError(f"unsupported header type {header[156:157]!r}")
    name = _field(header[0:100])
    prefix = _field(header[345:500])
    return Member(name=f"{prefix}/{name}" if prefix else name, kind=kind,
                  size=_octal(header[124:136]))


def _field(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


def _octal(raw: bytes) -> int:
    text = raw.split(b"\0", 1)[0].strip()
    if not text or not all(48 <= c <= 55 for c in text):
        raise UstarError(f"bad octal field {raw!r}")
    return int(text, 8)


def _checksum(header: bytes) -> int:
    return sum(header[:148]) + 8 * 32 + sum(header[156:])


def _padded(size: int) -> int:
    return -(-size // BLOCK) * BLOCK
