"""The set-up scripts the README promises do all set-up, run against stand-ins for docker
and apt-get on PATH (so they can be asserted on without touching this machine)."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _stub(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _docker_up(tmp_path: Path, *, base_present: bool,
               missing_packages: tuple[str, ...] = ()) -> tuple[int, str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if missing_packages:  # dpkg -s answers "not installed" for these, "installed" otherwise
        _stub(bin_dir, "dpkg", f"""
case "$2" in
  {"|".join(missing_packages)}) exit 1 ;;
  *) exit 0 ;;
esac
""")
    calls = tmp_path / "apt.log"
    # An engine that answers, with runsc registered: the early-exit path.
    _stub(bin_dir, "docker", f"""
case "$1 $2" in
  "info --format") echo '{{"runc":{{}},"runsc":{{}}}}' ;;
  "image inspect") exit {0 if base_present else 1} ;;
  *) exit 0 ;;
esac
""")
    _stub(bin_dir, "apt-get", f'echo "$@" >> {calls}\n')
    # No sbin on PATH: this machine's own debootstrap (in /usr/sbin) stays out of sight.
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin"}
    done = subprocess.run(["bash", str(ROOT / ".ci/docker-up")], env=env, capture_output=True,
                          text=True, timeout=60)
    return done.returncode, calls.read_text() if calls.exists() else "", done.stdout


def test_debootstrap_is_installed_even_when_an_engine_with_runsc_answers(tmp_path: Path) -> None:
    code, apt, out = _docker_up(tmp_path, base_present=False)
    assert code == 0, out
    assert "install -y -qq debootstrap" in apt
    assert "engine answers, runsc registered" in out


def test_nothing_is_installed_when_the_base_image_is_there(tmp_path: Path) -> None:
    code, apt, _ = _docker_up(tmp_path, base_present=True)
    assert code == 0 and apt == ""


def test_the_local_registry_is_installed_where_it_is_missing(tmp_path: Path) -> None:
    """tests/integration/test_prebuilt_images.py pushes the release's images to Debian's
    docker-registry on 127.0.0.1: a fresh CI machine has to get it from here."""
    code, apt, _ = _docker_up(tmp_path, base_present=True, missing_packages=("docker-registry",))
    assert code == 0
    assert "install -y -qq docker-registry" in apt


def _browser_up(tmp_path: Path, present: list[str]) -> tuple[int, str, str]:
    """.ci/browser-up with only stand-ins on PATH: `present` are the programs installed."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "apt.log"
    _stub(bin_dir, "apt-get", f'echo "$@" >> {calls}\n')
    for program in present:
        _stub(bin_dir, program, f'echo "{program} 1.0"\n')
    done = subprocess.run(["/bin/bash", str(ROOT / ".ci/browser-up")],
                          env={**os.environ, "PATH": str(bin_dir)}, capture_output=True,
                          text=True, timeout=60)
    return done.returncode, calls.read_text() if calls.exists() else "", done.stdout


def test_browser_up_installs_debians_chromium_and_its_driver(tmp_path: Path) -> None:
    code, apt, out = _browser_up(tmp_path, present=["npm"])
    assert code == 0, out
    assert "install -y -qq --no-install-recommends chromium chromium-driver" in apt
    assert "npm" not in apt.split("install", 1)[1]


def test_browser_up_installs_nothing_that_is_there(tmp_path: Path) -> None:
    code, apt, out = _browser_up(tmp_path, present=["chromium", "chromedriver", "npm"])
    assert code == 0 and apt == "", out
    assert "chromium 1.0" in out
