"""Runs inside the sandbox container as its main process (PID 1, no docker-init).

It waits for one request on stdin, places the files in the work dir, runs the command with
bounded output capture, then reports on stdout and streams the artifacts back as a tar.
Docker's archive API cannot be trusted to write into a tmpfs or a read-only root (put_archive
is refused on the latter and may land underneath the former), so files travel over the attach
stream instead; that also lets a pre-started container wait here until it is used.

Wire format (all on the container's stdin/stdout, no TTY):
  request:  b"SELFCORRECT-REQ 2 <header_len> <data_len>\n" + header JSON + the input files'
            bytes back to back, in the order and sizes the header's "files" list gives
  response: b"STARTED\n"                       right before the command starts
            b"RESULT <nonce> <json_len>\n" + JSON  once the command and its children are gone
            plain ustar stream of the artifacts until EOF

Its start-up is on the critical path of a cold execution, and under gVisor every stdlib
module imported costs file-system round trips: so at import it loads only built-in modules
and the C halves of json and signal (no json, signal, subprocess, contextlib, tarfile,
hashlib or io), and the script is started with posix_spawn. With the font cache seeded
here instead of in a site hook of every interpreter, a cold execution under runsc got about
130 ms faster.

Before it reads the request it installs a seccomp filter of its own on itself, which every
process it starts inherits (across fork and exec, irremovably): EPERM for unshare, setns,
clone() with a namespace flag, mount, umount2, pivot_root and the new mount API, the key
syscalls, bpf and ptrace; ENOSYS for clone3, whose flags a filter cannot read (glibc then
falls back to clone()); EPERM for any other arch or ABI (i386 through int 0x80, x32).
Under runc Docker's default profile refuses most of these already (not ptrace, clone()
with CLONE_NEWTIME, nor i386 syscalls); gVisor applies no profile to the script, and there
unshare granted a user namespace whose emulated capabilities (mount, ...) widened what the
script could ask of gVisor's kernel. The filter is installed here, not in a wrapper around
the script: the runner never needs those calls itself (it reads, writes, waits, kills and
spawns), and a wrapper would cost an exec. And before the request, not right before the
spawn: the program is built with _struct, but installing it needs ctypes, the one import
that is not built in (10 to 15 ms under gVisor, 2 ms under runc), which a pooled container
thus pays while it waits; importing _signal instead of signal saves as much. If the filter
cannot be installed the script is not started: the runner exits before STARTED with the
reason on stderr, which the client reports as a sandbox failure.

We run as PID 1 (no docker-init): a dumpable init running as the script's uid could be
ptraced and taken over by the script, while PID 1 cannot be killed from inside (under runc).
Under runc we are non-dumpable, so the script can neither trace us nor open our stdout
through /proc: the container starts us with an execute-only copy of the interpreter, and the
kernel makes a process that execs a binary it may not read non-dumpable. gVisor cannot load
an execute-only binary and does not honour non-dumpability for /proc/<pid>/fd; there its
Yama ptrace_scope 1 refuses tracing and our memory, and the result line carries the
client's one-time nonce, which the script never sees: anything it writes into our channel
is detected as tampering instead of being read as a result. As PID 1 we reap every orphan.
"""

from __future__ import annotations

import _json
import _signal as signal  # signal.py would import enum, functools, collections: 12 ms in gVisor
import _struct
import errno
import os
import select
import sys
import time

WORK_DIR = "/work"
BAKED_FONT_CACHE = "/opt/selfcorrect/matplotlib"
# A script can leave a million files behind: look at this many at most, and name at most
# MAX_REJECTED of those left out (the rest are counted), so our report stays small.
MAX_SCANNED = 20000
MAX_REJECTED = 50
MAX_DEPTH = 64
MAX_NAME_CHARS = 512
# After the deadline (or once the script is gone and the grace has passed) we wait at most
# this long for the killed processes to disappear before reporting anyway.
REAP_WAIT_S = 2.0
# Python ignores these at start-up and an ignored signal stays ignored across exec: the
# script gets them back at their defaults (as subprocess's restore_signals does).
RESTORED_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ)
# Grandchildren may keep the output pipes open after the script exits; give them this long
# to flush before everything left is killed.
DRAIN_GRACE_S = 0.05

