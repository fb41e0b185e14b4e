from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.evaluation import documents
from selfcorrect_action.evaluation.documents import check_json, check_svg, check_txt

from .conftest import REAL_ARTIFACTS, spec


def _json(file: Path, **options: Any) -> dict[str, tuple[bool, str]]:
    results = check_json(spec(file.name, "json", **options), file)
    return {c.name.split(": ", 1)[1]: (c.passed, c.detail) for c in results}


REPORT = {"total": 41, "meta": {"source": "sales.csv", "rows": 3}, "a.b": 1, "items": [1, 2]}


def test_json_with_required_keys_passes(write) -> None:
    file = write("r.json", json.dumps(REPORT))
    results = _json(file, required_keys=["total", "meta.source", "a.b"])
    assert results == {
        "kind": (True, "r.json: valid JSON: an object with 4 keys"),
        "keys": (True, "r.json: has 'total', 'meta.source', 'a.b'"),
    }


def test_missing_nested_key_says_what_the_parent_has(write) -> None:
    file = write("r.json", json.dumps(REPORT))
    passed, detail = _json(file, required_keys=["total", "meta.author", "count"])["keys"]
    assert not passed
    assert detail == (
        "r.json: expected keys 'total', 'meta.author', 'count'; "
        "missing 'meta.author' ('meta' has 'source', 'rows'); "
        "missing 'count' (the top level has 'total', 'meta', 'a.b', 'items'); "
        "top-level keys: 'total', 'meta', 'a.b', 'items'"
    )


def test_dotted_key_through_a_non_object(write) -> None:
    file = write("r.json", json.dumps(REPORT))
    passed, detail = _json(file, required_keys=["items.first"])["keys"]
    assert not passed
    assert "'items' is an array of 2 items, not an object" in detail


def test_top_level_array_fails_keys(write) -> None:
    passed, detail = _json(write("r.json", "[1, 2, 3]"), required_keys=["total"])["keys"]
    assert not passed
    assert detail == (
        "r.json: expected an object with keys 'total' at the top level, found an array of 3 items"
    )


def test_keys_not_checked_unless_asked(write) -> None:
    assert list(_json(write("r.json", "[]"))) == ["kind"]


def test_invalid_json_gives_position_and_start(write) -> None:
    passed, detail = _json(write("r.json", '{"total": 41,\n "meta": }'))["kind"]
    assert not passed
    assert detail.startswith(
        "r.json: expected valid JSON, found a parse error at line 2 column 10: Expecting value"
    )
    assert 'JSON text starting \'{"total": 41, "meta": }\'' in detail


def test_text_instead_of_json(write) -> None:
    passed, detail = _json(write("r.json", "Error: API key missing\n"))["kind"]
    assert not passed and "in text starting 'Error: API key missing'" in detail


@pytest.mark.parametrize("opener", ["[", '{"a":'])
def test_deeply_nested_json_fails_cleanly(write, opener: str) -> None:
    file = write("deep.json", opener * 100_000 + "1" + ("]" if opener == "[" else "}") * 100_000)
    passed, detail = _json(file, required_keys=["a"])["kind"]
    assert not passed
    assert detail == "deep.json: expected JSON, found nesting too deep to parse"


def test_integer_with_too_many_digits(write) -> None:
    passed, detail = _json(write("r.json", "1" * 10_000))["kind"]
    assert not passed and "a number with more than 4,300 digits" in detail


def test_json_that_is_not_utf8(write) -> None:
    passed, _ = _json(write("r.json", '{"city": "M\u00fcnchen"}'.encode("latin-1")))["kind"]
    assert not passed


