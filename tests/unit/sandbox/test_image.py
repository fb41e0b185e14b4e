from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from selfcorrect_action import __version__
from selfcorrect_action.sandbox.base_image import BASE_IMAGE
from selfcorrect_action.sandbox.image import (
    HASH_LABEL,
    PROTOCOL_LABEL,
    VERSION_LABEL,
    BuildLog,
    build_decision,
    build_labels,
    context_files,
    context_hash,
    context_labels,
    ensure_image,
    image_tag,
    runner_protocol,
    write_context_tar,
)
from tests.fakes.fake_engine import FakeEngine


@pytest.fixture
def context(tmp_path: Path) -> Path:
    root = tmp_path / "sandbox"
    (root / "site").mkdir(parents=True)
    (root / "Dockerfile").write_text("FROM debian:bookworm-slim\n")
    (root / "runner.py").write_text("print('hi')\n")
    (root / "site" / "hook.pth").write_text("import hook\n")
    return root


def test_tag_is_repository_and_package_version() -> None:
    assert image_tag("1.2.3") == "selfcorrect-sandbox:1.2.3"
    assert image_tag() == f"selfcorrect-sandbox:{__version__}"


def test_tag_names_the_context_so_two_checkouts_keep_an_image_each() -> None:
    assert image_tag("1.2.3", "ab" * 32) == "selfcorrect-sandbox:1.2.3-" + "ab" * 6
    assert image_tag(wanted_hash="0" * 64) != image_tag(wanted_hash="1" * 64)


def test_context_files_are_sorted_relative_and_skip_bytecode(context: Path) -> None:
    (context / "__pycache__").mkdir()
    (context / "__pycache__" / "runner.cpython-311.pyc").write_bytes(b"\0")
    (context / "stray.pyc").write_bytes(b"\0")
    assert context_files(context) == ["Dockerfile", "runner.py", "site/hook.pth"]


def test_hash_ignores_mtimes_and_bytecode(context: Path) -> None:
    before = context_hash(context)
    os.utime(context / "runner.py", (0, 0))
    (context / "__pycache__").mkdir()
    (context / "__pycache__" / "runner.cpython-311.pyc").write_bytes(b"\0")
    assert context_hash(context) == before


@pytest.mark.parametrize(
    "change",
    [
        lambda root: (root / "runner.py").write_text("print('bye')\n"),
        lambda root: (root / "runner.py").rename(root / "main.py"),
        lambda root: (root / "site" / "new.txt").write_text(""),
        lambda root: (root / "runner.py").chmod(0o755),
    ],
    ids=["content", "rename", "new-file", "exec-bit"],
)
def test_hash_changes_with_what_gets_built(context: Path, change) -> None:
    before = context_hash(context)
    change(context)
    assert context_hash(context) != before


def test_hash_does_not_confuse_content_with_names(tmp_path: Path) -> None:
    # Length-prefixing keeps "a"+"bc" and "ab"+"c" apart.
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    (one / "a").write_text("bc")
    (two / "ab").write_text("c")
    assert context_hash(one) != context_hash(two)


def test_decide() -> None:
    tag, wanted = "selfcorrect-sandbox:1", "h1"
    reuse = build_decision(tag=tag, existing_hash="h1", wanted_hash=wanted, force=False)
    assert not reuse.build and "reusing" in reuse.reason
    assert build_decision(tag=tag, existing_hash="h1", wanted_hash=wanted, force=True).build
    missing = build_decision(tag=tag, existing_hash=None, wanted_hash=wanted, force=False)
    assert missing.build and "no such image" in missing.reason
    stale = build_decision(tag=tag, existing_hash="h0", wanted_hash=wanted, force=False)
    assert stale.build and "changed" in stale.reason
    # Built by hand, without our label: we cannot vouch for it.
    assert build_decision(tag=tag, existing_hash="", wanted_hash=wanted, force=False).build


def test_labels_carry_hash_and_version() -> None:
    assert build_labels(wanted_hash="abc", version="9") == {HASH_LABEL: "abc", VERSION_LABEL: "9"}


