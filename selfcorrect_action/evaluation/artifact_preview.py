"""What the judge is shown of each artifact: kind, size and a bounded look inside (a CSV's
first rows, the start of a JSON or text file, an image's dimensions). Host copies are
hostile files: every read is capped and images are never decoded, only their headers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from selfcorrect_action.evaluation.sniff import detect_kind
from selfcorrect_action.markdown import defang_fences
from selfcorrect_action.sandbox.models import ArtifactRecord

TEXT_PREVIEW_BYTES = 1500
TEXT_PREVIEW_LINES = 12
MAX_ARTIFACTS = 12
TEXT_KINDS = {"csv", "json", "txt", "svg", "html"}


@dataclass(frozen=True)
class ArtifactPreview:
    path: str
    kind: str
    size: int
    preview: str


def describe_artifacts(records: list[ArtifactRecord]) -> list[ArtifactPreview]:
    shown = [r for r in records if r.host_path is not None and not r.path.startswith(".")]
    return [_describe(r) for r in shown[:MAX_ARTIFACTS]]


def _describe(record: ArtifactRecord) -> ArtifactPreview:
    path = Path(str(record.host_path))
    kind = detect_kind(path)
    if kind in ("png", "jpeg", "gif"):
        preview = _image_header(path)
    elif kind in TEXT_KINDS:
        preview = _text_head(path)
    else:
        preview = ""
    return ArtifactPreview(record.path, kind, record.size, preview)


def _image_header(path: Path) -> str:
    try:
        with Image.open(path) as image:  # reads the header only; no pixels are decoded
            return f"image {image.width}x{image.height}, mode {image.mode}"
    except Exception as exc:  # any decoder complaint is a fact about the file, not our bug
        return f"unreadable image header: {type(exc).__name__}"


def _text_head(path: Path) -> str:
    with path.open("rb") as handle:
        data = handle.read(TEXT_PREVIEW_BYTES)
    lines = data.decode("utf-8", errors="replace").splitlines()[:TEXT_PREVIEW_LINES]
    return defang_fences("\n".join(line[:200] for line in lines))
