from __future__ import annotations

from pathlib import Path

import pytest

from selfcorrect_action.sandbox import base_image
from selfcorrect_action.sandbox.base_image import (
    BASE_IMAGE,
    apt_sources,
    debootstrap_argv,
    debootstrap_problem,
    dpkg_excludes,
    ensure_base,
    import_failed,
    mounts_under,
    slim_removals,
    split_image,
)
from tests.fakes.fake_engine import FakeEngine


def test_split_image() -> None:
    assert split_image("debian:bookworm-slim") == ("debian", "bookworm-slim")
    assert split_image("debian") == ("debian", "latest")
    assert split_image("localhost:5000/debian") == ("localhost:5000/debian", "latest")
    assert split_image("localhost:5000/debian:12") == ("localhost:5000/debian", "12")


def test_debootstrap_problem_names_the_fix() -> None:
    ok = {"debootstrap": "/usr/sbin/debootstrap", "tar": "/usr/bin/tar"}
    assert debootstrap_problem(euid=0, **ok) is None
    missing = debootstrap_problem(euid=0, debootstrap=None, tar="/usr/bin/tar")
    assert missing and "apt-get install debootstrap" in missing
    not_root = debootstrap_problem(euid=1000, **ok)
    assert not_root and "sudo selfcorrect sandbox build" in not_root


def test_debootstrap_argv_is_a_minbase_bookworm() -> None:
    argv = debootstrap_argv(Path("/x/rootfs"))
    assert argv[:3] == ["debootstrap", "--variant=minbase", "bookworm"]
    assert argv[3] == "/x/rootfs"


def test_apt_sources_match_the_official_image() -> None:
    sources = apt_sources()
    assert "Suites: bookworm bookworm-updates" in sources
    assert "Suites: bookworm-security" in sources
    assert sources.count("Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg") == 2


def test_dpkg_excludes_keep_copyrights() -> None:
    lines = dpkg_excludes().splitlines()
    assert lines[:2] == ["path-exclude /usr/share/doc/*", "path-include /usr/share/doc/*/copyright"]
    assert "path-exclude /usr/share/locale/*" in lines


def test_slim_removals(tmp_path: Path) -> None:
    doc = tmp_path / "usr/share/doc"
    (doc / "bash").mkdir(parents=True)
    (doc / "bash" / "copyright").write_text("GPL")
    (doc / "bash" / "README").write_text("")
    (doc / "libfoo").symlink_to("bash")
    (tmp_path / "usr/share/locale/de").mkdir(parents=True)
    lists = tmp_path / "var/lib/apt/lists"
    (lists / "partial").mkdir(parents=True)
    (lists / "deb.debian.org_Packages").write_text("")
    (tmp_path / "var/log/apt").mkdir(parents=True)
    (tmp_path / "var/log/apt/term.log").write_text("")
    removed = {p.relative_to(tmp_path).as_posix() for p in slim_removals(tmp_path)}
    assert removed == {
        "usr/share/doc/bash/README",
        "usr/share/locale/de",
        "var/lib/apt/lists/deb.debian.org_Packages",
        "var/log/apt/term.log",
    }


def test_mounts_under_lists_leftover_mounts_deepest_first() -> None:
    mountinfo = (
        "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
        "90 22 0:5 / /tmp/b/rootfs/proc rw - proc proc rw\n"
        "91 22 0:6 / /tmp/b/rootfs/dev rw - tmpfs nodev rw\n"
        "92 91 0:7 /null /tmp/b/rootfs/dev/null rw - devtmpfs udev rw\n"
        "93 22 0:8 / /tmp/b/rootfs2/proc rw - proc proc rw\n"
    )
    assert mounts_under(Path("/tmp/b/rootfs"), mountinfo) == [
        "/tmp/b/rootfs/dev/null",
        "/tmp/b/rootfs/proc",
        "/tmp/b/rootfs/dev",
    ]


def test_import_failed_reads_the_json_reply() -> None:
    assert import_failed('{"status":"sha256:abc"}\r\n') is None
    assert import_failed('{"errorDetail":{"message":"x"},"error":"archive/tar: invalid"}') == (
        "archive/tar: invalid"
    )
    assert import_failed("not json") is None


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    calls: list[object] = []
    monkeypatch.setattr(base_image, "make_base", lambda client, progress: calls.append(client))
    monkeypatch.setattr(base_image, "PULL_TIMEOUT_S", 0.2)
    return calls


@pytest.mark.parametrize(
    ("present", "pull", "debootstrapped"),
    [(True, "fail", False), (False, "ok", False), (False, "fail", True), (False, "hang", True)],
    ids=["present", "pulled", "pull-refused", "pull-hangs"],
)
def test_ensure_base_falls_back_to_debootstrap(
    made: list[object], present: bool, pull: str, debootstrapped: bool
) -> None:
    engine = FakeEngine(images={BASE_IMAGE: {}} if present else {}, pull=pull)
    notes: list[str] = []
    ensure_base(engine, progress=notes.append)
    engine.release.set()
    assert made == ([engine] if debootstrapped else [])
    assert any("debootstrap" in note for note in notes) is debootstrapped