# The syscall filter (see the module docstring). seccomp_data: int nr, u32 arch, u64 ip,
# u64 args[6]; both supported arches are little-endian, so an argument's low half is first.
SECCOMP_NR, SECCOMP_ARCH, SECCOMP_ARG0_LOW = 0, 4, 16
AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_AARCH64 = 0xC00000B7
# x32 shares x86_64's arch value and marks its numbers with this bit: another table of
# syscalls that the lists below do not name.
X32_SYSCALL_BIT = 0x40000000
# From 424 on the kernel numbers new syscalls alike on every arch.
_NEW_MOUNT_API = {"open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
                  "fsmount": 432, "fspick": 433, "mount_setattr": 442}
# io_uring: a second way into the kernel that seccomp cannot see into (its operations run
# without syscalls); no script needs it, and it has been a rich source of kernel bugs.
_IO_URING = {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427}
REFUSED_SYSCALLS = {
    AUDIT_ARCH_X86_64: {"ptrace": 101, "pivot_root": 155, "mount": 165, "umount2": 166,
                        "add_key": 248, "request_key": 249, "keyctl": 250, "unshare": 272,
                        "setns": 308, "bpf": 321, "perf_event_open": 298,
                        "process_vm_readv": 310, "process_vm_writev": 311, "userfaultfd": 323,
                        **_NEW_MOUNT_API, **_IO_URING},
    AUDIT_ARCH_AARCH64: {"umount2": 39, "mount": 40, "pivot_root": 41, "unshare": 97,
                         "ptrace": 117, "add_key": 217, "request_key": 218, "keyctl": 219,
                         "setns": 268, "bpf": 280, "perf_event_open": 241,
                         "process_vm_readv": 270, "process_vm_writev": 271, "userfaultfd": 282,
                         **_NEW_MOUNT_API, **_IO_URING},
}
CLONE_SYSCALL = {AUDIT_ARCH_X86_64: 56, AUDIT_ARCH_AARCH64: 220}
CLONE3_SYSCALL = 435
# CLONE_NEWTIME (0x80) lies in clone()'s exit-signal byte, where it would name signal 128 or
# above, which no caller uses: refusing it costs nothing. The kernel reads only the low 32
# bits of clone()'s flags, so the high half need not be checked.
CLONE_NAMESPACE_FLAGS = (0x00000080 | 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000
                         | 0x10000000 | 0x20000000 | 0x40000000)
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
BPF_LD_W_ABS, BPF_JEQ_K, BPF_JSET_K, BPF_RET_K = 0x20, 0x15, 0x45, 0x06
PR_SET_SECCOMP, SECCOMP_MODE_FILTER, PR_SET_NO_NEW_PRIVS = 22, 2, 38


def main() -> int:
    _survive_signals()
    os.chdir(WORK_DIR)  # the script's working dir: posix_spawn has no cwd argument
    idle_timeout = float(sys.argv[1]) if len(sys.argv) > 1 else 600.0
    stdin = sys.stdin.buffer
    stdout = sys.stdout.buffer
    # While a pooled container waits for its request, so no execution waits for these.
    _seed_font_cache(os.environ.get("MPLCONFIGDIR"))
    filter_problem = _install_syscall_filter(syscall_filter())
    header, payload = _read_request(stdin, idle_timeout)
    if header is None:
        return 0
    if filter_problem is not None:
        # Before STARTED, on stderr: the client reports that the sandbox did not start the
        # script, quoting this. A script must never run without the filter.
        raise SystemExit(f"runner: {filter_problem}; the script was not started")
    inputs = _place_inputs(header, payload)
    if "MPLCONFIGDIR" in header.get("env", {}):
        _seed_font_cache(header["env"]["MPLCONFIGDIR"])
    oom_before = _oom_kills()
    stdout.write(b"STARTED\n")
    stdout.flush()
    report = _run(header)
    _kill_everything_else()
    oom_after = _oom_kills()
    report["oom_kills"] = (
        None if oom_before is None or oom_after is None else oom_after - oom_before
    )
    members, rejected, left_out, unchanged = _select_artifacts(
        header["caps"], inputs, header.get("wanted", []))
    report["rejected"] = rejected
    report["unlisted"] = left_out
    report["unchanged_inputs"] = unchanged
    body = _to_json(report).encode("utf-8", "replace")
    nonce = header["nonce"].encode()
    stdout.write(b"RESULT %s %d\n" % (nonce, len(body)) + body)
    stdout.flush()
    _write_tar(stdout, members)
    stdout.flush()
    return 0


