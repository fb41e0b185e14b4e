"""Short previews of the input files for prompts: the first lines of text files (a CSV's
header and a few rows tell the model more than any description), sizes only otherwise."""

from __future__ import annotations

from dataclasses import dataclass

from selfcorrect_action.markdown import defang_fences
from selfcorrect_action.sandbox.models import InputFile

PREVIEW_LINES = 8
PREVIEW_LINE_CHARS = 200


@dataclass(frozen=True)
class InputPreview:
    name: str
    size: int
    preview: str


def previews(inputs: list[InputFile]) -> list[InputPreview]:
    return [InputPreview(item.path, len(item.data), _preview(item.data)) for item in inputs]


def _preview(data: bytes) -> str:
    head = data[:16384]
    if b"\x00" in head:
        return "(binary file)"
    text = head.decode("utf-8", errors="replace")
    lines = text.splitlines()[:PREVIEW_LINES]
    cut = [line if len(line) <= PREVIEW_LINE_CHARS else line[:PREVIEW_LINE_CHARS] + "…"
           for line in lines]
    more = "\n…" if len(text.splitlines()) > PREVIEW_LINES or len(data) > len(head) else ""
    return defang_fences("\n".join(cut)) + more