def test_json_size_cap(write, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(documents, "JSON_MAX_BYTES", 100)
    passed, detail = _json(write("r.json", json.dumps(list(range(100)))))["kind"]
    assert (passed, detail) == (False, "r.json: is larger than 100 bytes")


def test_scalar_json(write) -> None:
    assert _json(write("r.json", '"hello"'))["kind"] == (
        True,
        "r.json: valid JSON: a str ('hello')",
    )


# --- SVG ---------------------------------------------------------------------------------

LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE svg [
  <!ENTITY lol "lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
  <!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<svg xmlns="http://www.w3.org/2000/svg"><text>&lol9;</text></svg>
"""

PLAIN_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect/></svg>'


def _svg(file: Path) -> tuple[bool, str]:
    [result] = check_svg(spec(file.name, "svg"), file)
    return result.passed, result.detail


def test_real_matplotlib_svg_with_public_doctype_passes(tmp_path: Path) -> None:
    file = Path(shutil.copy(REAL_ARTIFACTS / "matplotlib_line_chart.svg", tmp_path / "c.svg"))
    assert b"<!DOCTYPE svg PUBLIC" in file.read_bytes()
    assert _svg(file) == (True, "c.svg: well-formed SVG")


def test_plain_svg_without_namespace_passes(write) -> None:
    assert _svg(write("c.svg", "<svg><g/></svg>"))[0]
    assert _svg(write("d.svg", PLAIN_SVG))[0]


def test_billion_laughs_is_refused_without_expansion(write) -> None:
    started = time.perf_counter()
    passed, detail = _svg(write("c.svg", LAUGHS))
    assert time.perf_counter() - started < 0.5
    assert not passed
    assert "DOCTYPE that declares entities (refused: entity expansion attack)" in detail


@pytest.mark.parametrize(
    "doctype",
    [
        '<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]>',
        "<!DOCTYPE svg [<!ELEMENT svg ANY>]>",  # an internal subset, even without ENTITY
        '<!doctype svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x.dtd"><!ENTITY y "z">',
    ],
)
def test_entity_declarations_are_refused(write, doctype: str) -> None:
    passed, detail = _svg(write("c.svg", doctype + "\n<svg>&x;</svg>"))
    assert not passed and "refused" in detail


@pytest.mark.parametrize("encoding", ["UTF-16", "ISO-8859-1"])
def test_other_declared_encodings_are_refused(write, encoding: str) -> None:
    passed, detail = _svg(write("c.svg", f'<?xml version="1.0" encoding="{encoding}"?>{PLAIN_SVG}'))
    assert not passed and f"declared encoding '{encoding}'" in detail


def test_wrong_root_element(write) -> None:
    content = '<?xml version="1.0"?><html><body><svg/></body></html>'
    assert _svg(write("c.svg", content)) == (
        False,
        "c.svg: expected an SVG document, found root element <html> where <svg> was expected",
    )


def test_truncated_svg_is_not_well_formed(tmp_path: Path) -> None:
    data = (REAL_ARTIFACTS / "matplotlib_line_chart.svg").read_bytes()
    file = tmp_path / "c.svg"
    file.write_bytes(data[: len(data) // 2])
    passed, detail = _svg(file)
    assert not passed and "found XML that is not well-formed at line" in detail


def test_text_instead_of_svg(write) -> None:
    assert _svg(write("c.svg", "Error: could not render\n")) == (
        False,
        "c.svg: expected an SVG document, found text starting 'Error: could not render'",
    )


def test_png_instead_of_svg(tmp_path: Path) -> None:
    file = Path(shutil.copy(REAL_ARTIFACTS / "matplotlib_line_chart.png", tmp_path / "c.svg"))
    assert _svg(file) == (False, "c.svg: expected an SVG document, found a PNG image")


def test_deeply_nested_svg_does_not_recurse(write) -> None:
    depth = 100_000
    assert _svg(write("c.svg", "<svg>" + "<g>" * depth + "</g>" * depth + "</svg>"))[0]


def test_invalid_utf8_in_svg_body(write) -> None:
    body = PLAIN_SVG.encode() + b"<!-- " + b" " * 1000 + b"\xff -->"
    passed, detail = _svg(write("c.svg", body))
    offset = body.index(b"\xff")
    assert not passed and f"not UTF-8 at offset {offset:,}" in detail


def test_svg_size_cap(write, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(documents, "SVG_MAX_BYTES", 10)
    assert _svg(write("c.svg", PLAIN_SVG)) == (False, "c.svg: is larger than 10 bytes")


# --- txt ---------------------------------------------------------------------------------


def _txt(file: Path) -> tuple[bool, str]:
    [result] = check_txt(spec(file.name, "txt"), file)
    return result.passed, result.detail


def test_utf8_text_passes(write) -> None:
    assert _txt(write("s.txt", "Total: 41 \u20ac\n")) == (True, "s.txt: UTF-8 text, 14 bytes")


def test_empty_text_passes_as_text(write) -> None:
    assert _txt(write("s.txt", b"")) == (True, "s.txt: UTF-8 text, 0 bytes")


def test_invalid_byte_far_into_the_file(write) -> None:
    file = write("s.txt", b"a" * 200_000 + b"\xff" + b"b" * 10)
    passed, detail = _txt(file)
    assert not passed
    assert detail == (
        "s.txt: expected UTF-8 text, found an invalid byte near offset 200,000 in "
        "text starting 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…'"
    )


def test_multibyte_character_cut_at_the_end(write) -> None:
    passed, detail = _txt(write("s.txt", "caf\u00e9".encode()[:-1]))
    assert not passed and "near offset 4" in detail


def test_binary_as_text(tmp_path: Path) -> None:
    file = Path(shutil.copy(REAL_ARTIFACTS / "matplotlib_line_chart.png", tmp_path / "s.txt"))
    passed, detail = _txt(file)
    assert not passed and detail.endswith("in a PNG image")


@pytest.mark.parametrize(
    ("content", "found"),
    [
        ('{"total": NaN}', "NaN, which is not JSON"),
        ('{"total": -Infinity}', "-Infinity, which is not JSON"),
        ('{"total": 1, "total": null}', "the key 'total' twice in one object"),
        ('{"a": {"x": 1, "x": 2}}', "the key 'x' twice in one object"),
        ('{"n": ' + "7" * 5000 + "}", "a number with more than 4,300 digits"),
    ],
)
def test_json_that_strict_readers_refuse_fails_the_kind_check(
    write, content: str, found: str
) -> None:
    results = check_json(spec("s.json", "json", required_keys=["total"]),
                         write("s.json", content))
    assert [r.passed for r in results] == [False]
    assert found in results[0].detail
