"""The runner's own seccomp filter, under both runtimes: every refused syscall, called by
the script itself through libc.syscall, fails with EPERM (clone3 with ENOSYS), and ordinary
work (threads, fork, subprocess, multiprocessing, numpy) is untouched. Under runc Docker's
default profile refuses many of these calls already; under runsc only our filter does.

The syscall numbers here are written out independently of sandbox/runner.py's tables, so a
wrong number there shows up as a call that is let through."""

from __future__ import annotations

import contextlib
import json
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.choices import Runtime

PROBE = r"""
import ctypes, errno, json, os, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NUMBERS = {
    "x86_64": {"clone": 56, "ptrace": 101, "pivot_root": 155, "mount": 165, "umount2": 166,
               "add_key": 248, "request_key": 249, "keyctl": 250, "unshare": 272,
               "setns": 308, "bpf": 321, "getpid": 39, "perf_event_open": 298,
               "process_vm_readv": 310, "process_vm_writev": 311, "userfaultfd": 323},
    "aarch64": {"clone": 220, "ptrace": 117, "pivot_root": 41, "mount": 40, "umount2": 39,
                "add_key": 217, "request_key": 218, "keyctl": 219, "unshare": 97,
                "setns": 268, "bpf": 280, "getpid": 172, "perf_event_open": 241,
                "process_vm_readv": 270, "process_vm_writev": 271, "userfaultfd": 282},
}[os.uname().machine]
NUMBERS.update(open_tree=428, move_mount=429, fsopen=430, fsconfig=431, fsmount=432,
               fspick=433, clone3=435, mount_setattr=442, io_uring_setup=425,
               io_uring_enter=426, io_uring_register=427)
AT_FDCWD = -100
SIGCHLD = 17
CLONE_NAMESPACES = {"CLONE_NEWTIME": 0x80, "CLONE_NEWNS": 0x20000,
                    "CLONE_NEWCGROUP": 0x02000000, "CLONE_NEWUTS": 0x04000000,
                    "CLONE_NEWIPC": 0x08000000, "CLONE_NEWUSER": 0x10000000,
                    "CLONE_NEWPID": 0x20000000, "CLONE_NEWNET": 0x40000000}

def raw(nr, *args):
    ctypes.set_errno(0)
    converted = [ctypes.c_ulong(a & 0xFFFFFFFFFFFFFFFF) if isinstance(a, int) else a
                 for a in args]
    result = libc.syscall(ctypes.c_long(nr), *converted)
    return result, ctypes.get_errno()

def verdict(nr, *args, forks=False):
    result, number = raw(nr, *args)
    if forks and result == 0:
        os._exit(0)  # a child the filter let through: it must not run the rest
    if forks and result > 0:
        os.waitpid(result, 0x40000000)  # __WALL: its exit signal may not be SIGCHLD
    return "ALLOWED" if result >= 0 else errno.errorcode.get(number, str(number))

def call(name, *args, forks=False):
    return verdict(NUMBERS[name], *args, forks=forks)

def s(text):
    return ctypes.c_char_p(text.encode())

# fn() in a forked child, its answer back through a pipe: a call the filter let through (or
# a crash) must not change the probe itself. None when the child died first.
def in_child(fn):
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.write(write_end, json.dumps(fn()).encode())
        os._exit(0)
    os.close(write_end)
    os.waitpid(pid, 0)
    answer = os.read(read_end, 4096)
    return json.loads(answer) if answer else None
"""