def _survive_signals() -> None:
    """As PID 1 we would die of a SIGINT/SIGTERM/SIGHUP the script sends us (Python turns
    SIGINT into KeyboardInterrupt), losing its output. A no-op handler, not SIG_IGN: handlers
    reset to the default across exec, so the script still gets normal signal behaviour."""
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1,
                   signal.SIGUSR2, signal.SIGPIPE):
        signal.signal(number, _ignore)


def _ignore(number, frame) -> None:
    return None


class _JsonContext:
    """What the C scanner of the json package reads from its decoder: the defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float


def _from_json(text: str):
    value, end = _json.make_scanner(_JsonContext())(text, 0)
    if text[end:].strip():
        raise ValueError("runner: trailing data after the request header")
    return value


def _to_json(value) -> str:
    """JSON for the report's plain values, with non-ASCII kept as is (the json package's
    dumps(ensure_ascii=False) without importing it)."""
    if isinstance(value, str):
        return _json.encode_basestring(value)
    if value is None or value is True or value is False:
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return float.__repr__(value) if value - value == 0 else "null"
    if isinstance(value, dict):
        return "{" + ", ".join(
            f"{_json.encode_basestring(str(k))}: {_to_json(v)}" for k, v in value.items()
        ) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_to_json(item) for item in value) + "]"
    raise TypeError(f"runner: cannot report a {type(value).__name__}")


def _seed_font_cache(target_dir: str | None, baked_dir: str = BAKED_FONT_CACHE) -> None:
    """Copy matplotlib's font list, built when the image was, into its cache dir. That dir is
    on a tmpfs that starts empty in every container (the root is read-only), and without
    the copy every script importing matplotlib would rebuild the list by parsing every font
    file: about 0.2 s under runc and 0.9 s under gVisor. Never raises: without a seed,
    matplotlib builds its own."""
    if not target_dir:
        return
    try:
        for name in os.listdir(baked_dir):
            target = os.path.join(target_dir, name)
            if not name.startswith("fontlist-") or os.path.exists(target):
                continue
            os.makedirs(target_dir, mode=0o700, exist_ok=True)
            # Written aside and renamed: a matplotlib import never reads half a file.
            partial = f"{target}.{os.getpid()}.partial"
            with open(os.path.join(baked_dir, name), "rb") as src, open(partial, "wb") as dst:
                dst.write(src.read())
            os.replace(partial, target)
    except OSError:
        return


_Jump = int | str
_Line = str | tuple[int, _Jump, _Jump, int]


def syscall_filter() -> bytes:
    """The seccomp program: for x86_64 and aarch64, EPERM for the refused syscalls and for a
    clone() asking for a new namespace, ENOSYS for clone3() (its flags sit in a struct that
    a filter cannot read; glibc then falls back to clone(), so threads, fork and spawn keep
    working); EPERM for anything from another arch or ABI (i386 by int 0x80, x32), whose
    numbers mean other syscalls."""
    lines: list[_Line] = [
        (BPF_LD_W_ABS, 0, 0, SECCOMP_ARCH),
        (BPF_JEQ_K, "x86_64", 0, AUDIT_ARCH_X86_64),
        (BPF_JEQ_K, "aarch64", "refuse", AUDIT_ARCH_AARCH64),
        "x86_64",
        (BPF_LD_W_ABS, 0, 0, SECCOMP_NR),
        (BPF_JSET_K, "refuse", 0, X32_SYSCALL_BIT),
        *_arch_checks(AUDIT_ARCH_X86_64),
        "aarch64",
        (BPF_LD_W_ABS, 0, 0, SECCOMP_NR),
        *_arch_checks(AUDIT_ARCH_AARCH64),
        "clone",
        (BPF_LD_W_ABS, 0, 0, SECCOMP_ARG0_LOW),
        (BPF_JSET_K, "refuse", "allow", CLONE_NAMESPACE_FLAGS),
        "allow",
        (BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
        "nosys",
        (BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.ENOSYS),
        "refuse",
        (BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EPERM),
    ]
    return _assemble(lines)


def _arch_checks(arch: int) -> list[_Line]:
    """Dispatch on the syscall number already loaded; ends in a jump, never falls through."""
    checks: list[_Line] = [(BPF_JEQ_K, "refuse", 0, nr) for nr in REFUSED_SYSCALLS[arch].values()]
    checks.append((BPF_JEQ_K, "nosys", 0, CLONE3_SYSCALL))
    checks.append((BPF_JEQ_K, "clone", "allow", CLONE_SYSCALL[arch]))
    return checks


def _assemble(lines: list[_Line]) -> bytes:
    """Classic BPF (struct sock_filter: u16 code, u8 jt, u8 jf, u32 k, native order), with
    jump targets given as labels: offsets counted by hand break silently on every edit."""
    labels: dict[str, int] = {}
    program: list[tuple[int, _Jump, _Jump, int]] = []
    for line in lines:
        if isinstance(line, str):
            labels[line] = len(program)
        else:
            program.append(line)
    out = bytearray()
    for index, (code, jt, jf, k) in enumerate(program):
        out += _struct.pack("=HBBI", code, _jump(jt, index, labels),
                            _jump(jf, index, labels), k)
    return bytes(out)


def _jump(target: _Jump, index: int, labels: dict[str, int]) -> int:
    offset = target if isinstance(target, int) else labels[target] - index - 1
    if not 0 <= offset <= 255:  # BPF jumps only forward, by a byte
        raise ValueError(f"runner: BPF jump to {target!r} from {index} is out of range")
    return offset


def _install_syscall_filter(program: bytes) -> str | None:
    """Install the filter on this process, for everything it starts from now on (filters
    are inherited across fork and exec and cannot be removed). None once it is in place,
    else why not. No-new-privs first: the kernel refuses a filter from an unprivileged
    process without it. prctl filters the calling thread only, which is the one (the only
    one) that spawns the script."""
    try:
        import ctypes  # the runner's only import that is not built in (see the docstring)

        prctl = ctypes.CDLL(None, use_errno=True).prctl
        prctl.restype = ctypes.c_int
        # Declared, or ctypes would pass C ints and prctl would read four unsigned longs.
        prctl.argtypes = (ctypes.c_int, *(ctypes.c_ulong,) * 4)
        code = ctypes.create_string_buffer(program, len(program))
        # struct sock_fprog: u16 count of instructions, then (aligned) a pointer to them.
        fprog = ctypes.create_string_buffer(
            _struct.pack("@HP", len(program) // 8, ctypes.addressof(code)))
        calls = (("PR_SET_NO_NEW_PRIVS", (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)),
                 ("PR_SET_SECCOMP", (PR_SET_SECCOMP, SECCOMP_MODE_FILTER,
                                     ctypes.addressof(fprog), 0, 0)))
        for name, args in calls:
            if prctl(*args) != 0:
                return _filter_failure(f"prctl({name})", ctypes.get_errno())
    except (ImportError, OSError, AttributeError) as exc:
        return f"cannot install the syscall filter: {type(exc).__name__}: {exc}"
    return None


def _filter_failure(call: str, number: int) -> str:
    name = errno.errorcode.get(number, str(number))
    return f"cannot install the syscall filter: {call} failed with {name} ({os.strerror(number)})"


def _read_request(stdin, idle_timeout: float):
    ready, _, _ = select.select([stdin], [], [], idle_timeout)
    if not ready:
        return None, b""
    line = stdin.readline(256)
    parts = line.split()
    if len(parts) != 4 or parts[0] != b"SELFCORRECT-REQ" or parts[1] != b"2":
        return None, b""
    header = _from_json(_read_exact(stdin, int(parts[2])).decode("utf-8"))
    return header, _read_exact(stdin, int(parts[3]))


def _read_exact(stream, size: int) -> bytes:
    chunks, remaining = [], size
    while remaining:
        chunk = stream.read(remaining)
        if not chunk:
            raise SystemExit("runner: request ended early")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _place_inputs(header: dict, payload: bytes) -> dict[str, bytes]:
    """Write the inputs (sent by our client, still checked) and keep their bytes, so
    unchanged inputs are not sent back as artifacts."""
    placed, offset = {}, 0
    for item in header.get("files", []):
        data = payload[offset : offset + item["size"]]
        offset += item["size"]
        name = os.path.normpath(item["path"])
        if name.startswith(("/", "..")):
            continue
        target = os.path.join(WORK_DIR, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as handle:
            handle.write(data)
        os.chmod(target, item["mode"] & 0o755)
        placed[name] = data
    return placed


class _Capture:
    """Keeps the first `head` and last `tail` bytes of a stream, counting the rest."""

    def __init__(self, head: int, tail: int) -> None:
        self.head_limit, self.tail_limit = head, tail
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data and self.tail_limit:
            self.tail += data
            del self.tail[: max(0, len(self.tail) - self.tail_limit)]

    def as_dict(self) -> dict:
        omitted = self.total - len(self.head) - len(self.tail)
        text = self.head.decode("utf-8", "replace")
        if omitted > 0:
            text += f"\n[... {omitted} bytes omitted ...]\n"
        text += self.tail.decode("utf-8", "replace")
        return {"text": text, "total_bytes": self.total, "truncated": omitted > 0}


class _Child:
    """The script's process: its pid and, once reaped, its exit status (as Popen's
    returncode: negative for a signal)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None


