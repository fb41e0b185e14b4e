"""Builders for real artifact files: images drawn with Pillow, hostile files crafted byte by
byte, and ArtifactSpec/ArtifactRecord pairs pointing at them."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from selfcorrect_action.contract import ArtifactSpec
from selfcorrect_action.sandbox.models import ArtifactRecord

REAL_ARTIFACTS = Path(__file__).parents[2] / "fixtures" / "artifacts"


def record_for(path: Path, name: str | None = None) -> ArtifactRecord:
    return ArtifactRecord(path=name or path.name, size=path.stat().st_size, host_path=path)


def spec(path: str, kind: str = "any", **options: Any) -> ArtifactSpec:
    return ArtifactSpec.model_validate({"path": path, "kind": kind, **options})


def draw_chart(size: tuple[int, int] = (400, 300), mode: str = "RGB") -> Image.Image:
    """Axes, a polyline and a label on white: what a simple chart looks like."""
    background = (255, 255, 255, 0) if mode == "RGBA" else "white"
    image = Image.new(mode, size, background)
    draw = ImageDraw.Draw(image)
    width, height = size
    draw.line([(40, 10), (40, height - 30), (width - 10, height - 30)], fill="black", width=2)
    points = [(40 + i * (width - 60) // 9, 40 + (i * 37) % (height - 90)) for i in range(10)]
    draw.line(points, fill=(31, 119, 180, 255) if mode == "RGBA" else (31, 119, 180), width=3)
    draw.text((width // 2 - 30, 0), "Monthly sales", fill="black")
    return image


def png_chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def png_declaring(width: int, height: int, *, idat: bytes | None = None) -> bytes:
    """A PNG whose header declares width x height, followed by a small compressed stream:
    a few hundred bytes that would decode into width*height*3 bytes."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    stream = idat if idat is not None else zlib.compress(b"\x00" * 1_000_000, 9)
    return (
        b"\x89PNG\r\n\x1a\n"
        + png_chunk(b"IHDR", ihdr)
        + png_chunk(b"IDAT", stream)
        + png_chunk(b"IEND", b"")
    )


def jpeg_declaring(tmp_path: Path, width: int, height: int) -> bytes:
    """A real small JPEG whose SOF0 frame header is patched to declare width x height."""
    source = tmp_path / "small.jpg"
    Image.new("RGB", (16, 16), "red").save(source, "JPEG")
    data = bytearray(source.read_bytes())
    sof = data.index(b"\xff\xc0")
    struct.pack_into(">HH", data, sof + 5, height, width)
    return bytes(data)


@pytest.fixture
def write(tmp_path: Path):
    """write(name, bytes_or_text) -> Path in tmp_path."""

    def _write(name: str, content: bytes | str) -> Path:
        path = tmp_path / name
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_bytes(content)
        return path

    return _write
