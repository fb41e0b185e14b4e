"""Runs inside the sandbox container as its main process (PID 1, no docker-init).

It waits for one request on stdin, places the files in the work dir, runs the command with
bounded output capture, then reports on stdout and streams the artifacts back as a tar.
Docker's archive API cannot be trusted to write into a tmpfs or a read-only root (put_archive
is refused on the latter and may land underneath the former), so files travel over the attach
stream instead; that also lets a pre-started container wait here until it is used.

Wire format (all on the container's stdin/stdout, no TTY), at PROTOCOL_VERSION:
  request:  b"SELFCORRECT-REQ <version> <header_len> <data_len>\n" + header JSON + the input
            files' bytes back to back, in the order and sizes the header's "files" list gives
            (a batch: b"SELFCORRECT-BATCH <version> <header_len>\n" + header JSON)
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
spawn: libseccomp's bindings (Debian's python3-seccomp) are the one import that is not
built in, which a pooled container thus pays while it waits; importing _signal instead of
signal saves about 12 ms under gVisor. libseccomp builds the filter from syscall names
with its own per-arch tables (no number is typed in here), and importing it costs less
than the ctypes that a hand-assembled program needed to be installed
(benchmarks/sandbox_overhead.py measures both side by side). If the filter
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
import _struct
import errno
import os
import select
import sys
import time

# Typing is for mypy only: importing typing costs a pooled start under gVisor (mypy reads
# any name TYPE_CHECKING as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal  # the same names as _signal's, with stubs
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any, BinaryIO
else:
    import _signal as signal  # signal.py would import enum, functools, collections: 12 ms in gVisor

# The version of the protocol between the host (selfcorrect_action/sandbox/wire.py, which
# carries its own copy; a unit test holds the two equal) and this runner. It is in every
# request's first line, and on the image as the label org.selfcorrect.protocol, written at
# build time from this line: a prebuilt image is checked before its first container (issue
# 16, item 9). Bump it with any change either side of the wire would misread. 3: one number
# for both kinds of request (REQ was 2, BATCH 1). 4: the egress tunnel's NET frames
# between STARTED and RESULT, and its frames on stdin (egress_tunnel.py, issue 19).
PROTOCOL_VERSION = 5
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

# The syscall filter (see the module docstring), built by libseccomp from syscall names: it
# holds each arch's syscall table, so no number is typed in here (issue 15, item 4). The
# runner runs with -S, so Debian's python3-seccomp is not on sys.path by itself.
SECCOMP_PACKAGES = "/usr/lib/python3/dist-packages"
# Where runner.py and its helper modules are (egress_tunnel.py): -I leaves it off sys.path.
RUNNER_DIR = os.path.dirname(os.path.abspath(__file__))
# x86_64 and aarch64 only: any other arch or ABI (i386 by int 0x80, x32, whose numbers mean
# other syscalls) meets libseccomp's bad-arch action, which is EPERM here.
FILTER_ARCHES = ("X86_64", "AARCH64")
REFUSED_SYSCALLS = (
    "unshare", "setns", "mount", "umount2", "pivot_root",
    # The new mount API.
    "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "add_key", "request_key", "keyctl", "bpf", "ptrace", "perf_event_open",
    "process_vm_readv", "process_vm_writev", "userfaultfd",
    # io_uring: a second way into the kernel that seccomp cannot see into (its operations run
    # without syscalls); no script needs it, and it has been a rich source of kernel bugs.
    "io_uring_setup", "io_uring_enter", "io_uring_register",
)
# CLONE_NEWTIME (0x80) lies in clone()'s exit-signal byte, where it would name signal 128 or
# above, which no caller uses: refusing it costs nothing. The kernel reads only the low 32
# bits of clone()'s flags, so the high half need not be checked.
CLONE_NAMESPACE_FLAGS = (0x00000080 | 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000
                         | 0x10000000 | 0x20000000 | 0x40000000)

def main() -> int:
    _survive_signals()
    os.chdir(WORK_DIR)  # the script's working dir: posix_spawn has no cwd argument
    idle_timeout = float(sys.argv[1]) if len(sys.argv) > 1 else 600.0
    stdin = sys.stdin.buffer
    stdout = sys.stdout.buffer
    # While a pooled container waits for its request, so no execution waits for these.
    _seed_font_cache(os.environ.get("MPLCONFIGDIR"))
    filter_problem = _install_syscall_filter(syscall_filter)
    waiting = None
    warm_tests = None
    if sys.argv[2:3] == ["--boundary"] and filter_problem is None and os.getuid() == 0:
        waiting = _prestart_candidate()  # its interpreter starts before the request comes
        if "--warm-tests" in sys.argv[3:]:
            # And the tests', with pytest imported unless their runs have been plain.
            warm_tests = _Warm.start_tests(plain="--plain-tests" in sys.argv[3:])
    warm = None
    if sys.argv[2:3] == ["--warm"] and filter_problem is None and os.getuid() != 0:
        warm = _Warm.start(sys.argv[3])  # imports the task's libraries while we wait
    header, payload = _read_request(stdin, idle_timeout)
    if header is None:
        return 0
    if filter_problem is not None:
        # Before STARTED, on stderr: the client reports that the sandbox did not start the
        # script, quoting this. A script must never run without the filter.
        raise SystemExit(f"runner: {filter_problem}; the script was not started")
    if "boundary" in header:
        # The frozen tests and the candidate under two uids (see "The tests' boundary").
        return _boundary_main(header, payload, stdout, waiting, warm_tests)
    if warm_tests is not None:
        warm_tests.discard()
    if waiting is not None:
        _as_uid(CANDIDATE_UID, _kill_the_rest)
    if "batch" in header or os.getuid() == 0:
        # Root only in a batch container, which runs nothing as root (see "Batch mode").
        return _batch_main(header, stdin, stdout)
    inputs = _place_inputs(header, payload)
    if "MPLCONFIGDIR" in header.get("env", {}):
        _seed_font_cache(header["env"]["MPLCONFIGDIR"])
    if warm is not None and header.get("warm") is not False:
        warm.wait_ready(min(float(header.get("warm_wait_s", 0)), float(header["deadline_s"])))
    oom_before = _oom_kills()
    stdout.write(b"STARTED\n")
    stdout.flush()
    report = _run(header, stdout, warm)
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
    _send_result(stdout, header["nonce"], report, members)
    return 0


def _send_result(stdout: BinaryIO, nonce: str, report: dict, members: list) -> None:
    """The result line (with the client's nonce), the report, then the artifacts' tar."""
    body = _to_json(report).encode("utf-8", "replace")
    stdout.write(b"RESULT %s %d\n" % (nonce.encode(), len(body)) + body)
    stdout.flush()
    _write_tar(stdout, members)
    stdout.flush()


def _set_modes(modes: tuple) -> None:
    """Docker gives a tmpfs the mode of the image's folder, whatever its mode= option says:
    the root containers' modes are set here, by their owner, and checked."""
    for folder, mode in modes:
        os.chmod(folder, mode)
        st = os.stat(folder)
        if (st.st_uid, st.st_mode & 0o7777) != (0, mode):
            raise SystemExit(f"runner: {folder} is not root's with mode {mode:o}; nothing "
                             "was started")


def _survive_signals() -> None:
    """As PID 1 we would die of a SIGINT/SIGTERM/SIGHUP the script sends us (Python turns
    SIGINT into KeyboardInterrupt), losing its output. A no-op handler, not SIG_IGN: handlers
    reset to the default across exec, so the script still gets normal signal behaviour."""
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1,
                   signal.SIGUSR2, signal.SIGPIPE):
        signal.signal(number, _ignore)


def _ignore(number: int, frame: object) -> None:
    return None


class _JsonContext:
    """What the C scanner of the json package reads from its decoder: the defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float


def _from_json(text: str) -> Any:
    # The C scanner takes any object with the context's attributes (typeshed wants its own).
    value, end = _json.make_scanner(_JsonContext())(text, 0)  # type: ignore[arg-type]
    if text[end:].strip():
        raise ValueError("runner: trailing data after the request header")
    return value


def _to_json(value: Any) -> str:
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


def syscall_filter(seccomp: Any) -> Any:
    """The seccomp filter (a seccomp.SyscallFilter, not yet loaded): for x86_64 and aarch64,
    EPERM for the refused syscalls and for a clone() asking for a new namespace, ENOSYS for
    clone3() (its flags sit in a struct that a filter cannot read; glibc then falls back to
    clone(), so threads, fork and spawn keep working); EPERM for anything from another arch
    or ABI (i386 by int 0x80, x32), whose numbers mean other syscalls."""
    rules = _filter_for_arches(seccomp)
    eperm = seccomp.ERRNO(errno.EPERM)
    for name in REFUSED_SYSCALLS:
        rules.add_rule(eperm, name)  # an unknown name raises: none is dropped silently
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    # One rule per flag: libseccomp compares (arg & mask) == value, which cannot say "any of".
    for bit in range(32):
        if CLONE_NAMESPACE_FLAGS & 1 << bit:
            masked = seccomp.Arg(0, seccomp.MASKED_EQ, 1 << bit, 1 << bit)
            rules.add_rule(eperm, "clone", masked)
    return rules


def _filter_for_arches(seccomp: Any) -> Any:
    """An allow-all filter for FILTER_ARCHES alone: other arches get EPERM. No-new-privs is
    libseccomp's default (the kernel refuses a filter from an unprivileged process without it)."""
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    rules.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.ERRNO(errno.EPERM))
    rules.set_attr(seccomp.Attr.API_SYSRAWRC, 1)  # the kernel's errno, not ECANCELED, on failure
    for name in FILTER_ARCHES:
        arch = getattr(seccomp.Arch, name)
        if not rules.exist_arch(arch):  # the native one is there already
            rules.add_arch(arch)
    return rules


