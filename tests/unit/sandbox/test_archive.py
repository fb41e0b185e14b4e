"""The host side of artifact transfer, fed hand-made hostile tar streams."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from selfcorrect_action.sandbox.archive import extract_artifacts, safe_member_name
from selfcorrect_action.sandbox.models import OutputCaps


def _tar(*members: tuple[tarfile.TarInfo, bytes | None]) -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for info, data in members:
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    buffer.seek(0)
    return buffer


def _file(name: str, data: bytes = b"data") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info, None


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("chart.png", "chart.png"),
        ("./out/a.csv", "out/a.csv"),
        ("../escape", None),
        ("a/../../escape", None),
        ("/etc/passwd", None),
        ("a\\..\\b", None),
        ("nul\x00byte", None),
        ("", None),
        (".", None),
    ],
)
def test_member_names(name: str, expected: str | None) -> None:
    assert safe_member_name(name) == expected


def test_regular_files_are_copied(tmp_path: Path) -> None:
    records, note = extract_artifacts(
        _tar(_file("a.txt", b"hello"), _file("sub/b.txt", b"x")), tmp_path, OutputCaps()
    )
    assert note is None
    assert [(r.path, r.size, r.rejected) for r in records] == [
        ("a.txt", 5, None), ("sub/b.txt", 1, None)
    ]
    assert (tmp_path / "a.txt").read_bytes() == b"hello"
    assert (tmp_path / "sub" / "b.txt").read_bytes() == b"x"


def test_escapes_and_links_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    dest = tmp_path / "dest"
    dest.mkdir()
    stream = _tar(
        _file("../outside", b"pwned"),
        _file("/tmp/abs", b"pwned"),
        _link("evil", "/etc/passwd"),
        _link("hard", "/etc/passwd", tarfile.LNKTYPE),
        _link("dirlink", str(tmp_path)),
        _file("dirlink/outside", b"pwned"),
    )
    records, _ = extract_artifacts(stream, dest, OutputCaps())
    assert all(r.host_path is None for r in records if r.path != "dirlink/outside")
    assert not outside.exists()
    assert not any(p.is_symlink() for p in dest.rglob("*"))
    reasons = {r.path: r.rejected for r in records}
    assert reasons["evil"] == reasons["hard"] == "link (not followed)"
    # the file "through" the refused link lands in a real folder inside dest, if anywhere
    assert not (tmp_path / "outside").exists()


def test_devices_and_fifos_are_refused(tmp_path: Path) -> None:
    fifo = tarfile.TarInfo("pipe")
    fifo.type = tarfile.FIFOTYPE
    dev = tarfile.TarInfo("null")
    dev.type, dev.devmajor, dev.devminor = tarfile.CHRTYPE, 1, 3
    records, _ = extract_artifacts(_tar((fifo, None), (dev, None)), tmp_path, OutputCaps())
    assert [r.rejected for r in records] == ["not a regular file"] * 2
    assert list(tmp_path.iterdir()) == []


def test_caps_on_size_count_and_total(tmp_path: Path) -> None:
    caps = OutputCaps(artifact_max_files=2, artifact_max_file_bytes=10, artifact_max_total_bytes=15)
    stream = _tar(
        _file("big", b"x" * 11), _file("a", b"x" * 8), _file("b", b"x" * 8), _file("c", b"x")
    )
    records, _ = extract_artifacts(stream, tmp_path, caps)
    reasons = {r.path: r.rejected for r in records}
    assert reasons == {"big": "file too large", "a": None, "b": "total size cap", "c": None}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "c"]


def test_duplicate_names_keep_the_first(tmp_path: Path) -> None:
    records, _ = extract_artifacts(
        _tar(_file("a", b"first"), _file("a", b"second")), tmp_path, OutputCaps()
    )
    assert [r.rejected for r in records] == [None, "duplicate entry"]
    assert (tmp_path / "a").read_bytes() == b"first"


def test_an_endless_stream_is_cut_at_the_budget(tmp_path: Path) -> None:
    class Endless:
        """An archive of ever more 512-byte files, produced on demand, never ending."""

        def __init__(self) -> None:
            self.buffer, self.index, self.served = b"", 0, 0

        def read(self, size: int = -1) -> bytes:
            size = 65536 if size < 0 else size
            while len(self.buffer) < size:
                info = tarfile.TarInfo(f"f{self.index}")
                info.size = 512
                self.buffer += info.tobuf() + b"x" * 512
                self.index += 1
            data, self.buffer = self.buffer[:size], self.buffer[size:]
            self.served += len(data)
            return data

    source = Endless()
    caps = OutputCaps(artifact_max_files=1, artifact_max_total_bytes=4096)
    _, note = extract_artifacts(source, tmp_path, caps)
    assert note is not None and "exceeded" in note
    assert source.served < 4096 + 64 * 1024 + 3 * 512 + (1 << 20)
    assert [p.name for p in tmp_path.iterdir()] == ["f0"]


def test_a_lying_header_cannot_grow_beyond_the_budget(tmp_path: Path) -> None:
    info = tarfile.TarInfo("huge")
    info.size = 10
    raw = _tar((info, b"0123456789")).getvalue()
    # Claim 1 GiB in the header's size field (octal), keep the checksum honest.
    header = bytearray(raw[:512])
    header[124:136] = b"%011o\0" % (1 << 30)
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\0 " % sum(header)
    stream = io.BytesIO(bytes(header) + raw[512:])
    records, _ = extract_artifacts(stream, tmp_path, OutputCaps())
    assert records[0].rejected == "file too large"
    assert not (tmp_path / "huge").exists()


def test_garbage_is_reported_not_raised(tmp_path: Path) -> None:
    records, note = extract_artifacts(io.BytesIO(b"not a tar" * 100), tmp_path, OutputCaps())
    assert records == []
    assert note is not None and "malformed" in note


def _pax(*members: tuple[tarfile.TarInfo, bytes | None], pax_headers=None) -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT,
                      pax_headers=pax_headers or {}) as archive:
        for info, data in members:
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    buffer.seek(0)
    return buffer


def test_extension_headers_are_refused_not_followed(tmp_path: Path) -> None:
    """pax/GNU headers are how tarfile can be made to recurse or hoard memory: the runner
    never writes them, so the first one ends the stream."""
    records, note = extract_artifacts(_pax(_file("ünïcode.txt", b"x")), tmp_path, OutputCaps())
    assert records == [] and note is not None and "unsupported header" in note
    _, note = extract_artifacts(_pax(_file("a", b"x"), pax_headers={"k" * 50: "v"}),
                                tmp_path / "g", OutputCaps())
    assert note is not None and "unsupported header" in note


def test_a_chain_of_extension_headers_cannot_recurse(tmp_path: Path) -> None:
    header = tarfile.TarInfo("././@PaxHeader")
    header.type = tarfile.XHDTYPE
    body = b"16 path=abcdefg\n"
    header.size = len(body)
    block = header.tobuf(format=tarfile.USTAR_FORMAT) + body + b"\0" * (512 - len(body))
    records, note = extract_artifacts(io.BytesIO(block * 5000), tmp_path, OutputCaps())
    assert records == [] and note is not None


def test_a_corrupted_checksum_is_malformed(tmp_path: Path) -> None:
    raw = bytearray(_tar(_file("a", b"data")).getvalue())
    raw[0:1] = b"b"  # name changed, checksum not
    _, note = extract_artifacts(io.BytesIO(bytes(raw)), tmp_path, OutputCaps())
    assert note is not None and "checksum" in note


def test_case_only_twins_keep_the_first(tmp_path: Path) -> None:
    records, _ = extract_artifacts(_tar(_file("Chart.png", b"1"), _file("chart.png", b"2")),
                                   tmp_path, OutputCaps())
    assert [r.rejected for r in records] == [None, "duplicate entry"]
