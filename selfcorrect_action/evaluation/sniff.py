"""What a file really is, from its first bytes, and how to say so in a failing check's detail.

The extension means nothing: a script that crashed halfway may leave `chart.png` holding its
error message, an HTML error page saved as `data.csv`, or an empty file.
"""

from __future__ import annotations

import codecs
from pathlib import Path

SNIFF_BYTES = 512
SNIPPET_CHARS = 60

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
JPEG_MAGIC = b"\xff\xd8\xff"

_BINARY_MAGIC: tuple[tuple[bytes, str], ...] = (
    (PNG_MAGIC, "png"),
    (JPEG_MAGIC, "jpeg"),
    (b"GIF87a", "gif"),
    (b"GIF89a", "gif"),
    (b"%PDF-", "pdf"),
    (b"PK\x03\x04", "zip"),
    (b"\x1f\x8b", "gzip"),
    (b"RIFF", "riff"),
    (b"\x93NUMPY", "npy"),
)

_DESCRIPTIONS = {
    "empty": "an empty file",
    "png": "a PNG image",
    "jpeg": "a JPEG image",
    "gif": "a GIF image",
    "pdf": "a PDF document",
    "zip": "a ZIP archive",
    "gzip": "gzip-compressed data",
    "riff": "a RIFF file (WebP/WAV/AVI)",
    "npy": "a NumPy .npy array",
    "svg": "an SVG document",
    "html": "an HTML page",
    "json": "JSON text",
    "csv": "CSV text",
    "txt": "text",
    "binary": "binary data",
    "non_utf8_text": "text that is not UTF-8",
}

TEXT_KINDS = frozenset({"svg", "html", "json", "csv", "txt"})


def read_head(path: Path, size: int = SNIFF_BYTES) -> bytes:
    with path.open("rb") as handle:
        return handle.read(size)


def detect_kind(path: Path) -> str:
    """One of: empty, png, jpeg, gif, pdf, zip, gzip, riff, npy, svg, html, json, csv, txt,
    non_utf8_text, binary. For reports only; the kind checks look at the bytes themselves."""
    return sniff(read_head(path))


def sniff(head: bytes) -> str:
    if not head:
        return "empty"
    for magic, kind in _BINARY_MAGIC:
        if head.startswith(magic):
            return kind
    text = _as_text(head)
    if text is not None:
        return _text_kind(text)
    return "non_utf8_text" if _looks_like_8bit_text(head) else "binary"


def describe(head: bytes) -> str:
    """A phrase for "found ...": "a PNG image", "text starting 'Error: no data'"."""
    kind = sniff(head)
    if kind in TEXT_KINDS:
        return f"{_DESCRIPTIONS[kind]} starting {snippet(_as_text(head) or '')}"
    if kind == "binary":
        return f"binary data starting {head[:8].hex(' ')}"
    if kind == "non_utf8_text":
        return f"{_DESCRIPTIONS[kind]}, starting {snippet(head.decode('latin-1'))}"
    return _DESCRIPTIONS[kind]


def snippet(text: str) -> str:
    """A short, single-line, quoted excerpt that is safe to put in a report."""
    flat = " ".join(text.split())
    if len(flat) > SNIPPET_CHARS:
        flat = flat[: SNIPPET_CHARS - 1] + "…"
    return "'" + flat.replace("'", "\\'") + "'"


def _as_text(head: bytes) -> str | None:
    # Incremental decode: the head may end in the middle of a multi-byte character.
    try:
        text = codecs.getincrementaldecoder("utf-8-sig")().decode(head, final=False)
    except UnicodeDecodeError:
        return None
    if "\x00" in text:
        return None
    return text


def _looks_like_8bit_text(head: bytes) -> bool:
    """Latin-1 or cp1252 text (Excel's CSV export): no control bytes but tab and line ends."""
    return not any(byte < 0x20 and byte not in b"\t\r\n" for byte in head)


def _text_kind(text: str) -> str:
    start = text.lstrip().lower()
    if start.startswith(("<!doctype html", "<html")):
        return "html"
    if start.startswith("<") and "<svg" in start:
        return "svg"
    if start.startswith(("{", "[")):
        return "json"
    first_line, newline, _ = text.partition("\n")
    if newline and ("," in first_line or "\t" in first_line):
        return "csv"
    return "txt"
