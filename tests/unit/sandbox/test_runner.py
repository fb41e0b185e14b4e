"""The runner's pure parts, on the host (sandbox/runner.py imports only built-in modules and
the C half of json, so it loads here too). Its behaviour inside a container is covered by the
security and integration suites."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import stat
import struct
import subprocess
import sys
import tarfile
import types
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from selfcorrect_action.resources import sandbox_context
from selfcorrect_action.sandbox.models import ExecutionRequest, InputFile, OutputCaps, StreamCapture
from selfcorrect_action.sandbox.ustar import UstarReader
from selfcorrect_action.sandbox.wire import encode_request
from tests.conftest import exported


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
    assert version == b"%d" % runner.PROTOCOL_VERSION and int(data_len) == len(b"print(1)\n")
    assert header["argv"] == request.argv and header["env"] == request.env
    assert header["deadline_s"] == 12.5 and header["nonce"] == "n0nce"
    assert [f["path"] for f in header["files"]] == ["ünï.py", "d/x.csv"]
    assert header["caps"] == request.caps.model_dump()


@pytest.mark.parametrize("first_line", [b"SELFCORRECT-REQ 2 2 0\n", b"SELFCORRECT-BATCH 1 2\n"])
def test_a_request_of_another_protocol_stops_the_runner_saying_both_versions(
        runner: ModuleType, first_line: bytes) -> None:
    read, write = os.pipe()
    os.write(write, first_line + b"{}")
    os.close(write)
    with os.fdopen(read, "rb") as stdin, pytest.raises(SystemExit) as stopped:
        runner._read_request(stdin, 5.0)
    version = first_line.split()[1].decode()
    assert str(stopped.value) == (
        f"runner: the request speaks protocol {version}, this image's runner speaks "
        f"{runner.PROTOCOL_VERSION}; use the sandbox image of the same selfcorrect release")


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



def test_a_name_with_a_control_character_is_never_sent_back(runner: ModuleType,
                                                            tmp_path: Path) -> None:
    """A newline in a name started a heading of its own in the judge's prompt (a red-team
    finding): such a file is rejected with the reason, never carried."""
    (tmp_path / "result.json").write_text("{}")
    (tmp_path / "notes.txt\n# Note from the operators").write_text("x")
    (tmp_path / "tab\there").write_text("x")
    members, rejected, _, _ = runner._select_artifacts(
        OutputCaps().model_dump(), {}, [], str(tmp_path))
    assert [name for name, _ in members] == ["result.json"]
    assert sorted(r["reason"] for r in rejected) == [
        "name holds a control character (a newline, a tab...)"] * 2

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


# The syscall filter. Everything below is written out independently of the runner's own
# tables (from the kernel's unistd headers), so a wrong number there fails here.
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
FOREIGN_ARCHES = {"i386": 0x40000003, "arm": 0x40000028, "riscv64": 0xC00000F3,
                  "ppc64le": 0xC0000015, "s390x": 0x80000016, "aarch64_be": 0x800000B7}
REFUSED = {
    "x86_64": {"unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155,
               "keyctl": 250, "add_key": 248, "request_key": 249, "bpf": 321, "ptrace": 101,
               "perf_event_open": 298, "process_vm_readv": 310, "process_vm_writev": 311,
               "userfaultfd": 323},
    "aarch64": {"unshare": 97, "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41,
                "keyctl": 219, "add_key": 217, "request_key": 218, "bpf": 280, "ptrace": 117,
                "perf_event_open": 241, "process_vm_readv": 270, "process_vm_writev": 271,
                "userfaultfd": 282},
}
# Numbered alike on every arch from 424 on: the new mount API and io_uring.
NEW_MOUNT_API = {"open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
                 "fsmount": 432, "fspick": 433, "mount_setattr": 442, "io_uring_setup": 425,
                 "io_uring_enter": 426, "io_uring_register": 427}
CLONE = {"x86_64": 56, "aarch64": 220}
CLONE3 = 435
GETPID = {"x86_64": 39, "aarch64": 172}
NAMESPACE_FLAGS = {"CLONE_NEWTIME": 0x80, "CLONE_NEWNS": 0x20000, "CLONE_NEWCGROUP": 0x02000000,
                   "CLONE_NEWUTS": 0x04000000, "CLONE_NEWIPC": 0x08000000,
                   "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
                   "CLONE_NEWNET": 0x40000000}
SIGCHLD = 17
# What glibc and CPython pass to clone(): fork(), pthread_create(), posix_spawn()'s vfork.
ORDINARY_CLONES = {"fork": 0x01200000 | SIGCHLD, "pthread_create": 0x003D0F00,
                   "posix_spawn": 0x00004100 | SIGCHLD}
ALLOW, EPERM, ENOSYS = 0x7FFF0000, 0x00050001, 0x00050026
ARCHES = sorted(AUDIT_ARCH)


def run_bpf(program: bytes, arch: int, nr: int, args: tuple[int, ...] = (0,) * 6) -> int:
    """A classic-BPF interpreter for what seccomp hands a filter (struct seccomp_data, as a
    little-endian arch lays it out). Any opcode it does not know fails the test."""
    assert len(program) % 8 == 0 and 0 < len(program) // 8 <= 4096  # BPF_MAXINSNS
    data = struct.pack("<IIQ6Q", nr, arch, 0, *args)
    code = [struct.unpack_from("=HBBI", program, at) for at in range(0, len(program), 8)]
    pc = acc = 0
    while True:
        op, jt, jf, k = code[pc]  # an IndexError: a path that runs off the end
        if op == 0x20:  # BPF_LD | BPF_W | BPF_ABS
            assert k % 4 == 0 and k + 4 <= len(data), k
            acc = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif op == 0x15:  # BPF_JMP | BPF_JEQ | BPF_K
            pc += 1 + (jt if acc == k else jf)
        elif op == 0x45:  # BPF_JMP | BPF_JSET | BPF_K
            pc += 1 + (jt if acc & k else jf)
        elif op == 0x35:  # BPF_JMP | BPF_JGE | BPF_K
            pc += 1 + (jt if acc >= k else jf)
        elif op == 0x25:  # BPF_JMP | BPF_JGT | BPF_K
            pc += 1 + (jt if acc > k else jf)
        elif op == 0x54:  # BPF_ALU | BPF_AND | BPF_K
            acc &= k
            pc += 1
        elif op == 0x06:  # BPF_RET | BPF_K
            return k
        else:
            raise AssertionError(f"unknown BPF opcode {op:#x} at {pc}")


@pytest.fixture(scope="module")
def program(runner: ModuleType, seccomp: ModuleType) -> bytes:
    return exported(runner.syscall_filter(seccomp))


def _refused(arch: str) -> dict[str, int]:
    return {**REFUSED[arch], **NEW_MOUNT_API}


@pytest.mark.parametrize("arch", ARCHES)
def test_the_filter_refuses_each_listed_syscall_with_eperm(program: bytes, arch: str) -> None:
    for name, nr in _refused(arch).items():
        assert run_bpf(program, AUDIT_ARCH[arch], nr) == EPERM, name


@pytest.mark.parametrize("arch", ARCHES)
def test_the_filter_lets_every_other_syscall_through(program: bytes, arch: str) -> None:
    special = set(_refused(arch).values()) | {CLONE[arch], CLONE3}
    through = [nr for nr in range(1024) if nr not in special
               and run_bpf(program, AUDIT_ARCH[arch], nr, (0xFFFFFFFF,) * 6) != ALLOW]
    assert through == []


@pytest.mark.parametrize("arch", ARCHES)
def test_clone3_is_answered_enosys_so_glibc_falls_back(program: bytes, arch: str) -> None:
    assert run_bpf(program, AUDIT_ARCH[arch], CLONE3) == ENOSYS


@pytest.mark.parametrize("arch", ARCHES)
def test_clone_asking_for_any_namespace_is_refused(program: bytes, arch: str) -> None:
    for name, flag in NAMESPACE_FLAGS.items():
        for caller, flags in ORDINARY_CLONES.items():
            verdict = run_bpf(program, AUDIT_ARCH[arch], CLONE[arch], (flags | flag, 0, 0, 0, 0, 0))
            assert verdict == EPERM, (name, caller)


@pytest.mark.parametrize("arch", ARCHES)
def test_ordinary_clones_go_through(program: bytes, arch: str) -> None:
    for caller, flags in ORDINARY_CLONES.items():
        # The kernel ignores clone()'s high 32 flag bits, and so may the filter.
        for high in (0, 0xFFFFFFFF << 32):
            args = (flags | high, 0xFFFFFFFFFFFFFFFF, 0, 0, 0, 0)
            assert run_bpf(program, AUDIT_ARCH[arch], CLONE[arch], args) == ALLOW, caller


def test_the_x32_abi_is_refused_whatever_its_number(program: bytes) -> None:
    for nr in (0, 1, GETPID["x86_64"], 512, 547):  # read, write, getpid, x32's own
        assert run_bpf(program, AUDIT_ARCH["x86_64"], nr | 0x40000000) == EPERM, nr


@pytest.mark.parametrize("arch", sorted(FOREIGN_ARCHES))
def test_any_other_arch_is_refused_outright(program: bytes, arch: str) -> None:
    """Its numbers mean other syscalls (i386's 20 is getpid, 26 ptrace): none may pass."""
    for nr in (0, 1, 20, 26, 56, 172, 220):
        assert run_bpf(program, FOREIGN_ARCHES[arch], nr) == EPERM, nr


def test_the_interpreter_can_tell_allow_from_refuse() -> None:
    """Guards the tests above against an interpreter that answers EPERM for everything."""
    allow_all = struct.pack("=HBBI", 0x06, 0, 0, ALLOW)
    assert run_bpf(allow_all, AUDIT_ARCH["x86_64"], 272) == ALLOW
    with pytest.raises(AssertionError, match="unknown BPF opcode"):
        run_bpf(struct.pack("=HBBI", 0x07, 0, 0, 0), AUDIT_ARCH["x86_64"], 0)


def test_a_syscall_name_libseccomp_does_not_know_fails_the_build(
    runner: ModuleType, seccomp: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A misspelt name must not leave a hole in the filter: the runner then starts nothing."""
    monkeypatch.setattr(runner, "REFUSED_SYSCALLS", (*runner.REFUSED_SYSCALLS, "unshar"))
    with pytest.raises(RuntimeError, match="errno = -22"):
        runner.syscall_filter(seccomp)


HOST_CHECK = r"""
import ctypes, errno, importlib.util, json, os, subprocess, sys, threading
spec = importlib.util.spec_from_file_location("runner", sys.argv[1])
runner = importlib.util.module_from_spec(spec)
spec.loader.exec_module(runner)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(nr, *args):
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(nr), *(ctypes.c_ulong(a) for a in args))
    if result == 0 and nr == int(sys.argv[4]):
        os._exit(0)  # a child of a clone that went through
    return "ALLOWED" if result >= 0 else errno.errorcode[ctypes.get_errno()]
numbers = json.loads(sys.argv[3])
clone3_before = call(*numbers["calls"]["clone3"])  # (NULL, 0): EINVAL, never a child
def too_long(seccomp):  # more than BPF_MAXINSNS instructions: the kernel says EINVAL
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    rules.set_attr(seccomp.Attr.API_SYSRAWRC, 1)
    for value in range(5000):
        rules.add_rule(seccomp.ERRNO(1), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, 0xFFFF, value))
    return rules
