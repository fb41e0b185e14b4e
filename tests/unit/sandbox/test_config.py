from __future__ import annotations

from typing import Any

from selfcorrect_action.sandbox.config import (
    LABEL,
    LABEL_EXPIRES,
    PLAIN_TESTS_PRELOAD,
    RUNNER_BOOT,
    PoolKey,
    container_config,
)
from selfcorrect_action.sandbox.models import Limits


def _config(**limits: Any) -> dict[str, Any]:
    key = PoolKey(image="img:1", runtime="runc", limits=Limits(**limits))
    return container_config(key, session="s1", expires_at=1234.9, idle_timeout_s=60)


def test_hardening_is_always_on() -> None:
    config = _config()
    assert config["cap_drop"] == ["ALL"]
    assert config["security_opt"] == ["no-new-privileges:true"]
    assert config["read_only"] is True
    assert config["privileged"] is False
    assert config["init"] is False  # the non-dumpable runner is PID 1, not docker-init
    assert config["tty"] is False
    assert config["user"] == "10001:10001"
    assert config["environment"] == {}
    assert config["network_mode"] == "none"
    assert config["log_config"]["Type"] == "none"
    assert "volumes" not in config and "mounts" not in config


def test_limits_map_to_engine_settings() -> None:
    config = _config(memory_mb=256, cpus=0.5, pids=64, nofile=100, work_mb=10, work_inodes=99)
    assert config["mem_limit"] == config["memswap_limit"] == "256m"
    assert config["nano_cpus"] == 500_000_000
    assert config["pids_limit"] == 64
    assert config["ulimits"] == [
        {"Name": "nofile", "Soft": 100, "Hard": 100}, {"Name": "core", "Soft": 0, "Hard": 0},
    ]
    work = config["tmpfs"]["/work"]
    assert "size=10m" in work and "nr_inodes=99" in work and "noexec" in work
    assert "uid=10001" in work and "mode=0700" in work


def test_no_limits_open_a_network_interface() -> None:
    """A contract's network goes through the egress tunnel (issue 19): the container never
    joins a bridge, whatever it runs, and its limits carry no network setting at all."""
    assert "network" not in Limits.model_fields
    for key in (PoolKey(image="i", runtime="runc", limits=Limits()),
                PoolKey(image="i", runtime="runsc", limits=Limits(), boundary=True)):
        config = container_config(key, session="s", expires_at=1.0, idle_timeout_s=1)
        assert config["network_mode"] == "none"


def test_labels_carry_session_and_expiry() -> None:
    labels = _config()["labels"]
    assert labels[LABEL] == "1"
    assert labels[LABEL_EXPIRES] == "1234"


def test_runner_gets_its_idle_timeout_and_isolated_mode() -> None:
    command = _config()["command"]
    # Under runc, the execute-only interpreter copy that leaves the runner non-dumpable;
    # gVisor cannot load that one.
    assert command[:3] == ["/usr/bin/selfcorrect-python", "-I", "-S"]
    assert command[-1] == "60"
    key = PoolKey(image="img:1", runtime="runsc", limits=Limits())
    runsc = container_config(key, session="s1", expires_at=1.0, idle_timeout_s=60)["command"]
    assert runsc[:3] == ["python3", "-I", "-S"] and runsc[3:] == command[3:]


def test_equal_limits_share_a_pool_key() -> None:
    a = PoolKey(image="i", runtime="runc", limits=Limits(memory_mb=256))
    b = PoolKey(image="i", runtime="runc", limits=Limits(memory_mb=256))
    c = PoolKey(image="i", runtime="runsc", limits=Limits(memory_mb=256))
    assert a == b and hash(a) == hash(b)
    assert a != c


def test_runsc_gets_room_for_gvisors_own_threads() -> None:
    key = PoolKey(image="i", runtime="runsc", limits=Limits(pids=64))
    config = container_config(key, session="s", expires_at=0, idle_timeout_s=1)
    assert config["pids_limit"] == 1024
    assert _config(pids=64)["pids_limit"] == 64


def test_a_boundary_container_differs_only_by_its_two_capabilities_and_folders() -> None:
    """The tests' boundary needs a runner that can start two uids (sandbox/runner.py):
    root with CAP_SETUID and CAP_SETGID and nothing else; every other setting is the single
    execution's."""
    single = _config()
    key = PoolKey(image="img:1", runtime="runc", limits=Limits(), boundary=True)
    boundary = container_config(key, session="s1", expires_at=1234.9, idle_timeout_s=60)
    assert boundary["user"] == "0:0"
    assert boundary["cap_drop"] == ["ALL"] and boundary["cap_add"] == ["SETUID", "SETGID"]
    assert "cap_add" not in single
    assert boundary["command"] == [*single["command"], "--boundary"]
    assert "mode=1733" in boundary["tmpfs"]["/work"] and "uid=0" in boundary["tmpfs"]["/work"]
    assert "mode=1777" in boundary["tmpfs"]["/tmp"]
    differs = {name for name in single if single[name] != boundary[name]}
    assert differs == {"user", "tmpfs", "command"}
    assert PoolKey(image="i", runtime="runc", limits=Limits()) != key.model_copy(
        update={"image": "i"})


def test_a_container_with_preloads_tells_its_runner_which_and_a_boundary_one_never() -> None:
    key = PoolKey(image="img:1", runtime="runc", limits=Limits())
    warm = container_config(key, session="s1", expires_at=1.0, idle_timeout_s=60,
                            preload=("numpy", "pandas"))
    assert warm["command"][-2:] == ["--warm", "numpy,pandas"]
    assert container_config(key, session="s1", expires_at=1.0, idle_timeout_s=60)[
        "command"][-1] == "60"
    bare = container_config(key, session="s1", expires_at=1.0, idle_timeout_s=60, preload=())
    assert bare["command"][-2:] == ["--warm", ""]
    boundary = container_config(key.model_copy(update={"boundary": True}), session="s1",
                                expires_at=1.0, idle_timeout_s=60, preload=("numpy",))
    # A boundary container's warm interpreter is the frozen tests' (pytest), never a script's.
    assert boundary["command"][-2:] == ["--boundary", "--warm-tests"]
    cold = container_config(key.model_copy(update={"boundary": True}), session="s1",
                            expires_at=1.0, idle_timeout_s=60)
    assert cold["command"][-1] == "--boundary"
    # Tests that need no pytest (PLAIN_TESTS_FLAG): their interpreter leaves pytest out.
    plain = container_config(key.model_copy(update={"boundary": True}), session="s1",
                             expires_at=1.0, idle_timeout_s=60, preload=PLAIN_TESTS_PRELOAD)
    assert plain["command"][-3:] == ["--boundary", "--warm-tests", "--plain-tests"]


def test_the_runner_starts_from_its_compiled_module() -> None:
    """Run as a script, the runner's 2,000 lines would be compiled at every start."""
    command = _config()["command"]
    assert command[1:4] == ["-I", "-S", "-c"] and command[4] == RUNNER_BOOT
    assert "import runner" in RUNNER_BOOT and "sys.path.append('/opt/selfcorrect')" in RUNNER_BOOT