def _install_syscall_filter(build: Callable[[Any], Any]) -> str | None:
    """Install the filter build(seccomp) makes on this process, for everything it starts from
    now on (filters are inherited across fork and exec and cannot be removed). None once it
    is in place, else why not. It filters the calling thread only, which is the one (the
    only one) that spawns the script."""
    try:
        if SECCOMP_PACKAGES not in sys.path:
            sys.path.append(SECCOMP_PACKAGES)
        import seccomp  # the runner's only import that is not built in (see the docstring)

        rules = build(seccomp)
    except (ImportError, RuntimeError, AttributeError, ValueError) as exc:
        return f"cannot install the syscall filter: {type(exc).__name__}: {exc}"
    try:
        rules.load()
    except RuntimeError as exc:  # the bindings' only error: "Library error (errno = -22)"
        number = str(exc).rpartition("errno = ")[2].rstrip(")").lstrip("-")
        if not number.isdigit():
            return f"cannot install the syscall filter: seccomp_load failed: {exc}"
        return _filter_failure("seccomp_load", int(number))
    return None


def _filter_failure(call: str, number: int) -> str:
    name = errno.errorcode.get(number, str(number))
    return f"cannot install the syscall filter: {call} failed with {name} ({os.strerror(number)})"


def _read_request(stdin: BinaryIO, idle_timeout: float) -> Any:
    ready, _, _ = select.select([stdin], [], [], idle_timeout)
    if not ready:
        return None, b""
    line = stdin.readline(256)
    parts = line.split()
    magic, version = [*parts, b"", b""][:2]
    if magic in (b"SELFCORRECT-REQ", b"SELFCORRECT-BATCH") and version != b"%d" % PROTOCOL_VERSION:
        # Before STARTED, on stderr: the client quotes it as the reason nothing ran.
        raise SystemExit(f"runner: the request speaks protocol {version.decode('ascii', 'replace')}"
                         f", this image's runner speaks {PROTOCOL_VERSION}; use the sandbox "
                         "image of the same selfcorrect release")
    if len(parts) == 3 and parts[0] == b"SELFCORRECT-BATCH":
        return {"batch": _from_json(_read_exact(stdin, int(parts[2])).decode("utf-8"))}, b""
    if len(parts) != 4 or parts[0] != b"SELFCORRECT-REQ":
        return None, b""
    header = _from_json(_read_exact(stdin, int(parts[2])).decode("utf-8"))
    return header, _read_exact(stdin, int(parts[3]))


def _read_exact(stream: BinaryIO, size: int) -> bytes:
    chunks, remaining = [], size
    while remaining:
        chunk = stream.read(remaining)
        if not chunk:
            raise SystemExit("runner: request ended early")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _place_inputs(header: dict, payload: bytes, root: str = WORK_DIR,
                  write: bool = True) -> dict[str, bytes]:
    """Write the inputs (sent by our client, still checked) and keep their bytes, so
    unchanged inputs are not sent back as artifacts."""
    placed, offset = {}, 0
    for item in header.get("files", []):
        data = payload[offset : offset + item["size"]]
        offset += item["size"]
        name = os.path.normpath(item["path"])
        if name.startswith(("/", "..")):
            continue
        if not write:
            placed[name] = data
            continue
        target = os.path.join(root, name)
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


def _run(header: dict, stdout: BinaryIO, warm: _Warm | None = None) -> dict:
    caps = header["caps"]
    env = dict(os.environ)
    env.update(header.get("env", {}))
    extra: dict = {}
    tunnel = _tunnel(header, stdout, extra, env)
    deadline = time.monotonic() + float(header["deadline_s"])
    started = time.monotonic()
    start: dict = {"start": "cold", "start_note": None, "preloaded": [], "warm_rss_kb": None}
    if warm is not None:
        start["preloaded"] = warm.modules
    try:
        spawned = warm.hand_over(header, env, start) if warm is not None else None
        child, out_fd, err_fd = spawned or _spawn(header["argv"], env)
    except (OSError, ValueError) as exc:
        if tunnel is not None:
            tunnel.close()
        return {"exit_code": 127, "signal": None, "duration_ms": 0, "inner_timeout": False,
                "stdout": _Capture(0, 0).as_dict(),
                "stderr": {"text": f"cannot start {header['argv'][0]}: {exc}\n",
                           "total_bytes": 0, "truncated": False}, **start}
    out = _Capture(caps["stream_head_bytes"], caps["stream_tail_bytes"])
    err = _Capture(caps["stream_head_bytes"], caps["stream_tail_bytes"])
    inner_timeout = _pump(child, {out_fd: out, err_fd: err}, deadline, extra=extra,
                          writers=tunnel.writers if tunnel is not None else None)
    if tunnel is not None:
        tunnel.close()
    duration_ms = int((time.monotonic() - started) * 1000)
    code = child.returncode if child.returncode is not None else -signal.SIGKILL
    return {
        "exit_code": code if code >= 0 else None,
        "signal": -code if code < 0 else None,
        "duration_ms": duration_ms,
        "inner_timeout": inner_timeout,
        "stdout": out.as_dict(),
        "stderr": err.as_dict(),
        **start,
        **({"direct": _read_watch()} if tunnel is not None else {}),
    }


# Where netwatch.py (in every interpreter through site) notes the script's attempts to reach
# the network around the proxy; made only for a run with network, read after the script.
# The script can write it as well: only its own report, read as untrusted lines, bounded.
WATCH_FILE = "/tmp/.selfcorrect-netwatch"
WATCH_MAX_BYTES = 16384
WATCH_MAX_RECORDS = 20
WATCH_KINDS = ("connect", "dns", "udp")


def _start_watch() -> None:
    try:
        fd = os.open(WATCH_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o622)
    except OSError:
        return  # no file, no records: the run goes on without them
    try:
        os.fchmod(fd, 0o622)  # every uid of the run may append (the umask took that away)
    finally:
        os.close(fd)


