"""The container configuration as data: a pure function of the limits, so every hardening
choice can be asserted on without a Docker engine."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from selfcorrect_action.choices import Runtime
from selfcorrect_action.sandbox.models import SANDBOX_UID, WORK_DIR, Limits

LABEL = "org.selfcorrect.sandbox"
LABEL_EXPIRES = "org.selfcorrect.expires"
LABEL_SESSION = "org.selfcorrect.session"
# "host:pid" of the process that made the container: which run a container belongs to when
# several share an engine (a test asserting on its own containers only, a person debugging).
LABEL_OWNER = "org.selfcorrect.owner"
# The runner started from its bytecode, compiled in the image (sandbox/Dockerfile): a script
# is compiled at every start, a module's cache is read. Its folder goes last on sys.path, so
# that nothing there stands in for a module of the standard library.
RUNNER_BOOT = ("import sys; sys.path.append('/opt/selfcorrect'); import runner; "
               "sys.exit(runner.start())")
# An execute-only copy of python3 (see sandbox/Dockerfile): exec'ing it leaves the runner
# non-dumpable, out of the script's reach through ptrace and /proc. gVisor's loader reads
# the binary as the user, so it cannot start an execute-only one; there the ordinary python3
# runs the runner, and gVisor's Yama ptrace_scope 1 keeps the script from tracing it.
RUNNER_PYTHON = {"runc": "/usr/bin/selfcorrect-python", "runsc": "python3"}
RUNSC_MIN_PIDS = 1024


class PoolKey(BaseModel):
    """Containers are interchangeable exactly when these are equal."""

    model_config = ConfigDict(frozen=True)

    image: str
    runtime: Runtime
    limits: Limits
    boundary: bool = False  # a container for tests run apart from their candidate


# What a boundary container's warm tests' interpreter imports: pytest, or the boundary's own
# modules only, for tests that need no pytest (sandbox/models.py's PLAIN_TESTS_FLAG).
PYTEST_PRELOAD = ("pytest",)
PLAIN_TESTS_PRELOAD = ("@plain",)


def container_config(
    key: PoolKey, *, session: str, expires_at: float, idle_timeout_s: float, owner: str = "",
    preload: tuple[str, ...] | None = None
) -> dict[str, Any]:
    """Keyword arguments for docker's `containers.create`. `preload`: the modules a warm
    interpreter imports while the container waits (sandbox/warm.py), () for one that
    imports nothing (it still saves the script the interpreter's own start), None for no
    warm interpreter. In a boundary container any set but None means the frozen tests'
    warm interpreter, which imports pytest and the boundary's plugin, or only the boundary's
    own modules for PLAIN_TESTS_PRELOAD (the candidate's interpreter there is pre-started
    anyway, and must import nothing before its module)."""
    config = _single_config(key, session=session, expires_at=expires_at,
                            idle_timeout_s=idle_timeout_s, owner=owner)
    if preload is not None and not key.boundary:
        config["command"] = [*config["command"], "--warm", ",".join(preload)]
    if key.boundary:
        config.update(_boundary_differences(key.limits))
        # The runner starts the candidate's interpreter while the container waits.
        config["command"] = [*config["command"], "--boundary", *(
            [] if preload is None else ["--warm-tests", "--plain-tests"]
            if preload == PLAIN_TESTS_PRELOAD else ["--warm-tests"])]
    return config


def _boundary_differences(limits: Limits) -> dict[str, Any]:
    """A boundary container differs in three settings: the runner starts as root with
    CAP_SETUID and CAP_SETGID only, to run the tests and the candidate under two uids of
    their own (it never runs anything as root); /work is root's (sticky 1733: each uid makes
    its own private folder inside); /tmp is shared (1777), as on any machine. Docker gives a
    tmpfs the mode of the image's folder whatever mode= says: the runner sets and checks
    the modes itself."""
    return {
        "user": "0:0",
        "cap_drop": ["ALL"],
        "cap_add": ["SETUID", "SETGID"],
        "tmpfs": {
            WORK_DIR: tmpfs_options(limits.work_mb, limits.work_inodes, uid=0, mode="1733"),
            "/tmp": tmpfs_options(limits.tmp_mb, limits.work_inodes, uid=0, mode="1777"),
        },
    }


def _single_config(
    key: PoolKey, *, session: str, expires_at: float, idle_timeout_s: float, owner: str
) -> dict[str, Any]:
    limits = key.limits
    uid = f"{SANDBOX_UID}:{SANDBOX_UID}"
    return {
        "image": key.image,
        # -I: the runner ignores PYTHON* variables and the user site, whatever the image says;
        # -S: it needs only the standard library, so it skips site-packages' start-up hooks.
        "command": [RUNNER_PYTHON[key.runtime], "-I", "-S", "-c", RUNNER_BOOT,
                    str(idle_timeout_s)],
        "user": uid,
        "working_dir": WORK_DIR,
        "hostname": "sandbox",
        "stdin_open": True,
        # detach=False is how docker-py sets StdinOnce: our attach socket closing (we crashed
        # or were killed) ends the runner's stdin, so a pre-started container does not wait
        # for a request that never comes.
        "detach": False,
        "tty": False,
        "environment": {},
        # Always: a contract's network goes through the egress tunnel (issue 19), never a
        # bridge from which the metadata address and other containers are in reach.
        "network_mode": "none",
        # And no libnetwork at all: with networking merely "none", Docker still runs its
        # libnetwork-setkey hook (a re-exec of dockerd) at every start, about half the CPU of
        # a container's whole life here. The container still gets a network namespace of its
        # own holding only the loopback; /etc/hosts comes from the image.
        "network_disabled": True,
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges:true"],
        "read_only": True,
        "tmpfs": {
            WORK_DIR: tmpfs_options(limits.work_mb, limits.work_inodes),
            "/tmp": tmpfs_options(limits.tmp_mb, limits.work_inodes),
        },
        "shm_size": f"{limits.shm_mb}m",
        "ipc_mode": "private",
        "mem_limit": f"{limits.memory_mb}m",
        # Swap equal to memory: no swap at all, so a memory bomb is killed, not slowed down.
        "memswap_limit": f"{limits.memory_mb}m",
        "nano_cpus": int(limits.cpus * 1_000_000_000),
        "pids_limit": pids_limit(key.runtime, limits.pids),
        # core 0/0: a crashing script must not be able to raise its core limit and feed the
        # host's core_pattern (often a root-run pipe to apport or systemd-coredump).
        "ulimits": [
            {"Name": "nofile", "Soft": limits.nofile, "Hard": limits.nofile},
            {"Name": "core", "Soft": 0, "Hard": 0},
        ],
        # No docker-init: it would run as the script's uid, dumpable, so the script could
        # ptrace it and take over PID 1. The runner is PID 1 instead (it reaps orphans).
        "init": False,
        "privileged": False,
        "runtime": key.runtime,
        # The runner's stdout carries the protocol; a json-file log would copy it to the
        # daemon's disk, and a script that found a way to write there could fill it.
        "log_config": {"Type": "none", "Config": {}},
        "labels": {
            LABEL: "1",
            LABEL_SESSION: session,
            LABEL_OWNER: owner,
            LABEL_EXPIRES: str(int(expires_at)),
        },
    }


def pids_limit(runtime: Runtime, pids: int) -> int:
    """Under runsc the pids cgroup counts gVisor's own host threads, not the script's tasks
    (those live inside gVisor's kernel): a tight limit starves gVisor and the whole sandbox
    dies mid-run. There it only caps gVisor's threads; the memory limit bounds the tasks."""
    return max(pids, RUNSC_MIN_PIDS) if runtime == "runsc" else pids


def tmpfs_options(size_mb: int, inodes: int, *, uid: int = SANDBOX_UID, mode: str = "0700"
                  ) -> str:
    return (
        f"rw,nosuid,nodev,noexec,size={size_mb}m,nr_inodes={inodes},"
        f"uid={uid},gid={uid},mode={mode}"
    )