REFUSED_CALLS = PROBE + r"""
verdicts = {
    "unshare(CLONE_NEWUSER)": call("unshare", 0x10000000),
    "unshare(CLONE_NEWNS)": call("unshare", 0x20000),
    "unshare(0)": call("unshare", 0),
    "setns(/dev/null)": call("setns", os.open("/dev/null", os.O_RDONLY), 0),
    "mount": call("mount", s("none"), s("/tmp"), s("tmpfs"), 0, None),
    "umount2": call("umount2", s("/tmp"), 0),
    "pivot_root": call("pivot_root", s("."), s(".")),
    "keyctl": call("keyctl", 0, -3, 1),  # KEYCTL_GET_KEYRING_ID, the session keyring
    "add_key": call("add_key", s("user"), s("selfcorrect"), s("x"), 1, -2),
    "request_key": call("request_key", s("user"), s("selfcorrect"), None, 0),
    "bpf": call("bpf", 0, None, 0),  # BPF_MAP_CREATE
    # In a child: traced by its parent, the script, not by the runner.
    "ptrace(PTRACE_TRACEME)": in_child(lambda: call("ptrace", 0, 0, 0, 0)),
    "open_tree": call("open_tree", AT_FDCWD, s("/tmp"), 0),
    "move_mount": call("move_mount", AT_FDCWD, s("/tmp"), AT_FDCWD, s("/work"), 0),
    "fsopen": call("fsopen", s("tmpfs"), 0),
    "fsconfig": call("fsconfig", -1, 0, None, None, 0),
    "fsmount": call("fsmount", -1, 0, 0),
    "fspick": call("fspick", AT_FDCWD, s("/tmp"), 0),
    "mount_setattr": call("mount_setattr", AT_FDCWD, s("/tmp"), 0, None, 0),
    # perf_event_attr left empty: the filter refuses before the kernel reads it.
    "perf_event_open": call("perf_event_open", None, 0, -1, -1, 0),
    "process_vm_readv": call("process_vm_readv", os.getppid(), None, 0, None, 0, 0),
    "process_vm_writev": call("process_vm_writev", os.getppid(), None, 0, None, 0, 0),
    "userfaultfd": call("userfaultfd", 0),
    "io_uring_setup": call("io_uring_setup", 1, None),
    "io_uring_enter": call("io_uring_enter", -1, 0, 0, 0, None, 0),
    "io_uring_register": call("io_uring_register", -1, 0, None, 0),
}
for flag, value in CLONE_NAMESPACES.items():
    verdicts[f"clone({flag})"] = call("clone", value | SIGCHLD, 0, 0, 0, 0, forks=True)
# struct clone_args (version 0, 64 bytes) for a plain fork: refused whatever it asks.
clone_args = (ctypes.c_uint64 * 8)(0, 0, 0, 0, SIGCHLD, 0, 0, 0)
verdicts["clone3(fork)"] = call("clone3", ctypes.byref(clone_args), 64, forks=True)
print(json.dumps(verdicts))
"""

EXPECTED_ERRNO = {"clone3(fork)": "ENOSYS"}


def _verdicts(result) -> dict[str, Any]:
    assert result.exit_code == 0, result.stderr.text
    return json.loads(result.stdout.text.strip().splitlines()[-1])


def test_every_refused_syscall_fails_with_eperm(run_script) -> None:
    verdicts = _verdicts(run_script(REFUSED_CALLS))
    assert len(verdicts) == 26 + 8 + 1  # calls, clone with each namespace flag, clone3
    wrong = {name: got for name, got in verdicts.items()
             if got != EXPECTED_ERRNO.get(name, "EPERM")}
    assert not wrong, wrong


def test_setns_into_every_namespace_of_its_own_is_refused(run_script) -> None:
    """gVisor lists fewer namespaces in /proc/self/ns than Linux; each listed one counts."""
    verdicts = _verdicts(run_script(PROBE + r"""
verdicts = {}
for name in sorted(os.listdir("/proc/self/ns")):
    fd = os.open(f"/proc/self/ns/{name}", os.O_RDONLY)
    verdicts[name] = call("setns", fd, 0)
print(json.dumps(verdicts))
"""))
    assert {"net", "pid", "user"} <= set(verdicts)
    assert set(verdicts.values()) == {"EPERM"}, verdicts


def test_no_user_namespace_to_mount_in(run_script) -> None:
    """The attack gVisor used to allow: a user and mount namespace of its own, in which the
    script held CAP_SYS_ADMIN and could mount tmpfs over /tmp."""
    verdicts = _verdicts(run_script(PROBE + r"""
steps = in_child(lambda: {
    "unshare(CLONE_NEWUSER|CLONE_NEWNS)": call("unshare", 0x10000000 | 0x20000),
    "mount tmpfs": call("mount", s("none"), s("/tmp"), s("tmpfs"), 0, None),
})
tool = subprocess.run(["unshare", "-r", "true"], capture_output=True, text=True)
steps["unshare -r true"] = f"exit {tool.returncode}: {tool.stderr.strip()}"
print(json.dumps(steps))
"""))
    assert verdicts.pop("unshare -r true").endswith("Operation not permitted"), verdicts
    assert set(verdicts.values()) == {"EPERM"}, verdicts