def test_labels_carry_the_runners_protocol_when_it_names_one(context: Path) -> None:
    assert build_labels(wanted_hash="abc", version="9", protocol=3) == {
        HASH_LABEL: "abc", VERSION_LABEL: "9", PROTOCOL_LABEL: "3"}
    assert PROTOCOL_LABEL not in context_labels(context)  # its runner.py names none
    (context / "runner.py").write_text("import os\nPROTOCOL_VERSION = 7\n")
    assert context_labels(context, version="9") == {
        HASH_LABEL: context_hash(context), VERSION_LABEL: "9", PROTOCOL_LABEL: "7"}


@pytest.mark.parametrize(("source", "expected"), [
    ("PROTOCOL_VERSION = 3\n", 3),
    ("X = 1\nPROTOCOL_VERSION = 12  # why\n", 12),
    ("def f():\n    PROTOCOL_VERSION = 4\n", None),  # module level only
    ("PROTOCOL_VERSION = '3'\n", None),
    ("PROTOCOL_VERSION = True\n", None),
    ("PROTOCOL_VERSION: int = 3\n", None),
    ("this is not python(\n", None),
])
def test_the_protocol_is_read_from_the_runners_source(source: str, expected: int | None
                                                      ) -> None:
    assert runner_protocol(source) == expected


def test_context_tar_holds_exactly_the_hashed_files_normalised(context: Path) -> None:
    (context / "__pycache__").mkdir()
    (context / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (context / "runner.py").chmod(0o700)
    buffer = io.BytesIO()
    write_context_tar(context, buffer)
    buffer.seek(0)
    with tarfile.open(fileobj=buffer) as tar:
        members = {m.name: m for m in tar.getmembers()}
        assert sorted(members) == context_files(context)
        assert members["runner.py"].mode == 0o755
        assert members["Dockerfile"].mode == 0o644
        assert {(m.uid, m.gid, m.mtime) for m in members.values()} == {(0, 0, 0)}
        extracted = tar.extractfile("site/hook.pth")
        assert extracted is not None and extracted.read() == b"import hook\n"


def test_build_log_joins_partial_chunks_into_lines() -> None:
    log = BuildLog()
    assert log.feed({"stream": "Step 1/2 : FROM x\n ---> ab"}) == ["Step 1/2 : FROM x"]
    assert log.feed({"stream": "c\n\n"}) == [" ---> abc"]
    assert log.feed({"stream": "no newline yet"}) == []
    assert log.close() == ["no newline yet"]
    assert log.close() == []


def test_build_log_drops_the_builders_colours() -> None:
    log = BuildLog()
    assert log.feed({"stream": "\x1b[91mE: Unable to locate package x\n\x1b[0mRemoving"}) == [
        "E: Unable to locate package x"
    ]
    assert log.close() == ["Removing"]


def test_build_log_notes_image_id_and_error() -> None:
    log = BuildLog()
    assert log.feed({"aux": {"ID": "sha256:1"}}) == []
    assert log.image_id == "sha256:1"
    lines = log.feed({"error": "The command '/bin/sh -c false' returned a non-zero code: 1\n",
                      "errorDetail": {"code": 1}})  # fmt: skip
    assert lines == ["The command '/bin/sh -c false' returned a non-zero code: 1"]
    assert log.error == lines[0]


def test_build_failure_quotes_the_error_and_a_bounded_tail() -> None:
    log = BuildLog(keep=3)
    for n in range(10):
        log.feed({"stream": f"line {n}\n"})
    log.feed({"error": "E: Unable to locate package python3-nope"})
    failure = log.failure("img:1")
    text = str(failure)
    assert "building img:1 failed: E: Unable to locate package python3-nope" in text
    assert "line 8" in text and "line 7" not in text
    assert failure.hint and "--force" in failure.hint


def test_build_without_image_id_is_a_failure_too() -> None:
    assert "without an image id" in str(BuildLog().failure("img:1"))


def test_a_build_labels_the_image_with_its_runners_protocol(context: Path, tmp_path: Path
                                                            ) -> None:
    """What a prebuilt image is checked by (sandbox/prebuilt.py) is written by every build,
    from the runner.py that goes into the image."""
    (context / "runner.py").write_text("PROTOCOL_VERSION = 5\n")
    engine = FakeEngine(images={BASE_IMAGE: {}})
    tag = ensure_image(engine, context=context, tag=f"scratch-{tmp_path.name}:1")
    assert engine.images[tag] == {HASH_LABEL: context_hash(context),
                                  VERSION_LABEL: __version__, PROTOCOL_LABEL: "5"}