def _run(header: dict) -> dict:
    caps = header["caps"]
    env = dict(os.environ)
    env.update(header.get("env", {}))
    deadline = time.monotonic() + float(header["deadline_s"])
    started = time.monotonic()
    try:
        child, out_fd, err_fd = _spawn(header["argv"], env)
    except (OSError, ValueError) as exc:
        return {"exit_code": 127, "signal": None, "duration_ms": 0, "inner_timeout": False,
                "stdout": _Capture(0, 0).as_dict(),
                "stderr": {"text": f"cannot start {header['argv'][0]}: {exc}\n",
                           "total_bytes": 0, "truncated": False}}
    out = _Capture(caps["stream_head_bytes"], caps["stream_tail_bytes"])
    err = _Capture(caps["stream_head_bytes"], caps["stream_tail_bytes"])
    inner_timeout = _pump(child, {out_fd: out, err_fd: err}, deadline)
    duration_ms = int((time.monotonic() - started) * 1000)
    code = child.returncode if child.returncode is not None else -signal.SIGKILL
    return {
        "exit_code": code if code >= 0 else None,
        "signal": -code if code < 0 else None,
        "duration_ms": duration_ms,
        "inner_timeout": inner_timeout,
        "stdout": out.as_dict(),
        "stderr": err.as_dict(),
    }


