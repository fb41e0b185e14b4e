"""The runner's pure parts, on the host (sandbox/runner.py imports only built-in modules and
the C half of json, so it loads here too). Its behaviour inside a container is covered by the
security and integration suites."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import stat
import tarfile
from pathlib import Path
from types import ModuleType

import pytest

from selfcorrect_action.resources import sandbox_context
from selfcorrect_action.sandbox.models import ExecutionRequest, InputFile, StreamCapture
from selfcorrect_action.sandbox.ustar import UstarReader
from selfcorrect_action.sandbox.wire import encode_request


@pytest.fixture(scope="module")
def runner() -> ModuleType:
    path = sandbox_context() / "runner.py"
    spec = importlib.util.spec_from_file_location("selfcorrect_runner_under_test", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # main() runs only as __main__
    return module


REPORT = {
    "exit_code": 1,
    "signal": None,
    "inner_timeout": False,
    "oom_kills": 0,
    "duration_ms": 1234,
    "stdout": {"text": 'naïve "quoted" \\ back\tslash\n\x00\x1b[31m €', "total_bytes": 9,
               "truncated": True},
    "stderr": {"text": "", "total_bytes": 0, "truncated": False},
    "rejected": [{"path": "a/b.txt", "size": 10**12, "reason": "file too large"}],
    "unlisted": 0,
    "nested": [[], {}, [1, [2, [3]]], -7, 2.5],
}  # fmt: skip


def test_the_report_encoder_matches_the_json_package(runner: ModuleType) -> None:
    encoded = runner._to_json(REPORT)
    assert json.loads(encoded) == REPORT
    assert encoded == json.dumps(REPORT, ensure_ascii=False)


def test_the_report_encoder_keeps_unencodable_text_reportable(runner: ModuleType) -> None:
    # A file name with undecodable bytes arrives as lone surrogates: main() encodes the
    # report with errors="replace", which must still give JSON the client can read.
    body = runner._to_json({"path": "bad\udcffname"}).encode("utf-8", "replace")
    assert json.loads(body) == {"path": "bad?name"}


def test_the_report_encoder_refuses_what_json_cannot_carry(runner: ModuleType) -> None:
    assert runner._to_json({"x": float("nan"), "y": float("inf")}) == '{"x": null, "y": null}'
    with pytest.raises(TypeError, match="cannot report a bytes"):
        runner._to_json({"x": b"raw"})


def test_the_runner_reads_the_header_the_client_writes(runner: ModuleType) -> None:
    request = ExecutionRequest(
        argv=["python3", "ünï.py", "--flag=\"x\""], env={"LANG": "C.UTF-8", "K": "a\nb"},
        files=[InputFile(path="ünï.py", data=b"print(1)\n"), InputFile(path="d/x.csv", data=b"")],
    )
    wire = encode_request(request, deadline_s=12.5, nonce="n0nce")
    preamble, _, rest = wire.partition(b"\n")
    _, version, header_len, data_len = preamble.split()
    header = runner._from_json(rest[: int(header_len)].decode("utf-8"))
    assert version == b"2" and int(data_len) == len(b"print(1)\n")
    assert header["argv"] == request.argv and header["env"] == request.env
    assert header["deadline_s"] == 12.5 and header["nonce"] == "n0nce"
    assert [f["path"] for f in header["files"]] == ["ünï.py", "d/x.csv"]
    assert header["caps"] == request.caps.model_dump()


def test_the_header_reader_refuses_trailing_data(runner: ModuleType) -> None:
    with pytest.raises(ValueError, match="trailing data"):
        runner._from_json('{"a": 1} {"b": 2}')
    with pytest.raises(StopIteration):  # what the C scanner raises on a non-value
        runner._from_json("nonsense")


@pytest.fixture
def baked(tmp_path: Path) -> Path:
    folder = tmp_path / "baked"
    folder.mkdir()
    (folder / "fontlist-v330.json").write_text('{"_version": 330}')
    (folder / "unrelated.txt").write_text("")
    return folder


def test_the_font_cache_is_seeded_into_an_empty_dir(
    runner: ModuleType, baked: Path, tmp_path: Path
) -> None:
    target = tmp_path / "tmpfs" / "matplotlib"
    runner._seed_font_cache(str(target), str(baked))
    assert sorted(p.name for p in target.iterdir()) == ["fontlist-v330.json"]
    assert (target / "fontlist-v330.json").read_text() == '{"_version": 330}'
    assert stat.S_IMODE(target.stat().st_mode) == 0o700


def test_an_existing_font_cache_is_left_alone(
    runner: ModuleType, baked: Path, tmp_path: Path
) -> None:
    (tmp_path / "fontlist-v330.json").write_text("mine")
    runner._seed_font_cache(str(tmp_path), str(baked))
    assert (tmp_path / "fontlist-v330.json").read_text() == "mine"


def test_seeding_never_raises(runner: ModuleType, baked: Path, tmp_path: Path) -> None:
    runner._seed_font_cache(None, str(baked))
    runner._seed_font_cache(str(tmp_path / "c"), str(tmp_path / "missing"))
    blocker = tmp_path / "file"
    blocker.write_text("")
    runner._seed_font_cache(str(blocker / "sub"), str(baked))
    assert not (tmp_path / "c").exists()


def test_the_program_is_found_in_the_scripts_path_not_ours(
    runner: ModuleType, tmp_path: Path
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    (first / "tool").write_text("not executable")
    (second / "tool").write_text("#!/bin/sh\n")
    (second / "tool").chmod(0o755)
    (first / "dir-named-tool").mkdir()
    search = os.pathsep.join([str(first), str(second)])
    assert runner._find_program("tool", search) == str(second / "tool")
    assert runner._find_program("./local.py", search) == "./local.py"  # a path is taken as is
    with pytest.raises(FileNotFoundError):
        runner._find_program("dir-named-tool", search)
    with pytest.raises(FileNotFoundError):
        runner._find_program("python3", str(tmp_path / "empty"))


def test_the_artifact_stream_is_plain_ustar(runner: ModuleType, tmp_path: Path) -> None:
    short = tmp_path / "short.txt"
    short.write_bytes(b"x" * 513)
    deep = tmp_path / "deep.bin"
    deep.write_bytes(b"")
    long_name = "/".join(["folder"] * 20) + "/chart.png"  # needs the 155-byte prefix field
    stream = io.BytesIO()
    runner._write_tar(stream, [("short.txt", str(short)), (long_name, str(deep)),
                               ("gone.txt", str(tmp_path / "vanished"))])

    reader = UstarReader(io.BytesIO(stream.getvalue()))
    members = [(m.name, m.kind, m.size, reader.read_member(1 << 20)) for m in reader.members()]
    assert members == [("short.txt", "file", 513, b"x" * 513), (long_name, "file", 0, b"")]
    with tarfile.open(fileobj=io.BytesIO(stream.getvalue())) as archive:  # and standard
        assert archive.getnames() == ["short.txt", long_name]
        assert all(m.type == tarfile.REGTYPE and not m.pax_headers for m in archive)


def test_names_a_plain_ustar_header_cannot_hold_are_refused(runner: ModuleType) -> None:
    assert runner._valid_name("a" * 100)
    assert not runner._valid_name("a" * 101)  # no slash to split at
    assert runner._valid_name("p" * 150 + "/" + "n" * 100)
    assert not runner._valid_name("bad\udcffname")


def test_the_capture_keeps_head_and_tail_and_marks_the_cut_as_tracebacks_expect(
    runner: ModuleType,
) -> None:
    """The runner cannot import the package, so the omission marker is written twice: once
    here, once as the pattern evaluation/tracebacks.py skips. This keeps the two in step."""
    from selfcorrect_action.evaluation import tracebacks

    capture = runner._Capture(head=4, tail=6)
    for chunk in (b"ab", b"cdefgh", b"ijklmnop", b"qrstuv"):
        capture.feed(chunk)
    report = capture.as_dict()
    assert report["total_bytes"] == 22 and report["truncated"] is True
    head, marker, tail = report["text"].split("\n")
    assert (head, tail) == ("abcd", "qrstuv")
    assert marker == "[... 12 bytes omitted ...]"
    assert tracebacks._OMISSION.match(marker)
    capture = StreamCapture(text=report["text"], total_bytes=22, truncated=True)
    assert capture.captured() == ["abcd", "qrstuv"]
