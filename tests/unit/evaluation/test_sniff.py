from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from selfcorrect_action.evaluation.sniff import describe, detect_kind

from .conftest import REAL_ARTIFACTS


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("matplotlib_line_chart.png", "png"),
        ("matplotlib_line_chart.jpg", "jpeg"),
        ("matplotlib_line_chart.svg", "svg"),
    ],
)
def test_real_files(name: str, kind: str) -> None:
    assert detect_kind(REAL_ARTIFACTS / name) == kind


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        (b"", "empty"),
        (b"GIF89a....", "gif"),
        (b"%PDF-1.7\n", "pdf"),
        (b"PK\x03\x04rest", "zip"),
        (b"\x1f\x8b\x08\x00", "gzip"),
        (b"\x93NUMPY\x01\x00", "npy"),
        (b"  <!DOCTYPE html>\n<html>", "html"),
        (b'{"a": 1}', "json"),
        (b"[1, 2]", "json"),
        (b"date,total\n2024,3\n", "csv"),
        (b"date\ttotal\n2024\t3\n", "csv"),
        (b"Total: 41\n", "txt"),
        (b"\xef\xbb\xbfhello", "txt"),
        ("caf\u00e9 au lait".encode("latin-1"), "non_utf8_text"),
        (b"\x00\x01\x02\x03", "binary"),
        ("\u20ac".encode()[:2], "txt"),  # a multi-byte character cut by the head limit
    ],
)
def test_detect_kind_by_content(tmp_path: Path, content: bytes, kind: str) -> None:
    file = tmp_path / "x.png"  # the extension plays no part
    file.write_bytes(content)
    assert detect_kind(file) == kind


def test_describe_phrases() -> None:
    assert describe(b"") == "an empty file"
    assert describe(b"\x89PNG\r\n\x1a\nxxxx") == "a PNG image"
    assert describe(b"Error: no data\n  at line 3\n") == "text starting 'Error: no data at line 3'"
    assert describe(b"\x00\x01\x02\xff") == "binary data starting 00 01 02 ff"
    assert describe(b"it's") == "text starting 'it\\'s'"


def test_describe_is_short_for_long_text() -> None:
    assert len(describe(b"x" * 10_000)) < 100


def test_detect_kind_reads_only_the_head(tmp_path: Path) -> None:
    file = tmp_path / "x.csv"
    file.write_bytes(b"a,b\n" + b"1,2\n" * 200 + b"\xff" * 10_000)  # invalid UTF-8 after the head
    assert detect_kind(file) == "csv"
    image = tmp_path / "y"
    Image.new("RGB", (4, 4)).save(image, "GIF")
    assert detect_kind(image) == "gif"
