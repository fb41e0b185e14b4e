from __future__ import annotations

import csv
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from selfcorrect_action.evaluation import tabular
from selfcorrect_action.evaluation.tabular import check_csv

from .conftest import spec

SALES = "date,region,total\n2024-01-01,north,10\n2024-01-02,south,12\n2024-01-03,east,9\n"


def _checks(file: Path, **options: Any) -> dict[str, tuple[bool, str]]:
    results = check_csv(spec(file.name, "csv", **options), file)
    return {c.name.split(": ", 1)[1]: (c.passed, c.detail) for c in results}


def test_header_and_rows_pass(write) -> None:
    results = _checks(write("sales.csv", SALES), columns=["date", "total"], min_rows=3)
    assert results == {
        "kind": (True, "sales.csv: CSV with a header of 3 columns"),
        "columns": (True, "sales.csv: header has 'date', 'total'"),
        "rows": (True, "sales.csv: at least 3 data rows"),
    }


def test_missing_columns_name_what_is_missing_and_what_exists(write) -> None:
    passed, detail = _checks(write("s.csv", SALES), columns=["date", "amount", "Region"])["columns"]
    assert not passed
    assert detail == (
        "s.csv: expected columns 'date', 'amount', 'Region'; missing 'amount', 'Region'; "
        "the header has 'date', 'region', 'total' "
        "(names are case-sensitive: found 'region' for 'Region')"
    )


def test_header_cells_are_trimmed_but_otherwise_exact(write) -> None:
    file = write("s.csv", " date ,  total\n1,2\n")
    assert _checks(file, columns=["date", "total"])["columns"][0]
    assert not _checks(file, columns=["Date"])["columns"][0]


def test_utf8_bom_does_not_stick_to_the_first_column(write) -> None:
    file = write("s.csv", "\ufeffdate,total\n1,2\n".encode())
    assert _checks(file, columns=["date"])["columns"][0]


def test_quoted_header_with_commas(write) -> None:
    file = write("s.csv", '"city, state",total\n"Austin, TX",3\n')
    assert _checks(file, columns=["city, state"], min_rows=1)["columns"][0]


def test_too_few_rows_counts_data_rows_only(write) -> None:
    file = write("s.csv", "\n" + SALES + "\n\n,,\n")
    passed, detail = _checks(file, min_rows=5)["rows"]
    assert not passed
    assert detail == (
        "s.csv: expected at least 5 data rows (header and blank lines excluded), found 3"
    )


def test_header_only(write) -> None:
    passed, detail = _checks(write("s.csv", "date,total\n"), min_rows=1)["rows"]
    assert not passed and detail.endswith("found 0")


def test_min_rows_zero_passes_on_header_only(write) -> None:
    assert _checks(write("s.csv", "a,b\n"), min_rows=0)["rows"][0]


def test_reading_stops_once_min_rows_is_proven(write) -> None:
    # Invalid UTF-8 after the first rows: only a scan that stops early passes.
    rows = "".join(f"2024-01-{day:02},north,{day}\n" for day in range(1, 29))
    file = write("s.csv", (SALES + rows).encode() + b"\xff\xfe broken\n" * 10)
    assert file.read_bytes().index(b"\xff") > 512  # past what sniffing reads
    assert _checks(file, min_rows=2)["rows"][0]
    assert not _checks(file, min_rows=50)["kind"][0]


def test_huge_file_scan_is_capped(write, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tabular, "CSV_MAX_BYTES", 10_000)
    file = write("s.csv", "a,b\n" + "1,2\n" * 10_000)
    results = _checks(file, min_rows=100_000)
    assert results["kind"] == (
        False,
        "s.csv: expected readable CSV, stopped after 10,000 bytes without an answer",
    )
    assert _checks(file, min_rows=10)["rows"][0]


def test_one_huge_line_is_refused(write, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tabular, "CSV_MAX_LINE_BYTES", 1000)
    file = write("s.csv", "a," + "x" * 5000 + "\n1,2\n")
    passed, detail = _checks(file)["kind"]
    assert not passed and "a line longer than 1,000 bytes" in detail


def test_huge_quoted_field_hits_the_field_limit(write) -> None:
    field = "line\n" * 300_000  # 1.5 MB across many short lines: the line cap does not see it
    file = write("s.csv", f'a,b\n1,"{field}"\n2,3\n')
    passed, detail = _checks(file, min_rows=2)["kind"]
    assert not passed
    assert "malformed CSV: field larger than field limit" in detail


def test_field_size_limit_is_restored(write) -> None:
    previous = csv.field_size_limit(sys.maxsize)
    try:
        _checks(write("s.csv", SALES), min_rows=1)
        assert csv.field_size_limit() == sys.maxsize
    finally:
        csv.field_size_limit(previous)


@pytest.mark.parametrize(
    ("content", "found"),
    [
        (b"", "found an empty file"),
        ("<!DOCTYPE html><html><body>502 Bad Gateway</body></html>", "found an HTML page starting"),
        (b"\x00\x01\x02binary\x00", "found binary data starting 00 01 02"),
        ('<svg xmlns="http://www.w3.org/2000/svg"/>', "found an SVG document starting"),
    ],
)
def test_not_csv(write, content: bytes | str, found: str) -> None:
    passed, detail = _checks(write("s.csv", content))["kind"]
    assert not passed
    assert detail.startswith("s.csv: expected CSV text, ") and found in detail


def test_png_saved_as_csv(tmp_path: Path) -> None:
    file = tmp_path / "s.csv"
    Image.new("RGB", (10, 10)).save(file, "PNG")
    assert _checks(file)["kind"] == (False, "s.csv: expected CSV text, found a PNG image")


def test_blank_lines_only(write) -> None:
    passed, detail = _checks(write("s.csv", "\n\n  \n"))["kind"]
    assert not passed and "no header row" in detail


def test_latin1_bytes_are_not_utf8(write) -> None:
    file = write("s.csv", "city,total\nM\u00fcnchen,3\n".encode("latin-1"))
    passed, detail = _checks(file, min_rows=1)["kind"]
    assert not passed and "not UTF-8" in detail


def test_single_column_csv(write) -> None:
    results = _checks(write("s.csv", "name\nada\ngrace\n"), columns=["name"], min_rows=2)
    assert all(passed for passed, _ in results.values())
