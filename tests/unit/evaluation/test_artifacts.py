from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from selfcorrect_action.evaluation.artifacts import check_artifact, find_record
from selfcorrect_action.sandbox.models import ArtifactRecord
from selfcorrect_action.taxonomy import Check

from .conftest import draw_chart, record_for, spec


def _summary(results: list[Check]) -> list[tuple[str, bool]]:
    return [(c.name, c.passed) for c in results]


def test_a_good_chart_runs_every_check_in_order(tmp_path: Path) -> None:
    file = tmp_path / "chart.png"
    draw_chart().save(file)
    chart = spec("chart.png", "png", min_bytes=100, max_bytes=1_000_000, non_blank=True)
    assert _summary(check_artifact(chart, record_for(file))) == [
        ("chart.png: exists", True),
        ("chart.png: size", True),
        ("chart.png: kind", True),
        ("chart.png: not blank", True),
    ]


def test_missing_artifact_points_at_a_near_miss() -> None:
    [check] = check_artifact(
        spec("chart.png", "png"), None, written=["Chart.PNG", "data.csv", "/work/chart.jpg"]
    )
    assert not check.passed
    assert check.detail == (
        "chart.png: expected the script to write this file, found no such file in the work dir; "
        "similar names written: 'Chart.PNG', 'chart.jpg'"
    )


def test_missing_artifact_lists_what_was_written() -> None:
    [check] = check_artifact(spec("report.json", "json"), None, written=["out.txt"])
    assert check.detail.endswith("found no such file in the work dir; files written: 'out.txt'")
    [check] = check_artifact(spec("report.json", "json"), None)
    assert check.detail.endswith("files written: (none)")


def test_rejected_artifact_fails_with_the_reason() -> None:
    record = ArtifactRecord(path="chart.png", size=0, rejected="a symbolic link (not followed)")
    [check] = check_artifact(spec("chart.png", "png"), record)
    assert (check.name, check.passed) == ("chart.png: exists", False)
    assert check.detail == (
        "chart.png: the script wrote it (0 bytes) but it was not copied out: "
        "a symbolic link (not followed)"
    )


def test_record_without_host_copy_fails() -> None:
    [check] = check_artifact(spec("a.txt", "txt"), ArtifactRecord(path="a.txt", size=3))
    assert not check.passed and "no copy reached the host" in check.detail


def test_host_copy_that_vanished(tmp_path: Path) -> None:
    record = ArtifactRecord(path="a.txt", size=3, host_path=tmp_path / "gone.txt")
    [check] = check_artifact(spec("a.txt", "txt"), record)
    assert not check.passed and "cannot be read: No such file or directory" in check.detail


def test_host_copy_that_is_a_symlink_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "secret"
    target.write_text("top secret")
    link = tmp_path / "a.txt"
    os.symlink(target, link)
    [check] = check_artifact(
        spec("a.txt", "txt"), ArtifactRecord(path="a.txt", size=3, host_path=link)
    )
    assert not check.passed and check.detail.endswith("is not a regular file")


def test_host_copy_that_is_a_directory(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    [check] = check_artifact(
        spec("out", "any"), ArtifactRecord(path="out", size=0, host_path=folder)
    )
    assert not check.passed and "not a regular file" in check.detail


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"min_bytes": 1000}, "expected at least 1,000 bytes, found 5 bytes"),
        ({"max_bytes": 4}, "expected at most 4 bytes, found 5 bytes"),
        ({"min_bytes": 10, "max_bytes": 20}, "expected at least 10 and at most 20 bytes, found 5"),
    ],
)
def test_size_bounds(tmp_path: Path, options: dict[str, Any], expected: str) -> None:
    file = tmp_path / "a.txt"
    file.write_text("hello")
    results = check_artifact(spec("a.txt", "txt", **options), record_for(file))
    assert _summary(results) == [
        ("a.txt: exists", True),
        ("a.txt: size", False),
        ("a.txt: kind", True),
    ]
    assert expected in results[1].detail


def test_any_kind_only_needs_to_exist(tmp_path: Path) -> None:
    file = tmp_path / "blob.bin"
    file.write_bytes(b"\x00\xff" * 10)
    assert _summary(check_artifact(spec("blob.bin"), record_for(file))) == [
        ("blob.bin: exists", True)
    ]


def test_empty_any_artifact_fails_only_on_min_bytes(tmp_path: Path) -> None:
    file = tmp_path / "out.bin"
    file.write_bytes(b"")
    assert _summary(check_artifact(spec("out.bin", min_bytes=1), record_for(file))) == [
        ("out.bin: exists", True),
        ("out.bin: size", False),
    ]


def test_kind_dispatch(tmp_path: Path) -> None:
    file = tmp_path / "photo.jpg"
    Image.new("RGB", (8, 8), "white").save(file, "JPEG")
    results = check_artifact(spec("photo.jpg", "jpeg", non_blank=True), record_for(file))
    assert _summary(results) == [
        ("photo.jpg: exists", True),
        ("photo.jpg: kind", True),
        ("photo.jpg: not blank", False),
    ]


@pytest.mark.parametrize("recorded", ["out/chart.png", "./out/chart.png", "/work/out/chart.png"])
def test_find_record_normalises_paths(recorded: str) -> None:
    records = [ArtifactRecord(path="other.png", size=1), ArtifactRecord(path=recorded, size=2)]
    found = find_record(records, "out/chart.png")
    assert found is not None and found.size == 2


def test_find_record_misses() -> None:
    records = [
        ArtifactRecord(path="work/chart.png", size=1),
        ArtifactRecord(path="chart.PNG", size=1),
    ]
    assert find_record(records, "chart.png") is None