build = runner.syscall_filter if sys.argv[2] == "real" else too_long
problem = runner._install_syscall_filter(build)
seen = []
worker = threading.Thread(target=lambda: seen.append(call(numbers["getpid"])))
worker.start()
worker.join()
child = subprocess.run(["grep", "^Seccomp:", "/proc/self/status"], capture_output=True,
                       text=True).stdout.split()
print(json.dumps({
    "problem": problem,
    "clone3_before": clone3_before,
    "calls": {name: call(nr, *args) for name, (nr, *args) in numbers["calls"].items()},
    "thread": seen,
    "child_seccomp": child[-1:],
}))
"""


def _host_check(arch: str, mode: str) -> dict[str, Any]:
    calls = {"unshare": [REFUSED[arch]["unshare"], 0x10000000],
             "clone3": [CLONE3, 0, 0],
             "clone(CLONE_NEWUSER)": [CLONE[arch], 0x10000000 | SIGCHLD, 0, 0, 0, 0],
             "getpid": [GETPID[arch]]}
    numbers = json.dumps({"getpid": GETPID[arch], "calls": calls})
    done = subprocess.run(
        [sys.executable, "-I", "-c", HOST_CHECK, str(sandbox_context() / "runner.py"), mode,
         numbers, str(CLONE[arch])], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _host_arch() -> str:
    arch = os.uname().machine
    if sys.platform != "linux" or arch not in AUDIT_ARCH:
        pytest.skip(f"the filter is for Linux on {ARCHES}, not {sys.platform} {arch}")
    return arch


def test_this_kernel_accepts_the_filter_and_applies_it_to_children(seccomp: ModuleType
                                                                    ) -> None:
    """The real thing, in a child interpreter (a filter cannot be removed again): the kernel
    takes the program, refuses what it should, and passes the rest, threads included."""
    facts = _host_check(_host_arch(), "real")
    assert facts["problem"] is None
    assert facts["calls"] == {"unshare": "EPERM", "clone3": "ENOSYS",
                              "clone(CLONE_NEWUSER)": "EPERM", "getpid": "ALLOWED"}
    assert facts["thread"] == ["ALLOWED"] and facts["child_seccomp"] == ["2"]


def test_a_filter_the_kernel_refuses_is_reported_not_ignored(seccomp: ModuleType) -> None:
    facts = _host_check(_host_arch(), "too long")
    assert facts["problem"] == ("cannot install the syscall filter: seccomp_load "
                                "failed with EINVAL (Invalid argument)")
    assert facts["calls"]["clone3"] == facts["clone3_before"]  # no filter took its place


def test_without_libseccomp_the_filter_reports_why(
    runner: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))  # the runner appends its package path
    monkeypatch.setitem(sys.modules, "seccomp", None)  # import seccomp now raises ImportError
    problem = runner._install_syscall_filter(runner.syscall_filter)
    assert problem == ("cannot install the syscall filter: ModuleNotFoundError: import of "
                       "seccomp halted; None in sys.modules")


def test_the_script_is_not_started_without_the_filter(
    runner: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """main() as in the container, with a filter that would not install: it answers the
    request with the reason (on stderr, as SystemExit) before STARTED, and never spawns."""
    request = encode_request(
        ExecutionRequest(argv=["python3", "s.py"], files=[InputFile(path="s.py", data=b"")]),
        deadline_s=5, nonce="n0nce")
    read_fd, write_fd = os.pipe()
    os.write(write_fd, request)
    os.close(write_fd)
    spawned: list[object] = []
    stdout = io.BytesIO()
    with open(read_fd, "rb") as stdin:
        monkeypatch.setattr(sys, "argv", ["runner.py", "5"])
        monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(buffer=stdin))
        monkeypatch.setattr(sys, "stdout", types.SimpleNamespace(buffer=stdout))
        monkeypatch.setattr(os, "chdir", lambda path: None)
        monkeypatch.delenv("MPLCONFIGDIR", raising=False)
        monkeypatch.setattr(runner, "WORK_DIR", str(tmp_path))
        monkeypatch.setattr(runner, "_survive_signals", lambda: None)
        monkeypatch.setattr(runner, "_install_syscall_filter", lambda build: "no seccomp")
        monkeypatch.setattr(runner, "_spawn", lambda *args: spawned.append(args))
        with pytest.raises(SystemExit) as stopped:
            runner.main()
    assert str(stopped.value) == "runner: no seccomp; the script was not started"
    assert spawned == [] and stdout.getvalue() == b""
    assert list(tmp_path.iterdir()) == []  # not even the inputs were placed


def test_the_network_watch_is_read_as_untrusted_lines(runner: ModuleType, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """netwatch.py's file can be written by the script too: only well-formed lines count,
    each host and port once, a bounded number, and a FIFO or link in its place is no file."""
    watch = tmp_path / "watch"
    monkeypatch.setattr(runner, "WATCH_FILE", str(watch))
    assert runner._read_watch() == []
    runner._start_watch()
    assert stat.S_IMODE(watch.stat().st_mode) == 0o622
    lines = ["dns\t443\tapi.example.com", "connect\t443\tapi.example.com",
             "connect\t443\tapi.example.com", "udp\t53\t8.8.8.8", "bogus\t1\tx.example",
             "connect\tnan\ty.example", "connect\t999999\tz.example", "connect\t80\t",
             "no tabs at all", *(f"connect\t{port}\tflood.example" for port in range(100))]
    watch.write_text("\n".join(lines) + "\n")
    found = runner._read_watch()
    assert found[:3] == [{"kind": "dns", "port": 443, "host": "api.example.com"},
                         {"kind": "udp", "port": 53, "host": "8.8.8.8"},
                         {"kind": "connect", "port": 0, "host": "flood.example"}]
    assert len(found) == runner.WATCH_MAX_RECORDS
    watch.unlink()
    os.mkfifo(watch)
    assert runner._read_watch() == []
    watch.unlink()
    watch.symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere").write_text("connect\t1\tvia.link\n")
    assert runner._read_watch() == []


def _watching(tmp_path: Path, code: str) -> list[str]:
    """Run `code` in a fresh interpreter with netwatch.py's hook installed and its file in
    tmp_path: the lines it wrote."""
    watch = tmp_path / "watch"
    watch.write_text("")
    prelude = (f"import sys; sys.path.insert(0, {str(sandbox_context())!r})\n"
               f"import netwatch; netwatch.WATCH_FILE = {str(watch)!r}\n")
    done = subprocess.run([sys.executable, "-c", prelude + code], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return watch.read_text().splitlines()


def test_the_network_watch_notes_what_leaves_the_container_and_nothing_local(
        tmp_path: Path) -> None:
    # The events as CPython raises them, without sending anything anywhere.
    lines = _watching(tmp_path, """
