"""JSON, SVG and plain-text artifacts.

Each reads a bounded number of bytes and refuses what would make the parser itself the attack
surface: JSON nested deeper than the interpreter's stack (RecursionError), XML entity
declarations (billion laughs), bytes that are not UTF-8.
"""

from __future__ import annotations

import codecs
import io
import json
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

from selfcorrect_action.contract import ArtifactSpec
from selfcorrect_action.evaluation import checks
from selfcorrect_action.evaluation.sniff import describe, read_head, sniff
from selfcorrect_action.taxonomy import Check

# Parsed in memory: a pathological 16 MB document costs hundreds of MB, so keep these small.
JSON_MAX_BYTES = 8 * 1024 * 1024
SVG_MAX_BYTES = 4 * 1024 * 1024
TXT_CHUNK_BYTES = 64 * 1024

_ENTITY = re.compile(rb"<!ENTITY", re.IGNORECASE)
_DOCTYPE = re.compile(rb"<!DOCTYPE", re.IGNORECASE)
_DECLARED_ENCODING = re.compile(rb"""encoding\s*=\s*["']([A-Za-z0-9._-]{1,40})""")
_UTF8_NAMES = frozenset({b"utf-8", b"utf8", b"us-ascii", b"ascii"})
_SVG_NAMESPACE = "{http://www.w3.org/2000/svg}"


def check_json(spec: ArtifactSpec, file: Path) -> list[Check]:
    data = _bounded_read(file, JSON_MAX_BYTES)
    if data is None:
        return [checks.failed(spec.path, "kind", f"is larger than {JSON_MAX_BYTES:,} bytes")]
    try:
        document = json.loads(data, parse_constant=_no_constant, object_pairs_hook=_unique)
    except _NotStrictJSON as exc:
        return [checks.failed(spec.path, "kind", f"expected strict JSON, found {exc}")]
    except RecursionError:
        return [checks.failed(spec.path, "kind", "expected JSON, found nesting too deep to parse")]
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}: {exc.msg}"
        found = f"a parse error at {where} in {describe(data[:512])}"
        return [checks.failed(spec.path, "kind", f"expected valid JSON, found {found}")]
    except ValueError as exc:  # bad encoding, integer with too many digits
        found = ("a number with more than 4,300 digits" if "digits" in str(exc)
                 else str(exc)[:200])
        return [checks.failed(spec.path, "kind", f"expected valid JSON, found {found}")]
    results = [checks.passed(spec.path, "kind", f"valid JSON: {_shape(document)}")]
    if spec.required_keys is not None:
        results.append(_keys(spec.path, spec.required_keys, document))
    return results


class _NotStrictJSON(ValueError):
    """What Python's json module accepts but the JSON standard (and most readers) do not."""