def test_other_arches_and_abis_are_refused(run_script, runtime: Runtime) -> None:
    """The filter's tables are x86_64's: the same syscalls under i386's numbers (int 0x80)
    or the x32 ABI (bit 30 set) must not slip past them. Linux without the filter answers
    getpid by int 0x80 with the pid (this kernel has IA32 emulation) and x32 with ENOSYS;
    gVisor does not implement int 0x80 at all, so there only "no pid" is asserted."""
    verdicts = _verdicts(run_script(PROBE + r"""
import mmap
if os.uname().machine != "x86_64":
    print(json.dumps({"skipped": os.uname().machine}))
    sys.exit(0)
# mov eax, 20 (i386 getpid); int 0x80; ret
code = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
code.write(bytes([0xB8, 0x14, 0, 0, 0, 0xCD, 0x80, 0xC3]))
i386_getpid = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(code)))
got, child = in_child(lambda: [i386_getpid(), os.getpid()]) or (None, None)
print(json.dumps({
    "i386_getpid": {"returned": got, "child_pid": child},
    "x32_getpid": verdict(NUMBERS["getpid"] | 0x40000000),
    "x86_64_getpid": verdict(NUMBERS["getpid"]),
}))
"""))
    if "skipped" in verdicts:
        pytest.skip(f"int 0x80 and x32 exist only on x86_64, not {verdicts['skipped']}")
    i386 = verdicts["i386_getpid"]
    assert isinstance(i386, dict), i386
    # No pid back: refused, or the child crashed (None for both).
    assert i386["child_pid"] is None or i386["returned"] != i386["child_pid"], i386
    if runtime == "runc":
        assert i386["returned"] == -1, i386  # -EPERM in eax
    assert verdicts["x32_getpid"] == "EPERM"
    assert verdicts["x86_64_getpid"] == "ALLOWED"


def test_the_filter_is_on_the_script_and_its_children(run_script, runtime: Runtime) -> None:
    """Seccomp: 2 is filter mode. Under runc Docker's profile alone gives that too, so there
    the filter count (Seccomp_filters, which gVisor does not report) must show ours on top
    of Docker's one; gVisor reports no filter of its own (Seccomp: 0 without ours)."""
    facts = _verdicts(run_script(r"""
import json, subprocess
def fields(text):
    return {k: v.strip() for k, _, v in (line.partition(":") for line in text.splitlines())
            if k.startswith("Seccomp")}
child = subprocess.run(["cat", "/proc/self/status"], capture_output=True, text=True).stdout
print(json.dumps({"script": fields(open("/proc/self/status").read()),
                  "child": fields(child)}))
"""))
    for who in ("script", "child"):
        status = facts[who]
        assert isinstance(status, dict)
        assert status["Seccomp"] == "2", facts
        if runtime == "runc":
            assert int(status["Seccomp_filters"]) >= 2, facts


ORDINARY_WORK = r"""
import asyncio, json, multiprocessing, os, select, subprocess, threading
from concurrent.futures import ThreadPoolExecutor

def square(n):
    return n * n

if __name__ == "__main__":
    facts = {}
    with ThreadPoolExecutor(4) as pool:
        facts["threads"] = sum(pool.map(square, range(10)))
    worker = threading.Thread(target=lambda: facts.setdefault("thread", threading.get_ident()))
    worker.start()
    worker.join()
    facts["thread"] = facts["thread"] != threading.get_ident()
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    facts["fork"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    facts["subprocess"] = subprocess.run(["sh", "-c", "echo hi"], capture_output=True,
                                         text=True, check=True).stdout.strip()
    read_end, write_end = os.pipe()
    os.write(write_end, b"x")
    facts["select"] = select.select([read_end], [], [], 1)[0] == [read_end]
    poller = select.epoll()
    poller.register(read_end, select.EPOLLIN)
    facts["epoll"] = len(poller.poll(1))
    facts["asyncio"] = asyncio.run(asyncio.sleep(0.01, result="slept"))
    spawned = os.posix_spawn("/bin/true", ["true"], os.environ)
    facts["posix_spawn"] = os.waitstatus_to_exitcode(os.waitpid(spawned, 0)[1])
    for method in ("fork", "spawn", "forkserver"):
        with multiprocessing.get_context(method).Pool(2) as pool:
            facts[f"pool_{method}"] = sum(pool.map(square, range(10)))
    import numpy, pandas
    facts["numpy"] = float((numpy.ones((200, 200)) @ numpy.ones((200, 200)))[0, 0])
    facts["pandas"] = int(pandas.DataFrame({"a": [1, 2, 3]})["a"].sum())
    print(json.dumps(facts))
"""


