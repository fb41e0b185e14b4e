"""The attach-stream protocol over a real socket pair standing in for the engine."""

from __future__ import annotations

import json
import socket
import struct
import time

import pytest

from selfcorrect_action.resources import sandbox_context
from selfcorrect_action.sandbox.image import runner_protocol
from selfcorrect_action.sandbox.models import ExecutionRequest, InputFile
from selfcorrect_action.sandbox.wire import (
    PROTOCOL_VERSION,
    AttachStream,
    DeadlineExceeded,
    ProtocolViolation,
    StreamClosed,
    Tampered,
    encode_request,
    read_result,
    read_started,
)


def _frame(kind: int, payload: bytes) -> bytes:
    return struct.pack(">BxxxL", kind, len(payload)) + payload


@pytest.fixture
def pair():
    ours, engine = socket.socketpair()
    yield AttachStream(ours), engine
    ours.close()
    engine.close()


def test_request_carries_header_and_inputs() -> None:
    request = ExecutionRequest(
        argv=["python3", "s.py"], files=[InputFile(path="d/s.py", data=b"\x10\x11print(1)")]
    )
    data = encode_request(request, deadline_s=7, nonce="n0")
    preamble, _, rest = data.partition(b"\n")
    magic, version, header_len, tar_len = preamble.split()
    assert (magic, version) == (b"SELFCORRECT-REQ", str(PROTOCOL_VERSION).encode())
    header = json.loads(rest[: int(header_len)])
    assert header["argv"] == ["python3", "s.py"] and header["deadline_s"] == 7
    assert header["nonce"] == "n0"
    assert header["files"] == [{"path": "d/s.py", "mode": 0o644, "size": 10}]
    assert len(rest) == int(header_len) + int(tar_len)
    assert rest[int(header_len) :] == b"\x10\x11print(1)"


def test_the_client_and_the_runner_carry_the_same_protocol_version() -> None:
    """Two copies (the runner runs in the image, apart from this package): a change to one
    alone would pass every host-side test and fail only against a real container."""
    runner = (sandbox_context() / "runner.py").read_text()
    assert runner_protocol(runner) == PROTOCOL_VERSION


def test_frames_are_demultiplexed_across_odd_boundaries(pair) -> None:
    stream, engine = pair
    body = json.dumps({"exit_code": 0}).encode()
    wire = (
        _frame(1, b"STAR") + _frame(2, b"runner warning\n") + _frame(1, b"TED\nRESULT n0 ")
        + _frame(1, b"%d\n" % len(body) + body) + _frame(1, b"tail")
    )
    for i in range(0, len(wire), 3):  # dribble the bytes in
        engine.sendall(wire[i : i + 3])
    engine.shutdown(socket.SHUT_WR)
    read_started(stream)
    assert read_result(stream, "n0") == {"exit_code": 0}
    assert stream.read() == b"tail"
    assert stream.read() == b""
    assert bytes(stream.stderr) == b"runner warning\n"


def test_deadline_is_enforced(pair) -> None:
    stream, engine = pair
    engine.sendall(_frame(1, b"STARTED\n"))
    stream.deadline = time.monotonic() + 0.2
    read_started(stream)
    began = time.monotonic()
    with pytest.raises(DeadlineExceeded):
        read_result(stream, "n0")
    assert time.monotonic() - began < 1


def test_eof_before_result_is_stream_closed(pair) -> None:
    stream, engine = pair
    engine.sendall(_frame(1, b"STARTED\n") + _frame(1, b"RES"))
    engine.close()
    read_started(stream)
    with pytest.raises(StreamClosed):
        read_result(stream, "n0")


@pytest.mark.parametrize(
    "payload",
    [b"RESULT n0 x\n", b"HELLO\n", b"RESULT n0 99999999999\n", b"RESULT n0 3\n[1]",
     b"RESULT n0 3\n{x}", b"RESULT 2\n{}"],
)
def test_malformed_results_are_protocol_violations(pair, payload: bytes) -> None:
    stream, engine = pair
    engine.sendall(_frame(1, payload))
    with pytest.raises(ProtocolViolation):
        read_result(stream, "n0")


def test_a_result_with_the_wrong_nonce_is_tampering(pair) -> None:
    stream, engine = pair
    engine.sendall(_frame(1, b"RESULT forged 2\n{}"))
    with pytest.raises(Tampered):
        read_result(stream, "n0")


def test_a_line_flood_is_a_protocol_violation(pair) -> None:
    stream, engine = pair
    engine.sendall(_frame(1, b"x" * 10_000))
    with pytest.raises(ProtocolViolation):
        read_started(stream)


def test_stderr_kept_is_bounded(pair) -> None:
    stream, engine = pair
    for _ in range(10):
        engine.sendall(_frame(2, b"e" * 4096))
    engine.sendall(_frame(1, b"STARTED\n"))
    read_started(stream)
    assert len(stream.stderr) == 8192


def test_tunnel_frames_before_the_result_go_to_the_relay(pair) -> None:
    """With the network on, the runner's NET frames come between STARTED and RESULT: each
    is handed over whole, however the engine split it, and the result still comes back."""
    stream, engine = pair
    body = b"NET n0 1 OPEN 0\nNET n0 1 DATA 5\nhelloNET n0 1 END 0\nRESULT n0 2\n{}"
    engine.sendall(_frame(1, body[:13]) + _frame(1, body[13:40]) + _frame(1, body[40:]))
    frames: list[tuple[int, bytes, bytes]] = []
    assert read_result(stream, "n0", lambda *frame: frames.append(frame)) == {}
    assert frames == [(1, b"OPEN", b""), (1, b"DATA", b"hello"), (1, b"END", b"")]


@pytest.mark.parametrize("line", [b"NET n0 1 SEND 0\n", b"NET n0 x DATA 0\n",
                                  b"NET n0 1 DATA 99999999\n", b"NET n0 1\n"])
def test_malformed_tunnel_frames_are_protocol_violations(pair, line: bytes) -> None:
    stream, engine = pair
    engine.sendall(_frame(1, line))
    with pytest.raises(ProtocolViolation):
        read_result(stream, "n0", lambda *frame: None)


def test_a_tunnel_frame_with_the_wrong_nonce_is_tampering_and_none_is_expected_without_network(
        pair) -> None:
    stream, engine = pair
    engine.sendall(_frame(1, b"NET forged 1 OPEN 0\n"))
    with pytest.raises(Tampered):
        read_result(stream, "n0", lambda *frame: None)
    engine.sendall(_frame(1, b"NET n0 1 OPEN 0\n"))
    with pytest.raises(ProtocolViolation):
        read_result(stream, "n0")  # a run without network has no tunnel


def test_a_request_with_network_asks_the_runner_for_its_tunnel() -> None:
    plain = ExecutionRequest(argv=["python3", "s.py"])
    assert b'"egress"' not in encode_request(plain, deadline_s=1, nonce="n")
    networked = plain.model_copy(update={"network": "open"})
    assert b'"egress": true' in encode_request(networked, deadline_s=1, nonce="n")