def _no_constant(name: str) -> Any:
    raise _NotStrictJSON(f"{name}, which is not JSON (write null, or a number as a string)")


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are all different: with a duplicate, readers disagree on
    which value counts (Python keeps the last), so a check could pass on the wrong one."""
    document: dict[str, Any] = {}
    for key, value in pairs:
        if key in document:
            raise _NotStrictJSON(f"the key {checks.listing([key], limit=1)} twice in one object")
        document[key] = value
    return document


def _shape(value: Any) -> str:
    if isinstance(value, dict):
        return f"an object with {checks.count(len(value), 'key')}"
    if isinstance(value, list):
        return f"an array of {checks.count(len(value), 'item')}"
    return f"a {type(value).__name__} ({checks.listing([str(value)], limit=1)})"


def _keys(path: str, required: list[str], document: Any) -> Check:
    if not isinstance(document, dict):
        expected = f"expected an object with keys {checks.listing(required)}"
        return checks.failed(path, "keys", f"{expected} at the top level, found {_shape(document)}")
    problems = [problem for key in required if (problem := _missing(document, key))]
    if not problems:
        return checks.passed(path, "keys", f"has {checks.listing(required)}")
    top = checks.listing(list(document))
    detail = (
        f"expected keys {checks.listing(required)}; {'; '.join(problems)}; top-level keys: {top}"
    )
    return checks.failed(path, "keys", detail)


def _missing(document: dict[str, Any], dotted: str) -> str | None:
    """None when `dotted` is present (a literal key, or a.b through nested objects), else why."""
    if dotted in document:
        return None
    node: Any = document
    walked: list[str] = []
    for part in dotted.split("."):
        if not isinstance(node, dict):
            return f"missing {dotted!r}: {'.'.join(walked)!r} is {_shape(node)}, not an object"
        if part not in node:
            where = f"{'.'.join(walked)!r} has" if walked else "the top level has"
            return f"missing {dotted!r} ({where} {checks.listing(list(node), limit=8)})"
        walked.append(part)
        node = node[part]
    return None


def check_svg(spec: ArtifactSpec, file: Path) -> list[Check]:
    data = _bounded_read(file, SVG_MAX_BYTES)
    if data is None:
        return [checks.failed(spec.path, "kind", f"is larger than {SVG_MAX_BYTES:,} bytes")]
    problem = _svg_problem(data)
    if problem:
        return [checks.failed(spec.path, "kind", f"expected an SVG document, {problem}")]
    return [checks.passed(spec.path, "kind", "well-formed SVG")]


def _svg_problem(data: bytes) -> str | None:
    head = data[:512]
    if sniff(head) != "svg" and not (sniff(head) == "txt" and head.lstrip().startswith(b"<")):
        return f"found {describe(head)}"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"found bytes that are not UTF-8 at offset {exc.start:,}"
    declared = _DECLARED_ENCODING.search(data[:256])
    if declared and declared.group(1).lower() not in _UTF8_NAMES:
        # Another declared encoding would make expat read bytes the checks below never saw.
        return f"found a declared encoding {declared.group(1).decode()!r} (only UTF-8 is read)"
    if _ENTITY.search(data) or _has_internal_subset(data):
        return "found a DOCTYPE that declares entities (refused: entity expansion attack)"
    return _root_problem(data)


def _has_internal_subset(data: bytes) -> bool:
    """Entity declarations are how billion-laughs and external-entity attacks start, and they
    live in the DOCTYPE's [...] subset. A DOCTYPE with only a public id, as matplotlib writes,
    declares nothing and is allowed. XML allows one DOCTYPE, so only the first is looked at."""
    doctype = _DOCTYPE.search(data)
    if doctype is None:
        return False
    end = data.find(b">", doctype.end())
    return b"[" in data[doctype.end() : end if end >= 0 else len(data)]


def _root_problem(data: bytes) -> str | None:
    root: str | None = None
    try:
        # iterparse keeps no tree once elements are cleared; expat itself does not recurse.
        for event, element in ElementTree.iterparse(io.BytesIO(data), events=("start", "end")):
            if root is None:
                root = element.tag
            if event == "end":
                element.clear()
    except ElementTree.ParseError as exc:
        line, column = exc.position
        return f"found XML that is not well-formed at line {line} column {column}: {exc}"
    if root not in {"svg", f"{_SVG_NAMESPACE}svg"}:
        return f"found root element <{root}> where <svg> was expected"
    return None


def check_txt(spec: ArtifactSpec, file: Path) -> list[Check]:
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0
    with file.open("rb") as handle:
        while chunk := handle.read(TXT_CHUNK_BYTES):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                return [_not_utf8(spec.path, file, offset + exc.start)]
            offset += len(chunk)
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return [_not_utf8(spec.path, file, offset)]
    return [checks.passed(spec.path, "kind", f"UTF-8 text, {checks.count(offset, 'byte')}")]


def _not_utf8(path: str, file: Path, offset: int) -> Check:
    found = describe(read_head(file))
    detail = f"expected UTF-8 text, found an invalid byte near offset {offset:,} in {found}"
    return checks.failed(path, "kind", detail)


def _bounded_read(file: Path, limit: int) -> bytes | None:
    with file.open("rb") as handle:
        data = handle.read(limit + 1)
    return None if len(data) > limit else data