def test_ordinary_work_is_untouched(run_script) -> None:
    facts = _verdicts(run_script(ORDINARY_WORK, timeout_s=60))
    assert facts == {
        "threads": 285, "thread": True, "fork": 7, "subprocess": "hi", "select": True,
        "epoll": 1, "asyncio": "slept", "posix_spawn": 0,
        "pool_fork": 285, "pool_spawn": 285, "pool_forkserver": 285,
        "numpy": 200.0, "pandas": 6,
    }


def test_the_runner_still_does_its_own_work_after_the_filter(run_script) -> None:
    """The runner runs under its own filter too: killing a leftover that escaped into its
    own session, reading the work dir, and streaming the archive must still work."""
    result = run_script(r"""
import os, time
open("/work/out.txt", "w").write("artifact")
if os.fork() == 0:
    os.setsid()
    time.sleep(60)
    os._exit(0)
print("done")
""", timeout_s=30)
    assert result.exit_code == 0 and result.stdout.text.strip() == "done", result
    assert result.sandbox_note is None
    assert result.duration_ms < 10_000  # the sleeper was killed, not waited for
    assert [a.path for a in result.artifacts if a.rejected is None] == ["out.txt"]


TOO_LONG = """
def _too_long(seccomp):
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    rules.set_attr(seccomp.Attr.API_SYSRAWRC, 1)
    for value in range(5000):
        rules.add_rule(seccomp.ERRNO(1), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, 0xFFFF, value))
    return rules

"""


@pytest.fixture(scope="module")
def unfilterable_image(docker_client, tmp_path_factory):
    """The sandbox image with a runner whose filter the kernel refuses (longer than
    BPF_MAXINSNS), as a kernel without seccomp would: under its own tag, removed afterwards."""
    from selfcorrect_action.resources import sandbox_context
    from selfcorrect_action.sandbox import engine
    from selfcorrect_action.sandbox.image import ensure_image

    context = tmp_path_factory.mktemp("unfilterable") / "sandbox"
    shutil.copytree(sandbox_context(), context)
    runner = context / "runner.py"
    source = runner.read_text()
    install, main = "_install_syscall_filter(syscall_filter)", "\ndef main() -> int:"
    assert source.count(install) == 1 and source.count(main) == 1
    source = source.replace(install, "_install_syscall_filter(_too_long)")
    runner.write_text(source.replace(main, TOO_LONG + main))
    tag = f"selfcorrect-sandbox:test-unfilterable-{uuid.uuid4().hex[:8]}"
    connected = engine.connect()
    yield connected, ensure_image(connected, context=context, tag=tag)
    with contextlib.suppress(Exception):
        docker_client.images.remove(tag, force=True)


@pytest.mark.parametrize("pool_size", [0, 1], ids=["cold", "pooled"])
def test_a_script_never_runs_unfiltered(
    unfilterable_image, runtime: Runtime, pool_size: int, tmp_path: Path
) -> None:
    """A runner that cannot install its filter answers the request, cold or pooled, by
    exiting before STARTED (so before the spawn): the client raises a sandbox error that
    quotes it (exit 3, with a hint about seccomp), not a result the loop would take for
    the script's."""
    from selfcorrect_action.errors import SandboxUnavailable
    from selfcorrect_action.sandbox.client import Sandbox
    from selfcorrect_action.sandbox.models import ExecutionRequest, InputFile

    connected, image = unfilterable_image
    request = ExecutionRequest(
        argv=["python3", "s.py"], files=[InputFile(path="s.py", data=b"print('RAN')\n")],
        runtime=runtime,
    )
    with Sandbox(connected, image, pool_size=pool_size) as box:
        if pool_size:
            box.warm(request.limits, runtime)
            box.settle()
        with pytest.raises(SandboxUnavailable) as raised:
            box.run(request, tmp_path / "artifacts")
    message = str(raised.value)
    assert "cannot filter the script's system calls" in message
    assert ("runner: cannot install the syscall filter: seccomp_load "
            "failed with EINVAL (Invalid argument); the script was not started") in message
    assert "seccomp" in (raised.value.hint or "")
