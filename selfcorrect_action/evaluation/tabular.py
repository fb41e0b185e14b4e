"""CSV artifacts: UTF-8 text with a header that holds the expected columns and enough data rows.

The file may be huge (a script stuck in a loop writing rows) or hostile (one 30 MB quoted
field): it is streamed with a cap on the bytes read, on the length of a line and on the size of
one field, and reading stops as soon as `min_rows` is proven.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from selfcorrect_action.contract import ArtifactSpec
from selfcorrect_action.evaluation import checks
from selfcorrect_action.evaluation.sniff import describe, read_head, sniff
from selfcorrect_action.taxonomy import Check

CSV_MAX_BYTES = 64 * 1024 * 1024
CSV_MAX_LINE_BYTES = 1024 * 1024
CSV_FIELD_LIMIT = 1024 * 1024
# What sniffing may call a CSV: one column has no comma, and a header may start with "[".
_CSV_LIKE = frozenset({"csv", "txt", "json"})


class _Unreadable(Exception):
    pass


@dataclass(frozen=True)
class _Scan:
    header: list[str]
    rows: int  # data rows seen, blank lines excluded; counting stops once there are enough


def check_csv(spec: ArtifactSpec, file: Path) -> list[Check]:
    head = read_head(file)
    if sniff(head) not in _CSV_LIKE:
        return [checks.failed(spec.path, "kind", f"expected CSV text, found {describe(head)}")]
    try:
        scan = _scan(file, enough_rows=spec.min_rows or 0)
    except _Unreadable as exc:
        return [checks.failed(spec.path, "kind", f"expected readable CSV, {exc}")]
    header = f"header of {checks.count(len(scan.header), 'column')}"
    results = [checks.passed(spec.path, "kind", f"CSV with a {header}")]
    if spec.columns is not None:
        results.append(_columns(spec.path, spec.columns, scan.header))
    if spec.min_rows is not None:
        results.append(_rows(spec.path, spec.min_rows, scan))
    return results


def _scan(file: Path, *, enough_rows: int) -> _Scan:
    with _field_limit(CSV_FIELD_LIMIT), file.open("rb") as handle:
        rows = csv.reader(_bounded_lines(handle))
        try:
            header = _first_non_blank(rows)
            if header is None:
                raise _Unreadable("found no header row (the file has no non-blank line)")
            count = 0
            for row in rows:
                count += _is_data(row)
                if count >= enough_rows:
                    break
            return _Scan(header, count)
        except csv.Error as exc:
            raise _Unreadable(f"found malformed CSV: {exc}") from exc


def _first_non_blank(rows: Iterator[list[str]]) -> list[str] | None:
    for row in rows:
        if _is_data(row):
            return [cell.strip() for cell in row]
    return None


def _is_data(row: list[str]) -> bool:
    return any(cell.strip() for cell in row)


def _bounded_lines(handle: BinaryIO) -> Iterator[str]:
    """Lines decoded one at a time, so bytes after the last row needed are never decoded."""
    consumed = 0
    number = 0
    while line := handle.readline(CSV_MAX_LINE_BYTES):
        number += 1
        if len(line) >= CSV_MAX_LINE_BYTES and not line.endswith(b"\n"):
            raise _Unreadable(f"found a line longer than {CSV_MAX_LINE_BYTES:,} bytes")
        consumed += len(line)
        if consumed > CSV_MAX_BYTES:
            raise _Unreadable(f"stopped after {CSV_MAX_BYTES:,} bytes without an answer")
        yield _decode(line, number)


def _decode(line: bytes, number: int) -> str:
    # utf-8-sig on the first line: pandas' to_csv(encoding="utf-8-sig") writes a BOM that would
    # otherwise stick to the first column name.
    try:
        return line.decode("utf-8-sig" if number == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        raise _Unreadable(
            f"found bytes that are not UTF-8 on line {number:,} (byte {line[exc.start]:#04x})"
        ) from exc


@contextmanager
def _field_limit(limit: int) -> Iterator[None]:
    # csv.field_size_limit is process-wide and other code commonly raises it to sys.maxsize;
    # pin it for the scan and give the caller's value back.
    previous = csv.field_size_limit(limit)
    try:
        yield
    finally:
        csv.field_size_limit(previous)


def _columns(path: str, expected: list[str], header: list[str]) -> Check:
    present = set(header)
    missing = [name for name in expected if name.strip() not in present]
    if not missing:
        return checks.passed(path, "columns", f"header has {checks.listing(expected)}")
    detail = (
        f"expected columns {checks.listing(expected)}; missing {checks.listing(missing)}; "
        f"the header has {checks.listing(header)}"
    )
    return checks.failed(path, "columns", detail + _case_hint(missing, header))


def _case_hint(missing: list[str], header: list[str]) -> str:
    by_folded = {name.casefold(): name for name in header}
    near = [
        f"{by_folded[name.strip().casefold()]!r} for {name!r}"
        for name in missing
        if name.strip().casefold() in by_folded
    ]
    return f" (names are case-sensitive: found {', '.join(near[:5])})" if near else ""


def _rows(path: str, minimum: int, scan: _Scan) -> Check:
    if scan.rows >= minimum:
        return checks.passed(path, "rows", f"at least {checks.count(minimum, 'data row')}")
    return checks.failed(
        path,
        "rows",
        f"expected at least {checks.count(minimum, 'data row')} (header and blank lines "
        f"excluded), found {scan.rows:,}",
    )
