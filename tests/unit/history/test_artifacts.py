"""What a run keeps of its attempts' files for the viewer: real images and tables on disk,
sniffed by their bytes, capped per file and per run (the newest attempts first), never read
through a link, and a decompression bomb refused from its header."""

from __future__ import annotations

import io
import os
import struct
import zlib
from pathlib import Path

import pytest
from PIL import Image

from selfcorrect_action.history import artifacts
from selfcorrect_action.history.artifacts import KeptArtifact, keep_artifacts, kind_of
from selfcorrect_action.loop.state import Attempt, Strategy
from selfcorrect_action.sandbox.models import ArtifactRecord, ExecutionResult
from tests.unit.report.runs import ENV_SECRET, base_state


def _png(width: int = 40, height: int = 30, colour: str = "red") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(out, format="PNG")
    return out.getvalue()


def _bomb_header(width: int, height: int) -> bytes:
    """A PNG that claims width x height pixels in a few dozen bytes (no pixel data)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IEND", b"")


def _state(tmp_path: Path, files: dict[int, dict[str, bytes]]):
    attempts = []
    for index, named in files.items():
        folder = tmp_path / f"attempt-{index}" / "run"
        records = []
        for name, data in named.items():
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            records.append(ArtifactRecord(path=name, size=len(data), host_path=path))
        attempts.append(Attempt(index=index, strategy=Strategy.PATCH, tier="cheap", model="m",
                                code="", code_sha="", execution=ExecutionResult(
                                    exit_code=0, artifacts=records)))
    return base_state().model_copy(update={"attempts": attempts})


def test_images_and_tables_are_kept_per_attempt_and_other_files_are_not(tmp_path: Path) -> None:
    png = _png()
    state = _state(tmp_path, {
        1: {"chart.png": png, "notes.txt": b"hello", "data.json": b'{"a": 1}'},
        2: {"plots/chart.svg": b'<svg xmlns="http://www.w3.org/2000/svg"></svg>',
            "table.csv": f"name,key\nx,{ENV_SECRET}\n".encode(), ".hidden.png": png,
            "fake.png": b"Traceback (most recent call last):\n"},
    })
    kept = keep_artifacts(state, secrets=[ENV_SECRET])
    assert [(k.attempt, k.path, k.kind) for k in kept] == [
        (1, "chart.png", "png"), (2, "plots/chart.svg", "svg"), (2, "table.csv", "csv")]
    assert kept[0].data == png and kept[0].note == ""
    table = kept[2].data.decode()
    assert ENV_SECRET not in table and "[REDACTED:secret]" in table  # a table is text: redacted


def test_a_file_too_large_is_listed_with_why(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(artifacts, "MAX_IMAGE_BYTES", 1024)
    state = _state(tmp_path, {1: {"big.png": _png(400, 400, "blue") + b"\0" * 4096}})
    (item,) = keep_artifacts(state, secrets=[])
    assert item.data == b"" and item.note.startswith("not kept: larger than")


def test_the_run_budget_goes_to_the_newest_attempts(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    png = _png()
    monkeypatch.setattr(artifacts, "MAX_RUN_BYTES", len(png) * 2)
    state = _state(tmp_path, {n: {"chart.png": png} for n in (1, 2, 3)})
    kept = keep_artifacts(state, secrets=[])
    assert [(k.attempt, bool(k.data)) for k in kept] == [(1, False), (2, True), (3, True)]
    assert "spent on later attempts" in kept[0].note


def test_a_table_keeps_only_its_head(tmp_path: Path) -> None:
    rows = b"a,b\n" + b"1,2\n" * 100_000
    (item,) = keep_artifacts(_state(tmp_path, {1: {"t.csv": rows}}), secrets=[])
    assert item.size == len(rows) and len(item.data) <= artifacts.CSV_HEAD_BYTES


def test_a_decompression_bomb_is_refused_from_its_header(tmp_path: Path) -> None:
    state = _state(tmp_path, {1: {"huge.png": _bomb_header(8_000, 8_000),
                                  "bigger.png": _bomb_header(100_000, 100_000)}})
    kept = {k.path: k for k in keep_artifacts(state, secrets=[])}
    assert kept["huge.png"].data == b"" and "8000x8000 pixels" in kept["huge.png"].note
    assert kept["bigger.png"].data == b"" and "more pixels than" in kept["bigger.png"].note


def test_links_and_devices_are_never_read(tmp_path: Path) -> None:
    secret = tmp_path / "outside.csv"
    secret.write_text("user,password\nme,hunter2\n")
    folder = tmp_path / "attempt-1" / "run"
    folder.mkdir(parents=True)
    os.symlink(secret, folder / "link.csv")
    os.mkfifo(folder / "pipe.csv")
    records = [ArtifactRecord(path=name, size=1, host_path=folder / name)
               for name in ("link.csv", "pipe.csv", "gone.png")]
    state = base_state().model_copy(update={"attempts": [Attempt(
        index=1, strategy=Strategy.INITIAL, tier="cheap", model="m", code="", code_sha="",
        execution=ExecutionResult(exit_code=0, artifacts=records))]})
    kept = keep_artifacts(state, secrets=[])
    assert all(b"hunter2" not in item.data for item in kept)
    assert [k.path for k in kept if k.data] == []


def test_what_is_shown_is_decided_by_the_bytes() -> None:
    assert kind_of(_png()) == "png"
    assert kind_of(b"RIFF\0\0\0\0WEBPVP8 ") == "webp"
    assert kind_of(b"RIFF\0\0\0\0WAVEfmt ") is None
    assert kind_of(b"<!doctype html><script>") is None
    assert kind_of(b"a,b\n1,2\n") == "csv"
    assert KeptArtifact(1, "x", "svg", 1).is_image and not KeptArtifact(1, "x", "csv", 1).is_image