def _spawn(argv: list[str], env: dict[str, str]) -> tuple[_Child, int, int]:
    """Start the script in its own session, stdin from /dev/null, stdout and stderr into
    pipes we read. posix_spawn rather than subprocess, whose import alone is a noticeable
    part of a cold start under gVisor. Our own descriptors are all close-on-exec (Python's
    default), so the script inherits only 0, 1 and 2."""
    program = _find_program(argv[0], env.get("PATH", os.defpath))
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    try:
        pid = os.posix_spawn(
            program, argv, env,
            file_actions=[(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                          (os.POSIX_SPAWN_DUP2, out_write, 1),
                          (os.POSIX_SPAWN_DUP2, err_write, 2)],
            setsid=True, setsigdef=RESTORED_SIGNALS,
        )
    except BaseException:
        os.close(out_read)
        os.close(err_read)
        raise
    finally:
        os.close(out_write)
        os.close(err_write)
    _prefer_for_oom_kill(pid)
    return _Child(pid), out_read, err_read


def _find_program(name: str, search_path: str) -> str:
    """The executable for argv[0], looked up in the script's PATH (not ours), as exec does."""
    if "/" in name:
        return name
    for folder in search_path.split(os.pathsep):
        candidate = os.path.join(folder or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise FileNotFoundError(2, "No such file or directory in PATH", name)


def _prefer_for_oom_kill(pid: int) -> None:
    """Make the script (and what it forks) the OOM killer's first choice, so we survive a
    memory bomb to report its output. Written right after the spawn: the script has only
    just exec'd its interpreter, long before it can fork. (Ours is out of reach: the
    /proc/self files of a non-dumpable process belong to root.) Raising a score needs no
    privilege."""
    try:
        with open(f"/proc/{pid}/oom_score_adj", "w") as handle:
            handle.write("1000")
    except OSError:
        return


def _pump(child: _Child, captures: dict, deadline: float) -> bool:
    """Copy both pipes into their captures until the child is gone and the pipes are closed
    (or the grace after its exit runs out). True when the inner deadline struck first.
    Every wait is bounded: a script that closes its output and sleeps still meets the
    deadline."""
    open_fds = set(captures)
    exited_at = None
    timed_out = False
    while open_fds or child.returncode is None:
        now = time.monotonic()
        _reap(child)
        if child.returncode is not None and not open_fds:
            break  # the usual end: the script exited and its output is drained
        if child.returncode is not None and exited_at is None:
            exited_at = now
        if exited_at is not None and now - exited_at > DRAIN_GRACE_S:
            _kill_everything_else()
            if not open_fds or now - exited_at > DRAIN_GRACE_S + REAP_WAIT_S:
                break
        if now > deadline and not timed_out:
            timed_out = True
            _kill_everything_else()
            exited_at = exited_at or now
        ready = select.select(list(open_fds), [], [], 0.05)[0] if open_fds else []
        if not open_fds:
            time.sleep(0.02)
        for fd in ready:
            data = os.read(fd, 65536)
            if data:
                captures[fd].feed(data)
            else:
                open_fds.discard(fd)
    _reap(child)
    for fd in captures:
        os.close(fd)
    return timed_out


def _reap(child: _Child) -> None:
    """As PID 1, collect every finished process (orphans included), noting the child's
    status when it is among them."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        # A stopped (traced) child is not finished, and waitstatus_to_exitcode would raise.
        if pid == child.pid and not os.WIFSTOPPED(status):
            child.returncode = os.waitstatus_to_exitcode(status)


def _kill_everything_else() -> None:
    """SIGKILL every process we may signal: the script, its children, and anything that
    called setsid to escape its process group. Spares ourselves (PID 1)."""
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        return


def _oom_kills() -> int | None:
    for path, key in (("/sys/fs/cgroup/memory/memory.oom_control", "oom_kill"),
                      ("/sys/fs/cgroup/memory.events", "oom_kill")):
        try:
            with open(path) as handle:
                for line in handle:
                    name, _, value = line.partition(" ")
                    if name == key:
                        return int(value)
        except (OSError, ValueError):
            continue
    return None


def _select_artifacts(caps: dict, inputs: dict[str, bytes], wanted: list[str]):
    """Regular files of the work dir (links never followed), within the caps, the files the
    contract asks for first: a script that also leaves thousands of scratch files must not
    push those out. What is left out is reported with the reason, so the contract check
    can say why; inputs that came back unchanged are named apart (they are not output)."""
    members, rejected, unchanged = [], [], []
    total = left_out = scanned = 0
    first = list(_wanted_entries(wanted))
    taken = {rel for rel, _, _ in first}
    for rel, entry, folder_note in _chain(first, _walk(WORK_DIR, "")):
        if entry is not None and not isinstance(entry, _PathEntry) and rel in taken:
            continue  # a wanted file, met again by the walk
        scanned += 1
        if scanned > MAX_SCANNED:
            left_out += 1
            continue
        reason, size = (folder_note, 0) if folder_note else _rejection(
            entry, rel, caps, inputs, len(members), total)
        if reason == "unchanged input":
            unchanged.append(_printable(rel))
        elif reason is None:
            total += size
            members.append((rel, entry.path))
        elif len(rejected) < MAX_REJECTED:
            rejected.append({"path": _printable(rel), "size": size, "reason": reason})
        else:
            left_out += 1
    return members, rejected, left_out, unchanged[:MAX_REJECTED]


def _chain(*iterables):
    for iterable in iterables:
        yield from iterable


class _PathEntry:
    """The parts of os.DirEntry that _rejection uses, for a path looked up by name."""

    def __init__(self, path: str, st: os.stat_result) -> None:
        self.path, self._st = path, st

    def stat(self, follow_symlinks: bool = True) -> os.stat_result:
        return self._st

    def is_symlink(self) -> bool:
        return (self._st.st_mode & 0o170000) == 0o120000

    def is_file(self, follow_symlinks: bool = True) -> bool:
        return (self._st.st_mode & 0o170000) == 0o100000


def _wanted_entries(wanted: list[str]):
    """The contract's paths that exist in the work dir, looked up directly and never
    through a link: a folder on the way that is a symbolic link (or anything but a real
    folder) leaves the path to the walk, which reports the link itself."""
    for raw in wanted:
        rel = os.path.normpath(raw)
        if rel.startswith(("/", "..")) or rel == ".":
            continue
        path, parts = WORK_DIR, rel.split("/")
        try:
            for part in parts[:-1]:
                path = os.path.join(path, part)
                if (os.lstat(path).st_mode & 0o170000) != 0o040000:
                    raise NotADirectoryError(path)
            path = os.path.join(path, parts[-1])
            st = os.lstat(path)
        except OSError:
            continue
        if (st.st_mode & 0o170000) != 0o040000:
            yield rel, _PathEntry(path, st), None


def _rejection(entry, rel: str, caps: dict, inputs: dict[str, bytes], count: int,
               total: int):
    size = entry.stat(follow_symlinks=False).st_size
    if not _valid_name(rel):
        return "name is not valid UTF-8 or too long for the transfer", size
    if entry.is_symlink():
        return "symbolic link (not followed)", 0
    if not entry.is_file(follow_symlinks=False):
        return "not a regular file", 0
    if not os.access(entry.path, os.R_OK):
        return "cannot be read (its permissions refuse it)", size
    # Size first: a script that grows an input to a terabyte (sparse) must not make us hash it.
    if rel in inputs and size == len(inputs[rel]) and _same_content(entry.path, inputs[rel]):
        return "unchanged input", size
    if count >= caps["artifact_max_files"]:
        return "too many files", size
    if size > caps["artifact_max_file_bytes"]:
        return "file too large", size
    if total + size > caps["artifact_max_total_bytes"]:
        return "total size cap", size
    return None, size


def _walk(root: str, prefix: str):
    """(rel, entry, None) for every entry under root, depth first, iteratively (no
    recursion limit to trip), never following links; a folder it will not or cannot enter
    comes as (rel + "/", None, why)."""
    stack = [(root, prefix, 0)]
    while stack:
        folder, rel_prefix, depth = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name, reverse=True)
        except OSError:
            if rel_prefix:
                yield rel_prefix, None, "folder cannot be read (its permissions refuse it)"
            continue
        for entry in entries:
            rel = f"{rel_prefix}{entry.name}"
            if not entry.is_dir(follow_symlinks=False):
                yield rel, entry, None
            elif depth >= MAX_DEPTH:
                yield rel + "/", None, "folder nested too deeply (not examined)"
            else:
                stack.append((entry.path, rel + "/", depth + 1))


def _valid_name(rel: str) -> bool:
    """UTF-8, and storable in a plain ustar header (100-byte name + 155-byte prefix split at
    a slash): anything else could not be transferred and would vanish silently."""
    try:
        encoded = rel.encode("utf-8")
    except UnicodeError:  # undecodable bytes arrive as surrogates
        return False
    return len(rel) <= MAX_NAME_CHARS and _ustar_split(encoded) is not None


def _ustar_split(name: bytes):
    """(prefix, name) fields for a ustar header, or None when the name cannot fit."""
    if len(name) <= 100:
        return b"", name
    for cut in range(min(len(name) - 1, 155), 0, -1):
        if name[cut] == 0x2F and len(name) - cut - 1 <= 100:
            return name[:cut], name[cut + 1 :]
    return None


def _printable(rel: str) -> str:
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")[:MAX_NAME_CHARS]


def _same_content(path: str, data: bytes) -> bool:
    view, offset = memoryview(data), 0
    with open(path, "rb", opener=_nofollow) as handle:
        while block := handle.read(1 << 20):
            if view[offset : offset + len(block)] != block:
                return False
            offset += len(block)
    return offset == len(data)


def _nofollow(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NOFOLLOW)


def _write_tar(stream, members) -> None:
    """A plain ustar archive: no pax or GNU extension headers, which the client refuses."""
    for rel, path in members:
        try:
            with open(path, "rb", opener=_nofollow) as handle:
                st = os.fstat(handle.fileno())
                stream.write(_ustar_header(rel, st.st_size, int(st.st_mtime)))
                left = st.st_size
                while left > 0:
                    block = handle.read(min(left, 1 << 20)) or b"\0" * min(left, 1 << 20)
                    stream.write(block)
                    left -= len(block)
                stream.write(b"\0" * (-st.st_size % 512))
        except OSError:
            continue
    stream.write(b"\0" * 1024)


def _ustar_header(rel: str, size: int, mtime: int) -> bytes:
    prefix, name = _ustar_split(rel.encode("utf-8"))
    header = bytearray(512)
    header[0 : len(name)] = name
    header[100:108] = b"0000644\0"
    header[108:116] = header[116:124] = b"0000000\0"
    header[124:136] = b"%011o\0" % size
    header[136:148] = b"%011o\0" % mtime
    header[148:156] = b" " * 8
    header[156:157] = b"0"
    header[257:265] = b"ustar\x0000"
    header[345 : 345 + len(prefix)] = prefix
    header[148:156] = b"%06o\0 " % sum(header)
    return bytes(header)


if __name__ == "__main__":
    sys.exit(main())
