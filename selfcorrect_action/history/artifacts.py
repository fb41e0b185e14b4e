"""What a run keeps of the files its attempts wrote: the pictures they drew and the head of
each table, for the viewer to show beside each attempt. The rest of a run's files go when its
scratch folder does (run.json lists every file with its size).

The files are the candidate's: hostile. Each is read once, capped, never through a link, and
images are never decoded here (only their header is read, to refuse a decompression bomb
before a browser has to draw it). What is kept is bounded per file and per run, spent on the
newest attempts first: the one that passed matters more than the first try.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

from PIL import Image

from selfcorrect_action.evaluation.sniff import sniff
from selfcorrect_action.fileio import NotRegularFile, read_capped
from selfcorrect_action.loop.state import Attempt, RunState
from selfcorrect_action.redact import redact

MAX_IMAGE_BYTES = 4 * 1024 * 1024
MAX_SVG_BYTES = 1024 * 1024
MAX_IMAGE_PIXELS = 40_000_000
CSV_HEAD_BYTES = 16 * 1024
MAX_RUN_BYTES = 16 * 1024 * 1024
MAX_FILES_PER_ATTEMPT = 20
MAX_RECORDS = 1_000
IMAGE_KINDS = ("png", "jpeg", "gif", "webp", "svg")
MIME = {"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
        "svg": "image/svg+xml"}


@dataclass(frozen=True)
class KeptArtifact:
    """One file an attempt wrote, as kept: `data` is the image or the table's first bytes,
    or empty with `note` saying why it was not kept."""

    attempt: int
    path: str
    kind: str  # one of IMAGE_KINDS, or "csv"
    size: int  # the whole file's size
    data: bytes = b""
    note: str = ""

    @property
    def is_image(self) -> bool:
        return self.kind in IMAGE_KINDS


def keep_artifacts(state: RunState, *, secrets: Sequence[str]) -> tuple[KeptArtifact, ...]:
    """The images and table heads of every attempt whose files are still on this host (the
    live state's host copies, while the run's session is open)."""
    kept: list[KeptArtifact] = []
    budget = MAX_RUN_BYTES
    for attempt in reversed(state.attempts):
        for path, host in _host_copies(attempt):
            if len(kept) >= MAX_RECORDS:
                break
            item = keep_file(attempt.index, path, host, budget, secrets)
            if item is not None:
                budget -= len(item.data)
                kept.append(item)
    return tuple(sorted(kept, key=lambda item: (item.attempt, item.path)))


def _host_copies(attempt: Attempt) -> Iterator[tuple[str, Path]]:
    records = attempt.execution.artifacts if attempt.execution else []
    copied = [r for r in records if r.host_path is not None and not r.path.startswith(".")]
    for record in copied[:MAX_FILES_PER_ATTEMPT]:
        yield record.path, Path(str(record.host_path))


def keep_file(attempt: int, path: str, host: Path, budget: int, secrets: Sequence[str]
              ) -> KeptArtifact | None:
    """What is kept of the file at `host` (`path` in the attempt's work dir), within
    `budget` bytes; None for a file the viewer does not show (neither image nor table)."""
    if host.is_symlink():  # the sandbox copies out no links; a file named here is not one
        return None
    try:
        head = read_capped(host, 512)
        kind = kind_of(head)
        if kind is None:
            return None
        size = host.stat().st_size
        cap = CSV_HEAD_BYTES if kind == "csv" else (
            MAX_SVG_BYTES if kind == "svg" else MAX_IMAGE_BYTES)
        data = read_capped(host, cap)
    except (OSError, NotRegularFile):
        return None  # gone, or not a regular file: run.json still lists it
    if kind == "csv":
        text = redact(data[:CSV_HEAD_BYTES].decode("utf-8", errors="replace"), secrets=secrets)
        data = text.encode()
    elif len(data) > cap:
        return KeptArtifact(attempt, path, kind, size, note=f"not kept: larger than "
                            f"{cap // (1024 * 1024)} MiB")
    problem = _image_problem(data) if kind in ("png", "jpeg", "gif", "webp") else None
    if problem:
        return KeptArtifact(attempt, path, kind, size, note=f"not kept: {problem}")
    if len(data) > budget:
        return KeptArtifact(attempt, path, kind, size, note="not kept: the run's "
                            f"{MAX_RUN_BYTES // (1024 * 1024)} MiB for pictures was spent "
                            "on later attempts")
    return KeptArtifact(attempt, path, kind, size, data)


def kind_of(head: bytes) -> str | None:
    """What the viewer can show of a file, from its first bytes (never its name)."""
    kind = sniff(head)
    if kind == "riff":
        return "webp" if head[8:12] == b"WEBP" else None
    return kind if kind in (*IMAGE_KINDS, "csv") else None


def _image_problem(data: bytes) -> str | None:
    """Why a browser should not be asked to draw it: an unreadable header, or more pixels
    than MAX_IMAGE_PIXELS (a small file can decode to gigabytes)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(BytesIO(data)) as image:  # the header only; nothing is decoded
                width, height = image.size
    except Image.DecompressionBombError:
        return "more pixels than a page should draw"
    except Exception as exc:  # any decoder complaint is a fact about the file, not our bug
        return f"its image header does not read ({type(exc).__name__})"
    if width * height > MAX_IMAGE_PIXELS:
        return f"{width}x{height} pixels, more than a page should draw"
    return None