import socket
s = socket.socket()
sys.audit("socket.connect", s, ("198.51.100.7", 443))
sys.audit("socket.connect", s, ("127.0.0.1", 8080))
sys.audit("socket.connect", s, ("::1", 8080, 0, 0))
sys.audit("socket.connect", s, "/run/some.sock")
sys.audit("socket.getaddrinfo", "Evil.Example.com", "https", 0, 0, 0)
sys.audit("socket.getaddrinfo", b"files.example.net", 80, 0, 0, 0)
sys.audit("socket.getaddrinfo", "localhost", 80, 0, 0, 0)
sys.audit("socket.getaddrinfo", None, 80, 0, 0, 0)
sys.audit("socket.getaddrinfo", "198.51.100.7", 443, 0, 0, 0)
sys.audit("socket.getaddrinfo", "2001:db8::1", 443, 0, 0, 0)
sys.audit("socket.gethostbyname", "a\\tb\\nc.example")
sys.audit("socket.sendto", s, ("192.0.2.1", 53))
socket.getaddrinfo("localhost", 80)
s.close()
""")
    assert lines == ["connect\t443\t198.51.100.7", "dns\t0\tEvil.Example.com",
                     "dns\t80\tfiles.example.net", "dns\t0\ta?b?c.example", "udp\t53\t192.0.2.1"]


def test_the_network_watch_writes_nothing_without_its_file_and_stops_at_its_cap(
        tmp_path: Path) -> None:
    flood = "for n in range(100):\n    sys.audit('socket.connect', None, ('192.0.2.1', n))\n"
    assert len(_watching(tmp_path, flood)) == 20
    absent = tmp_path / "absent"
    code = (f"import sys; sys.path.insert(0, {str(sandbox_context())!r})\n"
            f"import netwatch; netwatch.WATCH_FILE = {str(absent)!r}\n" + flood)
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    assert not absent.exists(), "the hook never creates the file"