def _read_watch() -> list[dict]:
    """The attempts netwatch.py noted: each host and port once, at most WATCH_MAX_RECORDS."""
    try:
        fd = os.open(WATCH_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return []
    try:
        if os.fstat(fd).st_mode & 0o170000 != 0o100000:  # a FIFO or device put in its place
            return []
        data = os.read(fd, WATCH_MAX_BYTES)
    finally:
        os.close(fd)
    found: list[dict] = []
    seen: set = set()
    for line in data.decode("utf-8", "replace").splitlines():
        parts = line.split("\t", 2)
        if (len(parts) != 3 or parts[0] not in WATCH_KINDS or not parts[1].isdigit()
                or len(parts[1]) > 5 or not parts[2]):
            continue
        key = (parts[2][:253], int(parts[1]) if int(parts[1]) < 65536 else 0)
        if key not in seen:
            seen.add(key)
            found.append({"kind": parts[0], "port": key[1], "host": key[0]})
        if len(found) >= WATCH_MAX_RECORDS:
            break
    return found


def _tunnel(header: dict, stdout: BinaryIO, watch: dict, env: dict) -> Any:
    """The egress tunnel (sandbox/egress_tunnel.py) when the request asks for the network,
    its proxy variables put in the script's environment; None otherwise. Imported only
    then: a run without network pays nothing for it."""
    if not header.get("egress"):
        return None
    if RUNNER_DIR not in sys.path:
        sys.path.append(RUNNER_DIR)
    if TYPE_CHECKING:
        from sandbox import egress_tunnel
    else:
        import egress_tunnel

    tunnel = egress_tunnel.Tunnel(stdout, header["nonce"], watch)
    env.update(tunnel.environment())
    _start_watch()
    return tunnel


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


# What the interpreter reads once, at start (or a preloaded library reads at import): a
# request that sets one of these gets a cold interpreter, which reads its own value.
WARM_UNSAFE_ENV = ("PYTHON", "MPL", "MATPLOTLIB", "OMP_", "OPENBLAS", "MKL_", "NUMEXPR",
                   "NUMBA", "LC_", "LANG", "TZ", "PANDAS", "SCIPY", "LD_")
WARM_SCRIPT = "/opt/selfcorrect/warm.py"
# The frozen tests' launcher and its interpreter flags (evaluation/junit.py builds the argv).
TESTS_FLAGS = ["-I", "-S", "-B"]
TESTS_LAUNCHER = "/opt/selfcorrect/boundary/run_tests.py"


class _Warm:
    """A warm interpreter (sandbox/warm.py) waiting for the script: it imports the task's
    libraries while the container waits, then becomes the script itself. Spawned exactly as
    _spawn spawns a cold script, plus two pipes: one byte on `ready` once the imports are
    done, the request on `request`. `hand_over` gives it the script, or returns None after
    ending it (the caller then starts the script cold) and says why in `start`."""

    def __init__(self, child: _Child, out_fd: int, err_fd: int, request_fd: int,
                 ready_fd: int, modules: list[str], control: Any = None) -> None:
        self.child, self.out_fd, self.err_fd = child, out_fd, err_fd
        self.request_fd, self.ready_fd, self.modules = request_fd, ready_fd, modules
        self.said: bytes | None = None
        self.control = control  # the frozen tests': our end of their control socket

    @classmethod
    def start_tests(cls, *, plain: bool = False) -> _Warm | None:
        """The frozen tests' interpreter in a boundary container, started as their uid with
        their launcher's flags and descriptors (as _boundary_main starts it cold, without
        its folder: that is laid out when the request comes), with pytest and the
        boundary's plugin imported ("@boundary" in sandbox/warm.py), or, when the client
        expects tests that need no pytest, only the boundary's own modules
        ("@boundary-plain"): importing pytest is most of a plain run's cost."""
        import _socket

        request_read, request_write = os.pipe()
        ready_read, ready_write = os.pipe()
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        runner_end, tests_end = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
        env = _uid_env(dict(os.environ), TESTS_DIR, TESTS_TMP)
        # Its font cache folder is made with the tests' folder, at the request.
        env.pop("MPLCONFIGDIR")
        argv = ["python3", *TESTS_FLAGS, WARM_SCRIPT, "4", "5",
                "@boundary-plain" if plain else "@boundary"]
        try:
            pid = _spawn_as(TESTS_UID, argv, env, SHARED_DIR,
                            {1: out_write, 2: err_write, CONTROL_FD: tests_end.fileno(),
                             4: request_read, 5: ready_write})
        except (OSError, SystemExit):
            for fd in (request_write, ready_read, out_read, err_read):
                os.close(fd)
            runner_end.close()
            return None
        finally:
            for fd in (request_read, ready_write, out_write, err_write):
                os.close(fd)
            tests_end.close()
        return cls(_Child(pid), out_read, err_read, request_write, ready_read,
                   [] if plain else ["pytest"], control=runner_end)

    @classmethod
    def start(cls, modules: str) -> _Warm | None:
        names = [name for name in modules.split(",") if name]
        request_read, request_write = os.pipe()
        ready_read, ready_write = os.pipe()
        try:
            # Inheritable only for this spawn: the script it becomes closes both before it
            # runs a line, and no other process ever gets them.
            os.set_inheritable(request_read, True)
            os.set_inheritable(ready_write, True)
            child, out_fd, err_fd = _spawn(
                ["python3", WARM_SCRIPT, str(request_read), str(ready_write), ",".join(names)],
                dict(os.environ))
        except OSError:
            for fd in (request_read, request_write, ready_read, ready_write):
                os.close(fd)
            return None
        os.close(request_read)
        os.close(ready_write)
        return cls(child, out_fd, err_fd, request_write, ready_read, names)

    def hand_over(self, header: dict, env: dict, start: dict, cwd: str = WORK_DIR,
                  refusal: str | None = None) -> Any:
        refusal = refusal or self._refusal(header)
        if refusal is None:
            start["warm_rss_kb"] = _rss_kb(self.child.pid)
            body = _to_json({"argv": header["argv"], "env": env, "cwd": cwd})
            try:
                data = body.encode("utf-8", "surrogateescape")
                while data:
                    data = data[os.write(self.request_fd, data):]
            except (OSError, UnicodeError):
                refusal = "the warm interpreter could not take the request"
            else:
                os.close(self.request_fd)
                os.close(self.ready_fd)
                start["start"] = "warm"
                return self.child, self.out_fd, self.err_fd
        start["start_note"] = refusal
        self.discard()
        return None

    def _refusal(self, header: dict) -> str | None:
        """Why this request must start cold, or None."""
        if header.get("warm") is False:
            return "the contract asks for a cold interpreter (warm: false)"
        argv = header["argv"]
        if self.control is not None:
            if argv[:len(TESTS_FLAGS) + 2] != ["python3", *TESTS_FLAGS, TESTS_LAUNCHER]:
                return "the command is not the boundary's test launcher"
        else:
            script = argv[2:3] if argv[1:2] == ["--"] else argv[1:2]
            if argv[0] != "python3" or not script or script[0].startswith("-"):
                return "the command is not `python3 SCRIPT`"
        unsafe = sorted(key for key in header.get("env", {}) if key.startswith(WARM_UNSAFE_ENV))
        if unsafe:
            return f"the request sets {unsafe[0]}, which is read when an interpreter starts"
        said = self.wait_ready(0)
        if said is None:
            return ("the warm interpreter was still importing "
                    f"{', '.join(self.modules)} when the request came")
        if said == b"N":
            return ("importing the preloaded modules printed output, which the script's "
                    "own imports would print")
        if said != b"R":
            return "the warm interpreter ended while importing (out of memory?)"
        return None

    def wait_ready(self, timeout_s: float) -> bytes | None:
        """The warm interpreter's word once its imports are done (b"R" ready, b"N" printed
        something, b"" died), waiting up to `timeout_s` for it; None if it has not come.
        Waiting costs at most what the script's own imports of the same modules would."""
        if self.said is None and select.select([self.ready_fd], [], [], timeout_s)[0]:
            self.said = os.read(self.ready_fd, 1)
        return self.said

    def discard(self) -> None:
        """End the warm interpreter: the script starts cold in a process of its own."""
        try:  # noqa: SIM105 - contextlib is one more import on a cold start's path
            os.kill(self.child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if self.control is not None:
            self.control.close()
        for fd in (self.out_fd, self.err_fd, self.request_fd, self.ready_fd):
            try:
                os.close(fd)
            except OSError:
                continue
        try:  # noqa: SIM105
            os.waitpid(self.child.pid, 0)
        except ChildProcessError:
            pass


def _rss_kb(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


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


def _pump(child: _Child, captures: dict, deadline: float,
          kill: Callable[[], Any] | None = None, poll_s: float = 0.02,
          extra: Any = None, writers: Callable[[], dict] | None = None) -> bool:
    """Copy both pipes into their captures until the child is gone and the pipes are closed
    (or the grace after its exit runs out). True when the inner deadline struck first.
    Every wait is bounded: a script that closes its output and sleeps still meets the
    deadline. `kill` ends everything the script started, and `poll_s` is how long to wait
    for its exit status once its output has closed (batch mode passes its own of both).
    `extra` maps more descriptors to a handler called when one is readable (False: stop
    watching it); they never hold the loop open (the boundary's control socket, the egress
    tunnel's sockets). `writers()` maps descriptors waiting to be written to their handler
    (the tunnel's bytes for a script that has not read them yet)."""
    kill = kill or _kill_everything_else
    extra = extra if extra is not None else {}
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
            kill()
            if not open_fds or now - exited_at > DRAIN_GRACE_S + REAP_WAIT_S:
                break
        if now > deadline and not timed_out:
            timed_out = True
            kill()
            exited_at = exited_at or now
        watched = [*open_fds, *extra]
        wanted = writers() if writers is not None else {}
        if watched or wanted:
            ready, writable, _ = select.select(watched, list(wanted), [],
                                               0.05 if open_fds else poll_s)
        else:
            ready, writable = [], []
            time.sleep(poll_s)
        for fd in writable:
            wanted[fd](fd)
        for fd in ready:
            if fd in extra:
                if not extra[fd](fd):
                    extra.pop(fd, None)
                continue
            if fd not in open_fds:
                continue  # a handler above closed it (and the number may be reused)
            data = os.read(fd, 65536)
            if data:
                captures[fd].feed(data)
            else:
                open_fds.discard(fd)
    _reap(child)
    for fd in captures:
        os.close(fd)
    return timed_out


# Processes besides the child whose exit status someone asked to keep (the boundary's
# candidate), and the statuses kept.
_WATCHED: set[int] = set()
_EXITS: dict[int, int] = {}


def _reap(child: _Child) -> None:
    """As PID 1, collect every finished process (orphans included), noting the child's
    status when it is among them (and a watched process's)."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        # A stopped (traced) child is not finished, and waitstatus_to_exitcode would raise.
        if os.WIFSTOPPED(status):
            continue
        if pid == child.pid:
            child.returncode = os.waitstatus_to_exitcode(status)
        elif pid in _WATCHED:
            _EXITS[pid] = os.waitstatus_to_exitcode(status)


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


def _select_artifacts(caps: dict, inputs: dict[str, bytes], wanted: list[str],
                      root: str = WORK_DIR) -> Any:
    """Regular files of the work dir (links never followed), within the caps, the files the
    contract asks for first: a script that also leaves thousands of scratch files must not
    push those out. What is left out is reported with the reason, so the contract check
    can say why; inputs that came back unchanged are named apart (they are not output)."""
    members: list[Any] = []
    rejected: list[Any] = []
    unchanged: list[str] = []
    total = left_out = scanned = 0
    first = list(_wanted_entries(wanted, root))
    taken = {rel for rel, _, _ in first}
    for rel, entry, folder_note in _chain(first, _walk(root, "")):
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


def _chain(*iterables: Iterable[Any]) -> Iterator[Any]:
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


def _wanted_entries(wanted: list[str], root: str = WORK_DIR) -> Iterator[Any]:
    """The contract's paths that exist in the work dir, looked up directly and never
    through a link: a folder on the way that is a symbolic link (or anything but a real
    folder) leaves the path to the walk, which reports the link itself."""
    for raw in wanted:
        rel = os.path.normpath(raw)
        if rel.startswith(("/", "..")) or rel == ".":
            continue
        path, parts = root, rel.split("/")
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


def _rejection(entry: Any, rel: str, caps: dict, inputs: dict[str, bytes], count: int,
               total: int) -> tuple[str | None, Any]:
    size = entry.stat(follow_symlinks=False).st_size
    if not _valid_name(rel):
        return "name is not valid UTF-8 or too long for the transfer", size
    if not rel.isprintable():
        # A newline in a name would start a line of its own wherever the name is shown: in
        # a report, or in the judge's prompt as a heading of ours.
        return "name holds a control character (a newline, a tab...)", size
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


def _walk(root: str, prefix: str) -> Iterator[Any]:
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


def _ustar_split(name: bytes) -> tuple[bytes, bytes] | None:
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


def _write_tar(stream: BinaryIO, members: list) -> None:
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
    # Only members whose names fit get here (_rejection refused the others).
    prefix, name = _ustar_split(rel.encode("utf-8"))  # type: ignore[misc]
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


# ---- Batch mode ---------------------------------------------------------------------------
#
# One container runs a batch of items (each an execution request of its own) one after
# another: the benchmark's way of paying for one container per batch instead of one per
# candidate. The container is a different one (config built by the client's batch module):
# the runner starts as root with CAP_SETUID and CAP_SETGID only, /work is a sticky 1733 tmpfs
# and /tmp a 0700 one that only root can enter. Root runs no item: every item runs under a
# uid of its own (uid_base + index, within BATCH_UID_MIN..BATCH_UID_MAX, baked in here), in a
# fresh 0700 folder /work/i<index>, with rlimits set before it starts, its processes all
# killed after it (kill(-1) from that uid reaches exactly them), its folder and its /dev/shm
# files removed, and anything it left at the top of /work removed before the next item.
#
#   runner (PID 1, root)        reads the items, relays the results; forks nothing after the
#    |                          first item (its memory holds every item's data)
#    +- zygote (root)           a fresh python3 -I, spawned before any item was read; pytest
#        |                      imported and run once, so an item that runs pytest starts
#        |                      warm; it never sees an item's data, which goes from the
#        |                      runner to the supervisor through a root-only file
#        +- supervisor i (root) a fork of the zygote: reads item i's request, forks the item,
#            |                  pumps its output, kills, collects, reports into a root-only
#            |                  file, exits
#            +- item i (uid)    setgroups([]), setresgid, setresuid, rlimits, its folder and
#                               files; then pytest in this process, or exec of the argv
#
# Helpers that act on an item's files or processes fork from the supervisor and drop to its
# uid first (root here may signal and read only what is root's own). System V IPC and POSIX
# message queues outlive their makers, a channel from one item to the next: the zygote adds a
# second syscall filter that refuses creating them. Wire format (after the runner's stdin
# line "SELFCORRECT-BATCH 1 <header_len>" and the header):
#   runner:  b"STARTED\n"                                     once the zygote is warm
#   client:  b"ITEM <header_len> <data_len>\n" + JSON + data  one item, after each result
#   runner:  b"ITEM-RESULT <nonce> <index> <json_len> <tar_len>\n" + JSON + ustar bytes
#   runner:  b"BATCH-DONE <nonce>\n"                          after the last item

BATCH_UID_MIN = 20000
BATCH_UID_MAX = 59999
BATCH_DIR = "/tmp/selfcorrect-batch"
PYTEST_ARGV = ["python3", "-I", "-m", "pytest"]
# A batch item's tests that need nothing of pytest's: `python3 -I -m pytest PLAIN_FLAG ...`
# (selfcorrect_action/sandbox/models.py spells it the same).
PLAIN_FLAG = "--selfcorrect-plain"
BOUNDARY_DIR = "/opt/selfcorrect/boundary"
PYTEST_MAIN = "/usr/lib/python3/dist-packages/pytest/__main__.py"
# A cold pytest after a plain run that failed, which fails the run should pytest's pass.
BATCH_PYTEST = f"{BOUNDARY_DIR}/batch_pytest.py"
FIRST_FAILURE_ENV = "SELFCORRECT_FIRST_FAILURE"
ZYGOTE_START_S = 120.0
# An item that ran pytest where the zygote had not loaded it says so on NOTE_FD; its
# supervisor then exits NEEDED_PYTEST, and the zygote loads pytest for the items after it.
NOTE_FD = 3
NEEDED_PYTEST_NOTE = b"P"
NEEDED_PYTEST = 4
BATCH_IDLE_S = 120.0
ITEM_GRACE_S = 10.0
MAX_REPORT_JSON = 4 * 1024 * 1024
BATCH_REFUSED_SYSCALLS = ("shmget", "semget", "msgget", "mq_open")


def batch_syscall_filter(seccomp: Any) -> Any:
    """The second filter batch items run under: EPERM for creating System V IPC objects and
    POSIX message queues. Other arches and x32 are refused by the first filter already."""
    rules = _filter_for_arches(seccomp)
    for name in BATCH_REFUSED_SYSCALLS:
        rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
    return rules

class _Lines:
    """Lines from a pipe, each wait bounded."""

    def __init__(self, fd: int) -> None:
        self.fd, self.buffer = fd, b""

    def read(self, deadline: float, on_wait: Callable[[], Any] | None = None) -> Any:
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if not select.select([self.fd], [], [], min(left, 0.2))[0]:
                if on_wait is not None:
                    on_wait()
                continue
            chunk = os.read(self.fd, 4096)
            if not chunk:
                return b""
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line


def _batch_main(header: dict, stdin: BinaryIO, stdout: BinaryIO) -> int:
    batch = header.get("batch")
    if batch is None:
        raise SystemExit("runner: a single execution never runs as root; the script was not "
                         "started")
    if os.getuid() != 0:
        raise SystemExit("runner: batch mode needs its own container (root with CAP_SETUID "
                         "and CAP_SETGID only); nothing was started")
    count, uid_base = int(batch["count"]), int(batch["uid_base"])
    if not (count > 0 and uid_base >= BATCH_UID_MIN and uid_base + count - 1 <= BATCH_UID_MAX):
        raise SystemExit(f"runner: batch uids {uid_base}+{count} are outside "
                         f"{BATCH_UID_MIN}..{BATCH_UID_MAX}; nothing was started")
    _set_modes(((WORK_DIR, 0o1733), ("/tmp", 0o700)))
    os.makedirs(BATCH_DIR, mode=0o700, exist_ok=True)
    nonce = batch["nonce"].encode()
    zygote_pid, to_zygote, from_zygote = _start_zygote(batch)
    try:
        ready = from_zygote.read(time.monotonic() + ZYGOTE_START_S, _reap_orphans)
        if ready != b"READY":
            raise SystemExit(f"runner: the batch's interpreter did not start ({ready!r})")
        stdout.write(b"STARTED\n")
        stdout.flush()
        for index in range(count):
            item = _read_item(stdin)
            if item is None:
                break
            report, tar = _run_batch_item(to_zygote, from_zygote, index, uid_base + index, *item)
            body = _to_json(report).encode("utf-8", "replace")
            stdout.write(b"ITEM-RESULT %s %d %d %d\n" % (nonce, index, len(body), len(tar))
                         + body + tar)
            stdout.flush()
        stdout.write(b"BATCH-DONE %s\n" % nonce)
        stdout.flush()
    finally:
        _quietly(os.kill, zygote_pid, signal.SIGKILL)
        _reap_orphans()
    return 0


def _start_zygote(batch: dict) -> Any:
    to_read, to_write = os.pipe()
    from_read, from_write = os.pipe()
    program = _find_program("python3", os.environ.get("PATH", os.defpath))
    # From the module, whose bytecode the image compiled: as a script it would be compiled
    # again in every batch container.
    boot = (f"import sys; sys.path.append({os.path.dirname(os.path.abspath(__file__))!r}); "
            "import runner; sys.exit(runner.start())")
    pid = os.posix_spawn(
        program, [program, "-I", "-c", boot, "--zygote"], dict(os.environ),
        file_actions=[(os.POSIX_SPAWN_DUP2, to_read, 0), (os.POSIX_SPAWN_DUP2, from_write, 1)],
        setsigdef=RESTORED_SIGNALS,
    )
    os.close(to_read)
    os.close(from_write)
    settings = {"preload": batch.get("preload", ""), "warm_args": batch.get("warm_args", []),
                "modules": batch.get("modules", {})}
    os.write(to_write, _to_json(settings).encode() + b"\n")
    return pid, to_write, _Lines(from_read)


def _read_item(stdin: BinaryIO) -> Any:
    # The client sends items ahead: the next one may already sit in stdin's buffer, where
    # select() cannot see it. A non-blocking peek looks there without waiting.
    fd = stdin.fileno()
    os.set_blocking(fd, False)
    try:
        buffered = stdin.peek(1)  # type: ignore[attr-defined]
    finally:
        os.set_blocking(fd, True)
    if not buffered and not select.select([stdin], [], [], BATCH_IDLE_S)[0]:
        return None
    parts = stdin.readline(256).split()
    if len(parts) != 3 or parts[0] != b"ITEM":
        return None
    header = _from_json(_read_exact(stdin, int(parts[1])).decode("utf-8"))
    return header, _read_exact(stdin, int(parts[2]))


def _run_batch_item(to_zygote: int, from_zygote: _Lines, index: int, uid: int, header: dict,
                    data: bytes) -> Any:
    request, reply = f"{BATCH_DIR}/{index}.req", f"{BATCH_DIR}/{index}.rep"
    with open(request, "wb", opener=_private) as handle:
        handle.write(_to_json(header).encode("utf-8") + b"\n" + data)
    started = time.monotonic()
    deadline = started + float(header["deadline_s"]) + ITEM_GRACE_S
    os.write(to_zygote, b"RUN %d %d\n" % (index, uid))
    supervisor, done = None, None
    while done is None:
        line = from_zygote.read(deadline, _reap_orphans)
        if not line:
            break
        kind, _, rest = line.partition(b" ")
        if kind == b"FORK":
            supervisor = int(rest.split()[1])
        elif kind == b"DONE":
            done = line
    if done is None:
        # Late or gone: end the supervisor and everything of the item's uid, then say so.
        if supervisor is not None:
            _quietly(os.kill, supervisor, signal.SIGKILL)
        _kill_uid(uid)
        from_zygote.read(time.monotonic() + 5.0, _reap_orphans)
    _reap_orphans()  # the item's processes, killed and reparented to us
    report, tar = _read_report(reply)
    for leftover in (request, reply):
        _quietly(os.unlink, leftover)
    _sweep_work()
    if report is None:
        report = {"exit_code": None, "signal": None, "inner_timeout": False,
                  "duration_ms": int((time.monotonic() - started) * 1000),
                  "stdout": _Capture(0, 0).as_dict(), "stderr": _Capture(0, 0).as_dict(),
                  "broken": "the batch item's supervisor did not report (it was late, or "
                  "it died)"}
    return report, tar


def _quietly(call: Callable[..., Any], *args: Any) -> None:
    """call(*args), ignoring the OSError it raises when its process or file is gone already
    (contextlib.suppress without importing contextlib)."""
    try:
        call(*args)
    except OSError:
        return


def _private(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NOFOLLOW, 0o600)


def _read_report(path: str) -> Any:
    try:
        with open(path, "rb") as handle:
            sizes = handle.readline(64).split()
            if len(sizes) != 2 or int(sizes[0]) > MAX_REPORT_JSON:
                return None, b""
            report = _from_json(handle.read(int(sizes[0])).decode("utf-8", "replace"))
            return report, handle.read(int(sizes[1]))
    except (OSError, ValueError):
        return None, b""


def _reap_orphans() -> None:
    """PID 1's duty: collect every finished process reparented to us."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _sweep_work() -> None:
    """Remove whatever an item left at the top of /work: root owns the sticky folder, so it
    may unlink any entry there; a folder is emptied by a helper running as its owner."""
    try:
        entries = list(os.scandir(WORK_DIR))
    except OSError:
        return
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
            if (st.st_mode & 0o170000) == 0o040000:
                if BATCH_UID_MIN <= st.st_uid <= BATCH_UID_MAX:
                    _as_uid(st.st_uid,
                            lambda path=entry.path: _remove_tree(path))  # type: ignore[misc]
                os.rmdir(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:
            continue


def _as_uid(uid: int, work: Callable[[], Any]) -> int:
    """Run `work` in a fork that has become `uid` for good; its exit status."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            _become(uid)
            work()
            code = 0
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    while True:
        try:
            return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        except ChildProcessError:
            return -1
        except InterruptedError:
            continue


def _become(uid: int) -> None:
    """Drop to `uid` (and gid `uid`, no supplementary groups) for good. Changing every uid
    away from 0 clears the capabilities; checked, not assumed."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (uid, uid, uid):
        raise OSError("runner: the uid did not change")
    with open("/proc/self/status") as handle:
        for line in handle:
            name, _, value = line.partition(":")
            if name in ("CapEff", "CapPrm") and int(value.strip(), 16) != 0:
                raise OSError(f"runner: {name} is not empty after the uid change")


def _kill_uid(uid: int) -> None:
    """SIGKILL every process of `uid`, from a helper of that uid."""
    _as_uid(uid, lambda: _kill_all_mine(uid))


def _kill_all_mine(uid: int) -> None:
    """As `uid`: SIGKILL until no process of ours but this one is alive (zombies aside);
    kill(-1) reaches exactly the processes this uid may signal."""
    end = time.monotonic() + REAP_WAIT_S
    me = os.getpid()
    while time.monotonic() < end:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            return
        if not _live_pids(uid, me):
            return
        time.sleep(0.002)


def _live_pids(uid: int, me: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/status") as handle:
                fields = dict(line.split(":", 1) for line in handle if ":" in line)
        except OSError:
            continue
        if fields.get("Uid", "").split()[:1] == [str(uid)] and not fields.get(
                "State", "").strip().startswith(("Z", "X")):
            found.append(int(name))
    return found


def _remove_tree(path: str) -> None:
    """Everything under `path` (links never followed), its folders made enterable first:
    an item may have left one mode 000."""
    folders, stack = [], [path]
    while stack:
        folder = stack.pop()
        _quietly(os.chmod, folder, 0o700)
        folders.append(folder)
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    os.unlink(entry.path)
            except OSError:
                continue
    for folder in reversed(folders):
        try:
            os.rmdir(folder)
        except OSError:
            continue


def _remove_shm(uid: int) -> None:
    """/dev/shm is shared by every item (mode 1777): remove what this uid made there."""
    try:
        entries = list(os.scandir("/dev/shm"))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.stat(follow_symlinks=False).st_uid != uid:
                continue
            if entry.is_dir(follow_symlinks=False):
                _remove_tree(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:
            continue


# The zygote: `python3 -I -c <import runner, start> --zygote`, fd 0 and 1 its control pipe
# from and to the runner, fd 2 the runner's stderr.

def _zygote_main() -> int:
    control = os.dup(1)
    quiet = os.open(os.devnull, os.O_RDWR)
    os.dup2(quiet, 1)  # what warming pytest prints goes nowhere
    problem = _install_syscall_filter(batch_syscall_filter)
    if problem is not None:
        os.write(control, f"FAIL {problem}\n".encode())
        return 1
    commands = _Lines(0)
    settings = _from_json((commands.read(time.monotonic() + ZYGOTE_START_S) or b"{}").decode())
    import resource  # noqa: F401  # for every item's rlimits, imported once here
    import tempfile  # noqa: F401

    # "pytest": imported now. "plain": the plain runner's modules now, pytest once an item's
    # plain run did not pass (a batch of passing candidates never pays for it).
    preload, warm_args = settings.get("preload"), list(settings.get("warm_args", []))
    if preload == "pytest":
        _warm_pytest(warm_args)
    elif preload == "plain":
        _warm_plain()
    pytest_loaded = preload == "pytest"
    _preload_modules(settings.get("modules", {}))
    sys.stdout.flush()
    os.write(control, b"READY\n")
    while True:
        line = commands.read(time.monotonic() + 24 * 3600.0)
        parts = (line or b"").split()
        if len(parts) != 3 or parts[0] != b"RUN":
            return 0
        index, uid = int(parts[1]), int(parts[2])
        pid = os.fork()
        if pid == 0:
            os.close(control)
            _supervise(index, uid, pytest_loaded)
        os.write(control, b"FORK %d %d\n" % (index, pid))
        while True:
            try:
                status = os.waitpid(pid, 0)[1]
                break
            except InterruptedError:
                continue
        code = os.waitstatus_to_exitcode(status)
        if code == NEEDED_PYTEST and preload == "plain" and not pytest_loaded:
            _warm_pytest(warm_args)  # before the next item: it starts from a warm pytest
            pytest_loaded = True
        os.write(control, b"DONE %d %d\n" % (index, code))


def _warm_pytest(args: list[str]) -> None:
    """Import pytest and run it once on a trivial test with the items' options, so that an
    item starts with every plugin module loaded; then undo what the run left behind."""
    path, modules = list(sys.path), set(sys.modules)
    folder = os.path.join(BATCH_DIR, "warm")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    with open(os.path.join(folder, "test_selfcorrect_warm.py"), "w") as handle:
        handle.write("def test_warm():\n    assert [1] == [1]\n")
    here = os.getcwd()
    os.chdir(folder)
    try:
        import pytest

        pytest.main([*args, "test_selfcorrect_warm.py"])
    except BaseException:
        pass
    finally:
        os.chdir(here)
        sys.path[:] = path
        for name in set(sys.modules) - modules:
            if name.startswith("test_selfcorrect_warm"):
                del sys.modules[name]


def _warm_plain() -> None:
    """What an item's plain run imports (boundary/selfcorrect_boundary/plain.py), loaded
    once here: a batch whose tests all need nothing of pytest's leaves pytest out."""
    sys.path.insert(0, BOUNDARY_DIR)
    try:
        from selfcorrect_boundary import plain
    finally:
        sys.path.remove(BOUNDARY_DIR)
    plain.preload()


def _preload_modules(sources: dict) -> None:
    """Modules the client sent with the batch (the same for every item: the tests' own
    support code), compiled and imported here once instead of in every item."""
    import types

    for name, source in sources.items():
        module = types.ModuleType(name)
        module.__file__ = os.path.join(BATCH_DIR, f"{name}.py")
        exec(compile(source, module.__file__, "exec"), module.__dict__)
        sys.modules[name] = module


def _supervise(index: int, uid: int, preloaded: bool) -> None:
    """One item, as root (never as its uid), then os._exit."""
    code = 1
    try:
        path = f"{BATCH_DIR}/{index}.req"
        with open(path, "rb") as handle:
            header = _from_json(handle.readline().decode("utf-8"))
            data = handle.read()
        os.unlink(path)
        report, tar, needed_pytest = _supervise_item(index, uid, header, data, preloaded)
        body = _to_json(report).encode("utf-8", "replace")
        partial = f"{BATCH_DIR}/{index}.rep.partial"
        with open(partial, "wb", opener=_private) as handle:
            handle.write(b"%d %d\n" % (len(body), len(tar)) + body + tar)
        os.replace(partial, f"{BATCH_DIR}/{index}.rep")
        code = NEEDED_PYTEST if needed_pytest else 0
    except BaseException as exc:
        _quietly(os.write, 2, f"runner: batch item {index}: {type(exc).__name__}: {exc}\n"
                 .encode("utf-8", "replace"))
    finally:
        os._exit(code)


def _supervise_item(index: int, uid: int, header: dict, data: bytes, preloaded: bool
                    ) -> Any:
    folder = f"{WORK_DIR}/i{index}"
    run_dir, home = f"{folder}/run", f"{folder}/home"
    caps = header["caps"]
    env = dict(os.environ)
    env.update({"HOME": home, "TMPDIR": f"{home}/tmp", "MPLCONFIGDIR": f"{home}/matplotlib",
                "XDG_CACHE_HOME": f"{home}/.cache", "XDG_CONFIG_HOME": f"{home}/.config"})
    env.update(header.get("env", {}))
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    note_read, note_write = os.pipe()
    oom_before = _oom_kills()
    started = time.monotonic()
    deadline = started + float(header["deadline_s"])
    pid = os.fork()
    if pid == 0:
        _item(uid, header, data, (folder, run_dir, home, f"{home}/tmp"), env,
              out_write, err_write, preloaded, note_write)
    for end in (out_write, err_write, note_write):
        os.close(end)
    child = _Child(pid)
    out = _Capture(caps["stream_head_bytes"], caps["stream_tail_bytes"])
    err = _Capture(caps["stream_head_bytes"], caps["stream_tail_bytes"])
    # A fast poll: the output closes a moment before the exit status can be read, and a
    # batch pays that moment once per item.
    inner_timeout = _pump(child, {out_read: out, err_read: err}, deadline,
                          kill=lambda: _kill_uid(uid), poll_s=0.0005)
    duration_ms = int((time.monotonic() - started) * 1000)
    os.set_blocking(note_read, False)
    try:
        needed_pytest = os.read(note_read, 1) == NEEDED_PYTEST_NOTE
    except OSError:  # nothing written, and a process of the item still holds the pipe
        needed_pytest = False
    os.close(note_read)
    extras, tar = _finish(uid, header, data, run_dir, folder)
    oom_after = _oom_kills()
    code = child.returncode if child.returncode is not None else -signal.SIGKILL
    report = {
        "exit_code": code if code >= 0 else None,
        "signal": -code if code < 0 else None,
        "duration_ms": duration_ms,
        "inner_timeout": inner_timeout,
        "stdout": out.as_dict(),
        "stderr": err.as_dict(),
        "oom_kills": None if oom_before is None or oom_after is None else oom_after - oom_before,
    }
    report.update(extras)
    return report, tar, needed_pytest


def _item(uid: int, header: dict, data: bytes, folders: tuple, env: dict, out_fd: int,
          err_fd: int, preloaded: bool, note_fd: int) -> None:
    """The item's process: drop to its uid, set its limits, lay out its folder, then become
    the script. Never returns. `note_fd`: where it says that it needed pytest and the
    zygote had not loaded it (the plain run's child inherits it too: all a write there
    can do is have the zygote load pytest early)."""
    argv = header["argv"]
    try:
        _become(uid)
        _limit_item(header["limits"], float(header["deadline_s"]))
        os.umask(0o077)
        for folder in folders:
            os.mkdir(folder, 0o700)
        _place_inputs(header, data, folders[1])
        os.chdir(folders[1])
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        if note_fd != NOTE_FD:
            os.dup2(note_fd, NOTE_FD)
        os.set_inheritable(NOTE_FD, False)
        os.closerange(NOTE_FD + 1, 65536)
        os.setsid()
        try:
            with open("/proc/self/oom_score_adj", "w") as handle:
                handle.write("1000")  # the OOM killer's first choice, as in a single run
        except OSError:
            pass
        _seed_font_cache(env.get("MPLCONFIGDIR"))
        if argv[:5] == [*PYTEST_ARGV, PLAIN_FLAG]:
            argv = [*PYTEST_ARGV, *argv[5:]]
            first = _plain_here(argv[4:], env)
        else:
            first = None
        if not preloaded and argv[:4] == PYTEST_ARGV:
            _quietly(os.write, NOTE_FD, NEEDED_PYTEST_NOTE)
        os.close(NOTE_FD)
        if preloaded and argv[:4] == PYTEST_ARGV:
            _pytest_here(argv[4:], env, first)
        if first is not None:
            env = {**env, FIRST_FAILURE_ENV: _to_json(first)}
            argv = [*argv[:2], BATCH_PYTEST, *argv[4:]]
        program = _find_program(argv[0], env.get("PATH", os.defpath))
        for number in RESTORED_SIGNALS:
            signal.signal(number, signal.SIG_DFL)
        os.execve(program, argv, env)
    except BaseException as exc:
        _quietly(os.write, 2, f"cannot start {argv[0]}: {exc}\n".encode("utf-8", "replace"))
    os._exit(127)


def _limit_item(limits: dict, deadline_s: float) -> None:
    """Per-process bounds (per uid for the process count), since the cgroup is the batch's."""
    import resource

    mib = 1024 * 1024
    for which, value in ((resource.RLIMIT_NPROC, limits["pids"]),
                         (resource.RLIMIT_NOFILE, limits["nofile"]),
                         (resource.RLIMIT_CORE, 0),
                         (resource.RLIMIT_FSIZE, limits["work_mb"] * mib),
                         (resource.RLIMIT_AS, max(2 * limits["memory_mb"], 1024) * mib),
                         (resource.RLIMIT_CPU, int(deadline_s) + 2)):
        resource.setrlimit(which, (value, value))


def _plain_here(args: list[str], env: dict) -> dict | None:
    """Tests that need nothing of pytest's (the client's PLAIN_FLAG after `-m pytest`): run
    plainly in a child of this process (boundary/selfcorrect_boundary/plain.py), which exits
    0 here when all pass. Otherwise pytest runs them in this process, as without the flag;
    the plain run's failure, if it saw one, is returned for pytest's report."""
    import tempfile

    sys.path.insert(0, BOUNDARY_DIR)
    try:
        from selfcorrect_boundary import plain
    finally:
        sys.path.remove(BOUNDARY_DIR)
    options = plain.parse(args)
    if options is None:
        return None
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    tempfile.tempdir = None  # the zygote's choice, /tmp, is root's alone here
    argv = sys.argv
    sys.argv = [PYTEST_MAIN, *args]
    try:
        outcome = plain.run_forked(options, lambda: None)
    finally:
        sys.argv = argv
        os.environ.clear()
        os.environ.update(saved)
    if outcome["outcome"] == plain.PASSED:
        os._exit(0)
    return outcome if outcome["outcome"] == plain.FAILED else None


def _pytest_here(args: list[str], env: dict, first: dict | None = None) -> None:
    """`python3 -I -m pytest ARGS` in this fork of the warmed zygote; never returns. `first`:
    a failure the plain run saw, which fails the run should pytest's pass."""
    import atexit
    import tempfile

    import pytest

    os.environ.clear()
    os.environ.update(env)
    tempfile.tempdir = None  # the zygote's choice, /tmp, is root's alone here
    sys.argv = [pytest.__file__, *args]
    code = 1
    try:
        code = int(pytest.console_main())
        if first is not None:
            from selfcorrect_boundary import plain

            code = plain.after_pytest(code, args, first)
        # What `python3 -m pytest` does on its way out (the tests' support code ends the
        # candidate's process there); os._exit below would skip it.
        atexit._run_exitfuncs()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:
        _quietly(os.write, 2, f"pytest crashed: {type(exc).__name__}: {exc}\n".encode())
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                continue
        os._exit(code & 0xFF)


def _finish(uid: int, header: dict, data: bytes, run_dir: str, folder: str) -> Any:
    """After the item, in one helper that becomes its uid: kill whatever of the uid is still
    running, send the artifacts as the single run reports them (the report's extra fields,
    then the tar), then remove its folder and its /dev/shm files. The files are the uid's
    own, mode 0600 or less: root here cannot read them."""
    caps = header["caps"]
    limit = caps["artifact_max_total_bytes"] + caps["artifact_max_files"] * 1536 + (
        MAX_REPORT_JSON + 65536)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(read_end)
            _become(uid)
            _kill_all_mine(uid)
            inputs = _place_inputs(header, data, run_dir, write=False)
            members, rejected, left_out, unchanged = _select_artifacts(
                caps, inputs, header.get("wanted", []), run_dir)
            info = _to_json({"rejected": rejected, "unlisted": left_out,
                             "unchanged_inputs": unchanged}).encode("utf-8", "replace")
            with os.fdopen(write_end, "wb") as stream:
                stream.write(b"%d\n" % len(info) + info)
                _write_tar(stream, members)
            _remove_tree(folder)
            _remove_shm(uid)
            code = 0
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(write_end)
    chunks, total = [], 0
    while total <= limit:
        chunk = os.read(read_end, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    os.close(read_end)
    if total > limit:
        _quietly(os.kill, pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    size, _, rest = b"".join(chunks).partition(b"\n")
    try:
        extras = _from_json(rest[: int(size)].decode("utf-8", "replace"))
        return extras, rest[int(size):] if total <= limit else b""
    except ValueError:
        return {"rejected": [], "unlisted": 0, "unchanged_inputs": []}, b""


# ---- The tests' boundary -------------------------------------------------------------
#
# A spec's frozen tests judge the candidate from outside its process. Their container
# starts the runner as root with CAP_SETUID and CAP_SETGID only (as a batch does); it lays
# out three folders, then starts two processes that share no memory, no uid and no private
# folder (see sandbox/boundary/selfcorrect_boundary/__init__.py):
#
#   runner (PID 1, root)     places the files, starts both, hands the tests a socket to
#    |                       each candidate process it starts, kills, reports
#    +- pytest (uid 10002)   /work/tests (0700: the tests, their report, a copy of the
#    |                       candidate's source): run_tests.py over the frozen tests
#    +- candidate (10001)    /work/candidate (0700: the module): a fresh `python3 -I`
#                            running serve.py, never a fork of pytest, restarted (a new
#                            interpreter) when the tests say it crashed or hung
#
# Both work in /work/shared (1777, root's): the inputs and the files carried over from the
# candidate's run are root's there (read-only to both, and the sticky bit keeps them from
# being replaced), and what either writes by relative path the other can read. The tests'
# folder links to those files, so tests that open them next to their own file still do.
# Control socket (the tests' fd 3): "S\n" start (or hand over the first) candidate process,
# answered "OK <how the last one ended>\n" with the new socket as SCM_RIGHTS; "K\n" kill the
# current one, answered "OK <how it ended>\n".

BOUNDARY_ROOT = "/opt/selfcorrect/boundary"
CANDIDATE_UID = 10001
TESTS_UID = 10002
TESTS_DIR = WORK_DIR + "/tests"
CANDIDATE_DIR = WORK_DIR + "/candidate"
SHARED_DIR = WORK_DIR + "/shared"
SOURCE_COPY = ".selfcorrect/candidate-source.py"
# Each uid's own folder in the shared /tmp, made by it before anything of the candidate's
# runs (one made first by the other uid would be the other's): caches, configuration and,
# for the tests, pytest's base temporary folder.
TESTS_TMP = "/tmp/selfcorrect-tests"
CANDIDATE_TMP = "/tmp/selfcorrect-candidate"
SHARED_MARKER = ".selfcorrect-shared"
# Configuration a library in the tests' process reads from its working folder, /work/shared,
# which the candidate may write to: matplotlib reads ./matplotlibrc before any other and
# eval()s parts of it (axes.prop_cycle), so a candidate's file ran code in pytest's process
# (a red-team finding). Each is placed there as root's, read-only, before anything of the
# candidate's runs, holding nothing that changes the library's defaults; the sticky folder
# keeps the candidate from replacing it (a rename over it under gVisor is reported, as for
# every placed file). A spec input of that name (the spec's author's) is placed instead.
CWD_CONFIG = (("matplotlibrc", b"# selfcorrect: matplotlib's defaults for the tests\n"),
              (".pdbrc", b"# selfcorrect: no commands\n"))
CONTROL_FD = 3
RESERVE_MIN_S, RESERVE_MAX_S, RESERVE_SHARE = 0.5, 5.0, 0.15


def _boundary_main(header: dict, payload: bytes, stdout: BinaryIO, waiting: Any = None,
                   warm_tests: _Warm | None = None) -> int:
    import _socket

    if os.getuid() != 0:
        raise SystemExit("runner: the tests' boundary needs its own container (root with "
                         "CAP_SETUID and CAP_SETGID only); nothing was started")
    spec = header["boundary"]
    _boundary_folders()
    files = _split_payload(header, payload)
    candidate, tests = spec["candidate"], set(spec["tests"])
    source = next((data for name, data, _ in files if name == candidate), b"")
    shared = [(name, data, mode) for name, data, mode in files
              if name != candidate and name not in tests]
    placed = _make_shared(shared)
    # In the tests' folder (their sys.path), the shared files appear one by one in folders of
    # the tests' own, never as a shared folder the candidate could add a module to; what
    # Python could import is a copy of the tests', never a link to a file a rename under
    # gVisor could replace.
    links = [(name, data if _importable(name) else None) for name, data, _ in shared]
    env = dict(os.environ)
    env.update(header.get("env", {}))
    extra: dict = {}
    tunnel = _tunnel(header, stdout, extra, env)
    deadline_s = float(header["deadline_s"])
    started = time.monotonic()
    deadline = started + deadline_s
    candidates = waiting or _Candidates()
    out_read = candidates.output_read
    candidates.prepare(spec, _uid_env(env, CANDIDATE_DIR, CANDIDATE_TMP),
                       [(candidate, source, 0o644)])
    runner_end, tests_end = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
    settings = {"control_fd": CONTROL_FD, "module": spec["module"],
                "path": f"{CANDIDATE_DIR}/{candidate}", "source": f"{TESTS_DIR}/{SOURCE_COPY}",
                "deadline": deadline,
                "reserve_s": min(RESERVE_MAX_S, max(RESERVE_MIN_S, RESERVE_SHARE * deadline_s))}
    tests_env = _uid_env(env, TESTS_DIR, TESTS_TMP)
    tests_env["SELFCORRECT_BOUNDARY"] = _to_json(settings)
    caps = header["caps"]
    outs = {name: _Capture(caps["stream_head_bytes"], caps["stream_tail_bytes"])
            for name in ("out", "err", "candidate")}
    oom_before = _oom_kills()
    own = [(name, data, mode) for name, data, mode in files if name in tests]
    layout = (TESTS_DIR, [*own, (SOURCE_COPY, source, 0o600)], links, TESTS_TMP,
              os.path.dirname(SOURCE_COPY))
    start: dict = {"start": "cold", "start_note": None, "preloaded": [], "warm_rss_kb": None}
    spawned = None
    if warm_tests is not None:
        start["preloaded"] = warm_tests.modules
        if header.get("warm") is not False:
            warm_tests.wait_ready(min(float(header.get("warm_wait_s", 0)), deadline_s))
        refusal = warm_tests._refusal(header)
        if refusal is None and _as_uid(TESTS_UID, lambda: _lay_out_tests(layout, tests_env)):
            raise SystemExit(f"runner: could not lay out {TESTS_DIR}; nothing was started")
        spawned = warm_tests.hand_over(header, tests_env, start, SHARED_DIR, refusal)
    if spawned is not None and warm_tests is not None:
        # The warm tests' interpreter had its descriptors from the start: it becomes the
        # launcher in the folder just laid out (as the tests' uid, like the cold one would).
        runner_end.close()
        runner_end = warm_tests.control
        tests_end.close()
        pid, test_out, test_err = spawned[0].pid, (spawned[1], -1), (spawned[2], -1)
    else:
        test_out, test_err = os.pipe(), os.pipe()
        try:
            # The tests' folder exists before any candidate process does (one could make it
            # first, in the sticky /work): pytest's own child lays it out, then we go on.
            pid = _spawn_as(TESTS_UID, header["argv"], tests_env, SHARED_DIR,
                            {1: test_out[1], 2: test_err[1], CONTROL_FD: tests_end.fileno()},
                            layout=layout)
        finally:
            for fd in (test_out[1], test_err[1]):
                os.close(fd)
            tests_end.close()
    if candidates.pid is not None:
        candidates.hand_over_module()  # the waiting process gets the module, pytest started
    elif spec.get("eager"):
        candidates.start()  # its interpreter starts while pytest does
    stdout.write(b"STARTED\n")
    stdout.flush()

    def kill_all() -> None:
        _kill_uid(TESTS_UID)
        candidates.end()

    child = _Child(pid)
    extra.update({runner_end.fileno(): lambda fd: candidates.on_control(runner_end),
                  out_read: lambda fd: _drain(fd, outs["candidate"])})
    inner_timeout = _pump(child, {test_out[0]: outs["out"], test_err[0]: outs["err"]},
                          deadline, kill=kill_all, extra=extra,
                          writers=tunnel.writers if tunnel is not None else None)
    if tunnel is not None:
        tunnel.close()
    duration_ms = int((time.monotonic() - started) * 1000)
    runner_end.close()
    # pytest has ended: one helper per uid ends what is left of it, the tests' one also
    # opens their folder for us to send the report back.
    _as_uid(CANDIDATE_UID, _kill_the_rest)
    def clear_and_open() -> None:
        _kill_the_rest()
        _open_tests_folder(links)

    _as_uid(TESTS_UID, clear_and_open)
    _drain(out_read, outs["candidate"], until_empty=True)
    for fd in (out_read, candidates.output_fd):
        _quietly(os.close, fd)
    oom_after = _oom_kills()
    code = child.returncode if child.returncode is not None else -signal.SIGKILL
    err = outs["err"].as_dict()
    said = outs["candidate"].as_dict()
    if said["total_bytes"]:
        err["text"] += "\n[the candidate's process, outside the calls]\n" + said["text"]
    report = {
        "exit_code": code if code >= 0 else None,
        "signal": -code if code < 0 else None,
        "duration_ms": duration_ms,
        "inner_timeout": inner_timeout,
        "stdout": outs["out"].as_dict(),
        "stderr": err,
        "oom_kills": None if oom_before is None or oom_after is None else oom_after - oom_before,
        "candidate_restarts": max(0, candidates.started - 1 - candidates.resets),
        **start,
        **({"direct": _read_watch()} if tunnel is not None else {}),
    }
    inputs = {name: data for name, data, _ in own}
    members, rejected, left_out, unchanged = _select_artifacts(
        caps, inputs, header.get("wanted", []), TESTS_DIR)
    report.update({"rejected": rejected, "unlisted": left_out, "unchanged_inputs": unchanged,
                   "replaced_inputs": _replaced(placed)})
    _send_result(stdout, header["nonce"], report, members)
    return 0


def _lay_out_tests(layout: tuple, env: dict) -> None:
    """As the tests' uid, for their warm interpreter: what _spawn_as's child does before it
    execs a cold one (their folder, files and /tmp folder, then the font cache)."""
    _make_private(*layout)
    _seed_font_cache(env.get("MPLCONFIGDIR"))


def _boundary_folders() -> None:
    """/work: each uid makes its own private folder (the tests' before any of the
    candidate's code runs); sticky, so no uid can remove or rename another's, and not
    listable. /tmp: shared, as on any machine."""
    _set_modes(((WORK_DIR, 0o1733), ("/tmp", 0o1777)))
    if not os.path.isdir(SHARED_DIR):
        os.mkdir(SHARED_DIR)
        os.chmod(SHARED_DIR, 0o1777)


def _kill_the_rest() -> None:
    """As a uid, once: SIGKILL whatever of it still runs (kill(-1) spares the caller)."""
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        return


def _split_payload(header: dict, payload: bytes) -> list[tuple[str, bytes, int]]:
    files, offset = [], 0
    for item in header.get("files", []):
        data = payload[offset : offset + item["size"]]
        offset += item["size"]
        name = os.path.normpath(item["path"])
        if name.startswith(("/", "..")) or name == ".":
            continue
        files.append((name, data, item["mode"] & 0o755))
    return files


def _make_shared(files: list[tuple[str, bytes, int]]) -> dict:
    """/work/shared and the files both processes read, as root's: neither can change them,
    and the sticky bit keeps them from being removed; folders on the way are 1777 like the
    top. gVisor lets a rename replace another user's file in a sticky folder, so what was
    placed is remembered (path -> inode and bytes) and checked once the tests are done
    (_replaced): the original inode cannot come back, as no uid may hard-link root's file.
    A marker keeps the folder from ever being empty (an empty one could be renamed over).
    The folder itself is made by _boundary_folders."""
    placed: dict[str, tuple[int, bytes | None]] = {}
    given = {name for name, _, _ in files}
    # Read by the tests' process from its working folder, and so never the candidate's to
    # write there (see CWD_CONFIG).
    guards = [(name, data, 0o444) for name, data in CWD_CONFIG if name not in given]
    for name, data, mode in [*files, *guards, (SHARED_MARKER, b"", 0o444)]:
        target = os.path.join(SHARED_DIR, name)
        folder = os.path.dirname(target)
        if not os.path.isdir(folder):
            os.makedirs(folder)
            os.chmod(folder, 0o1777)
        with open(target, "wb", opener=lambda p, f: os.open(p, f | os.O_NOFOLLOW, 0o600)) as out:
            out.write(data)
        os.chmod(target, mode & 0o755 | 0o444)
        placed[target] = (os.lstat(target).st_ino, data)
    placed[SHARED_DIR] = (os.lstat(SHARED_DIR).st_ino, None)
    return placed


def _replaced(placed: dict) -> list[str]:
    """The shared files (and the folder) that are not the ones placed, as they were."""
    found = []
    for path, (inode, data) in placed.items():
        try:
            st = os.lstat(path)
            same = st.st_ino == inode and st.st_uid == 0
            if same and data is not None:
                with open(path, "rb", opener=lambda p, f: os.open(p, f | os.O_NOFOLLOW)) as got:
                    same = got.read(len(data) + 1) == data
        except OSError:
            same = False
        if not same:
            found.append(_printable(os.path.relpath(path, SHARED_DIR)))
    return found[:MAX_REJECTED]


def _importable(name: str) -> bool:
    """A file Python would import, or that steers its imports."""
    return name.lower().endswith((".py", ".pyc", ".pyo", ".pyd", ".so", ".pth", ".zip",
                                  ".egg", ".whl")) or "__pycache__" in name.split("/")


def _make_private(folder: str, files: list[tuple[str, bytes, int]], links: list,
                  tmp_root: str | None = None, writable: str | None = None) -> None:
    """As the folder's uid: the folder (0700), its files, the shared files (`links`: name
    and None for a link to /work/shared/<name>, or the bytes of a copy of its own), and its
    folder in /tmp (0711: others may reach a path the uid hands them, never add to it).
    With `writable` (a subfolder), the rest is then sealed (see _seal)."""
    os.umask(0o077)
    if tmp_root is not None:
        os.mkdir(tmp_root, 0o711)
        os.chmod(tmp_root, 0o711)
        for name in ("cache", "config", "matplotlib"):
            os.mkdir(os.path.join(tmp_root, name), 0o700)
    os.mkdir(folder, 0o700)
    for name, data, mode in files:
        target = os.path.join(folder, name)
        os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
        with open(target, "wb", opener=_private) as out:
            out.write(data)
        os.chmod(target, mode & 0o700)
    for name, data in links:
        target = os.path.join(folder, name)
        if os.path.lexists(target):
            continue
        os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
        if data is None:
            os.symlink(os.path.join(SHARED_DIR, name), target)
        else:
            with open(target, "wb", opener=_private) as out:
                out.write(data)
    if writable is not None:
        _seal(folder, os.path.join(folder, writable))


def _seal(folder: str, writable: str) -> None:
    """The tests' folder is first on their sys.path, and the tests' process may be steered
    into writing where it may (a red team had a test extract the candidate's tar archive,
    whose member /work/tests/numpy.py then ran in pytest's process): once laid out, nothing
    in it is writable, by its owner either, but `writable` (the report's folder, never on
    sys.path). The boundary's import check (selfcorrect_boundary/trusted.py) trusts a
    folder of the tests' uid only while it stays so."""
    os.makedirs(writable, mode=0o700, exist_ok=True)
    for root, _, names in os.walk(folder, topdown=False):
        if root == writable or root.startswith(writable + os.sep):
            continue
        for name in names:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode & 0o500)
        os.chmod(root, 0o500)


def _open_tests_folder(links: list) -> None:
    """As the tests' uid, once nothing of either uid runs: drop the shared files' links and
    copies and the source copy, and let root read the rest (the report) to send it back."""
    for folder, _, _ in os.walk(TESTS_DIR):  # sealed (_seal): writable again, to clear
        _quietly(os.chmod, folder, 0o700)
    for name, _ in links:
        path = os.path.join(TESTS_DIR, name)
        if os.path.islink(path) or os.path.isfile(path):
            _quietly(os.unlink, path)
    _quietly(os.unlink, os.path.join(TESTS_DIR, SOURCE_COPY))
    stack = [TESTS_DIR]
    while stack:
        folder = stack.pop()
        _quietly(os.chmod, folder, 0o755)
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    os.chmod(entry.path, 0o644)
            except OSError:
                continue


def _uid_env(env: dict, home: str, tmp_root: str) -> dict:
    """The environment for one of the two uids: its own home and caches."""
    made = dict(env)
    made.update({"HOME": home, "MPLCONFIGDIR": f"{tmp_root}/matplotlib",
                 "XDG_CACHE_HOME": f"{tmp_root}/cache", "XDG_CONFIG_HOME": f"{tmp_root}/config"})
    return made


def _drain(fd: int, capture: _Capture, until_empty: bool = False) -> bool:
    while True:
        if not select.select([fd], [], [], 0)[0]:
            return True
        data = os.read(fd, 65536)
        if not data:
            return False
        capture.feed(data)
        if not until_empty:
            return True


def _spawn_as(uid: int, argv: list[str], env: dict, cwd: str, fds: dict[int, int],
              oom_first: bool = False, layout: Any = None, umask: int = 0o022) -> int:
    """fork, become `uid` for good, lay out its private folder (`layout`: folder, files,
    links; done before this returns, or SystemExit), its descriptors `fds` (target ->
    ours), then exec: a fresh interpreter, nothing of ours but those descriptors."""
    import fcntl

    program = _find_program(argv[0], env.get("PATH", os.defpath))
    ready_read, ready_write = os.pipe()
    pid = os.fork()
    if pid != 0:
        os.close(ready_write)
        done = _read_ready(ready_read) if layout is not None else b"1"
        os.close(ready_read)
        if done != b"1":
            _quietly(os.kill, pid, signal.SIGKILL)
            raise SystemExit(f"runner: could not lay out {layout[0]}; nothing was started")
        return pid
    try:
        os.close(ready_read)
        if oom_first:  # before the uid change: that leaves /proc/self root's to write
            with open("/proc/self/oom_score_adj", "w") as handle:
                handle.write("1000")
        _become(uid)
        if layout is not None:
            _make_private(*layout)
            os.write(ready_write, b"1")
        os.close(ready_write)
        # The tests' 022, not 0: gVisor lets another uid open a file through
        # /proc/<pid>/fd/<n> when the file's own mode allows it (the folder is not checked
        # again), so the report pytest writes must not be writable by others.
        os.umask(umask)
        os.chdir(cwd)
        moved = {target: fcntl.fcntl(source, fcntl.F_DUPFD, 100) for target, source in fds.items()}
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for target, high in moved.items():
            os.dup2(high, target)
        highest = max(moved)
        for fd in range(3, highest):
            if fd not in moved:
                _quietly(os.close, fd)
        os.closerange(highest + 1, 65536)
        os.setsid()
        _seed_font_cache(env.get("MPLCONFIGDIR"))
        for number in RESTORED_SIGNALS:
            signal.signal(number, signal.SIG_DFL)
        os.execve(program, argv, env)
    except BaseException as exc:
        _quietly(os.write, 2, f"cannot start {argv[0]}: {exc}\n".encode("utf-8", "replace"))
    os._exit(127)


class _Candidates:
    """The candidate's processes, one at a time: each a fresh interpreter started here. In a
    pooled boundary container the first is started before the request arrives (it imports
    nothing of the candidate's until hand_over_module sends it the module, once the tests'
    folder exists), so its start-up is off the test run's path."""

    def __init__(self) -> None:
        self.spec: dict = {}
        self.env: dict = _uid_env(dict(os.environ), CANDIDATE_DIR, CANDIDATE_TMP)
        # What every candidate process prints outside the calls (fd 1 and 2), for the report.
        self.output_read, self.output_fd = os.pipe()
        self.files: list = []
        self.pid: int | None = None
        self.tests_end: Any = None  # the candidate's end of the tests' socket, once started
        self.started = 0
        self.resets = 0  # fresh processes for pytest's run after a plain one

    def prepare(self, spec: dict, env: dict, files: list) -> None:
        self.spec, self.env, self.files = spec, env, files

    def start(self, *, waiting: bool = False) -> None:
        import _socket

        ours, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
        argv = ["python3", "-I", "-S", "-B", f"{BOUNDARY_ROOT}/serve.py", str(CONTROL_FD)]
        argv += ["--wait"] if waiting else [
            f"{CANDIDATE_DIR}/{self.spec['candidate']}", self.spec["module"],
            "1" if self.spec.get("eager") else "0"]
        try:
            fds = {1: self.output_fd, 2: self.output_fd, CONTROL_FD: theirs.fileno()}
            # The first process lays out the candidate's folder; later ones find it.
            files = [] if waiting else self.files
            layout: Any = ((CANDIDATE_DIR, files, [], CANDIDATE_TMP) if self.started == 0
                           else None)
            # umask 0: what it makes in a folder the tests gave it, they can clean up.
            self.pid = _spawn_as(CANDIDATE_UID, argv, self.env, SHARED_DIR, fds,
                                 oom_first=True, layout=layout, umask=0)
        finally:
            theirs.close()
        _WATCHED.add(self.pid)
        self.tests_end = ours
        self.started += 1

    def hand_over_module(self) -> None:
        """The waiting process's first message: the module to serve (it writes the file in
        its own folder, then imports it when eager). One that died waiting is replaced."""
        _reap(_Child(-1))
        if self.pid in _EXITS:
            self.end()
            self.start()
            return
        path = f"{CANDIDATE_DIR}/{self.spec['candidate']}"
        source = next((data for name, data, _ in self.files), b"")
        body = _to_json({"setup": {"path": path, "module": self.spec["module"],
                                   "eager": bool(self.spec.get("eager")), "env": self.env,
                                   "source": source.decode("latin-1")}}).encode("utf-8")
        try:
            self.tests_end.sendall(_struct.pack(">I", len(body)) + body)
        except OSError:
            return  # it died waiting: the tests find it ended, as any crash

    def end(self) -> str:
        """Kill what is left of the current process (and anything it started): how it
        ended, in words."""
        if self.tests_end is not None:
            self.tests_end.close()
            self.tests_end = None
        pid, self.pid = self.pid, None
        if pid is None:
            return ""
        _reap(_Child(-1))
        if pid in _EXITS:
            _kill_uid(CANDIDATE_UID)  # what it left running
            return _ended(_EXITS.pop(pid))
        _kill_uid(CANDIDATE_UID)
        end = time.monotonic() + REAP_WAIT_S
        while pid not in _EXITS and time.monotonic() < end:
            _reap(_Child(-1))
            time.sleep(0.002)
        code = _EXITS.pop(pid, None)
        # A crash closes the tests' connection a moment before its process is reaped (a
        # segfault's exit can lag): a status other than our SIGKILL says how it really ended.
        if code is not None and code != -signal.SIGKILL:
            return _ended(code)
        return "its process was still running, and was killed"

    def on_control(self, control: Any) -> bool:
        """One command from the tests' process; False once it has closed the socket."""
        import _socket

        try:
            data = control.recv(64)
        except OSError:
            return False
        if not data:
            return False
        for command in data.split(b"\n"):
            if command == b"K":
                control.sendall(b"OK " + self.end().encode("utf-8", "replace") + b"\n")
            elif command == b"R":
                # The tests' plain run is over (boundary/selfcorrect_boundary/plain.py):
                # pytest's run of the same tests gets a fresh process.
                self.end()
                self.resets += 1
                control.sendall(b"RESET\n")
            elif command == b"S":
                status = "" if self.pid is not None and self.tests_end is not None else None
                if status is None:
                    status = self.end()
                    self.start()
                handed, self.tests_end = self.tests_end, None
                control.sendmsg([b"OK " + status.encode("utf-8", "replace") + b"\n"],
                                [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS,
                                  _struct.pack("i", handed.fileno()))])
                handed.close()
        return True


def _prestart_candidate() -> _Candidates | None:
    """A candidate process waiting for its module, started while the container waits."""
    waiting = _Candidates()
    try:
        _boundary_folders()
        waiting.start(waiting=True)
    except (OSError, SystemExit):
        return None  # started at the request instead
    return waiting


def _read_ready(fd: int) -> bytes:
    """The child's word that its folder is laid out, or b"" when it died first."""
    while True:
        try:
            return os.read(fd, 1)
        except InterruptedError:
            continue


def _ended(code: int) -> str:
    return f"exit status {code}" if code >= 0 else f"killed by signal {-code}"


def start() -> int:
    """The container's command imports this module (its bytecode compiled in the image)
    and calls this: run as a script, these 2,000 lines would be compiled at every start."""
    return _zygote_main() if sys.argv[1:2] == ["--zygote"] else main()


if __name__ == "__main__":
    sys.exit(start())

