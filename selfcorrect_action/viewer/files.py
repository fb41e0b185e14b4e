"""The files an attempt wrote, as the page shows them: each image inlined as a data: URI (the
page fetches nothing), each table's first rows. From the kept artifacts (history/artifacts.py)."""

from __future__ import annotations

import base64
import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field

from selfcorrect_action.history.artifacts import MIME, KeptArtifact
from selfcorrect_action.redact import redact
from selfcorrect_action.report import text

TABLE_ROWS = 20
TABLE_COLUMNS = 12
CELL_CHARS = 120
# The strip at the top repeats pictures the attempts' sections show: bounded on its own.
STRIP_ITEMS = 12
STRIP_IMAGE_BYTES = 512 * 1024
STRIP_BYTES = 3 * 1024 * 1024


@dataclass(frozen=True)
class ImageView:
    path: str
    data_uri: str  # data:image/...;base64,... (MIME from the bytes, never the file name)
    size: str
    bytes: int


@dataclass(frozen=True)
class TableView:
    path: str
    header: list[str]
    rows: list[list[str]]
    about: str  # "the first 20 rows of 1,234 bytes"


@dataclass(frozen=True)
class NotShown:
    path: str
    why: str


@dataclass(frozen=True)
class AttemptFiles:
    images: list[ImageView] = field(default_factory=list)
    tables: list[TableView] = field(default_factory=list)
    not_shown: list[NotShown] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.images or self.tables or self.not_shown)


@dataclass(frozen=True)
class StripItem:
    attempt: int
    result: str  # "passed", the failure category...
    result_class: str
    shown_in_full: bool  # its section is on the page, to link to
    image: ImageView


def picture_strip(files: dict[int, AttemptFiles], in_full: set[int],
                  results: dict[int, tuple[str, str]]) -> list[StripItem]:
    """The first picture of each attempt that drew one, side by side: what changed from
    attempt to attempt, at a glance. The last STRIP_ITEMS attempts, within STRIP_BYTES."""
    items: list[StripItem] = []
    spent = 0
    for attempt in sorted(files, reverse=True):
        image = next((i for i in files[attempt].images if i.bytes <= STRIP_IMAGE_BYTES), None)
        if image is None or spent + image.bytes > STRIP_BYTES or len(items) >= STRIP_ITEMS:
            continue
        spent += image.bytes
        result, css = results.get(attempt, ("", "pending"))
        items.append(StripItem(attempt, result, css, attempt in in_full, image))
    return items[::-1]


def attempt_files(kept: Sequence[KeptArtifact], *, secrets: Sequence[str]) -> AttemptFiles:
    files = AttemptFiles()
    for item in kept:
        if item.note or not item.data:
            files.not_shown.append(NotShown(item.path, item.note or "not kept"))
        elif item.is_image:
            files.images.append(image_view(item))
        else:
            files.tables.append(table_view(item, secrets=secrets))
    return files


def image_view(item: KeptArtifact) -> ImageView:
    encoded = base64.b64encode(item.data).decode("ascii")
    return ImageView(item.path, f"data:{MIME[item.kind]};base64,{encoded}",
                     f"{text.number(item.size)} bytes", len(item.data))


def table_view(item: KeptArtifact, *, secrets: Sequence[str]) -> TableView:
    """The head of a CSV file; the last line is dropped when the head cut it in two."""
    body = redact(item.data.decode("utf-8", errors="replace"), secrets=secrets)
    lines = body.splitlines()
    if item.size > len(item.data) and lines:
        lines = lines[:-1]
    try:
        rows = list(csv.reader(io.StringIO("\n".join(lines[:TABLE_ROWS + 1]))))
    except csv.Error:  # a NUL byte, an unterminated quote: shown as lines instead
        rows = [[line] for line in lines[:TABLE_ROWS + 1]]
    cells = [[_cell(value) for value in row[:TABLE_COLUMNS]] for row in rows if row]
    header, data = (cells[0], cells[1:]) if cells else ([], [])
    whole = item.size <= len(item.data) and len(lines) <= TABLE_ROWS + 1
    shown = f"{'all' if whole else 'the first'} {text.plural(len(data), 'row')}"
    more = f" ({TABLE_COLUMNS} columns shown)" if any(len(r) > TABLE_COLUMNS for r in rows) else ""
    return TableView(item.path, header, data, f"{shown} of {text.number(item.size)} bytes{more}")


def _cell(value: str) -> str:
    flat = " ".join(text.clean(value).split())
    return flat if len(flat) <= CELL_CHARS else flat[: CELL_CHARS - 1] + "…"
