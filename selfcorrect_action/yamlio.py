"""Load YAML documents into pydantic models with errors that point at file:line:col.

ruamel.yaml's round-trip loader keeps the position of every key and item, so a pydantic
error location such as ("contract", "artifacts", 0, "kind") maps back to the line the user
must edit.
"""

from __future__ import annotations

import difflib
import inspect
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, get_args

from pydantic import BaseModel, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.reader import ReaderError

from selfcorrect_action.errors import SpecError
from selfcorrect_action.fileio import FileProblem, FileTooLarge, read_bounded

ModelT = TypeVar("ModelT", bound=BaseModel)
Loc = tuple[str | int, ...]  # keys and indexes from the document's root to one node

# Hints for the pydantic error types a hand-written YAML file most often trips over.
_HINTS = {
    "extra_forbidden": "remove it, or check its spelling against the documented fields",
    "missing": "add this field",
    "literal_error": "use one of the listed values",
    "enum": "use one of the listed values",
    "int_parsing": "write a whole number",
    "int_type": "write a whole number",
    "float_parsing": "write a number",
    "float_type": "write a number",
    "finite_number": "write a finite number (not .inf or .nan)",
    "bool_parsing": "write true or false",
    "bool_type": "write true or false",
    "string_type": "write a string (quote it if YAML reads it as something else)",
    "string_too_short": "write some text, or remove the entry",
    "list_type": "write a YAML list (lines starting with '- ')",
    "dict_type": "write a mapping (key: value lines)",
    "model_type": "write a mapping (key: value lines)",
    "greater_than": "use a larger value",
    "greater_than_equal": "use a larger value",
    "less_than_equal": "use a smaller value",
}


def load_yaml_text(text: str, source: str) -> Any:
    """Parse YAML text; a syntax error becomes a SpecError at its position. Text that
    would blow up (nesting hundreds deep, aliases of lists or mappings that expand when
    copied: "billion laughs") is refused with a located SpecError before it can."""
    if (where := too_deep_at(text)) is not None:
        raise _too_deep(source, *where)
    try:
        document = YAML(typ="rt").load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        raise SpecError(
            [f"{at}: invalid YAML: {_syntax_message(exc)}"
             "\n  hint: check indentation and quoting around this position"]
        ) from exc
    except ReaderError as exc:  # a control character such as NUL: no mark, a position
        line, col = _position(text, exc.position)
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        raise SpecError([
            f"{source}:{line}:{col}: invalid YAML: character {code:#06x} is not "
            "allowed in YAML text\n  hint: remove it (or write it as an escape such as \\x07 "
            "inside double quotes)"
        ]) from exc
    except YAMLError as exc:
        raise SpecError([f"{source}: invalid YAML: {exc}"]) from exc
    except RecursionError as exc:  # ruamel recurses per level, e.g. `- - - - x`
        raise _too_deep(source, 1, 1) from exc
    except ValueError as exc:  # int() refuses more than 4,300 digits
        match = _LONG_NUMBER.search(text)
        line, col = _position(text, match.start()) if match else (1, 1)
        raise SpecError([
            f"{source}:{line}:{col}: a number too long to read (more than 4,300 digits)"
            "\n  hint: write a number of sensible size"
        ]) from exc
    # In this order: the alias check must pass before anything walks the whole document
    # (an alias bomb expands, a self-referencing alias never ends).
    checks = (
        (shared_container, "aliases of lists or mappings (*name) are not supported",
         "write the value out in full"),
        (_unencodable, "holds a lone surrogate (\\ud800-\\udfff), which is not text",
         "remove the escape, or write the character itself"),
    )
    for find, problem, hint in checks:
        if (loc := find(document)) is not None:
            line, col = locate(document, loc)
            dotted = ".".join(str(part) for part in loc) or "(top level)"
            raise SpecError([f"{source}:{line}:{col}: {dotted}: {problem}\n  hint: {hint}"])
    return document


_LONG_NUMBER = re.compile(r"\d{4301,}")


def _position(text: str, offset: int) -> tuple[int, int]:
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def _unencodable(document: Any) -> Loc | None:
    """Where a key or string value cannot be written as UTF-8 (a "\\ud800" escape in double
    quotes): it would pass validation and crash whatever writes it out later."""
    stack: list[tuple[Loc, Any]] = [((), document)]
    while stack:
        loc, node = stack.pop()
        if isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                return loc
        elif isinstance(node, dict):
            for key, value in node.items():
                stack.append(((*loc, key), key if isinstance(key, str) else None))
                stack.append(((*loc, key), value))
        elif isinstance(node, list):
            stack.extend(((*loc, index), item) for index, item in enumerate(node))
    return None


def _too_deep(source: str, line: int, col: int) -> SpecError:
    return SpecError([
        f"{source}:{line}:{col}: nested too deeply to read"
        "\n  hint: a hand-written file needs a few levels of lists and mappings, not hundreds"
    ])


# ruamel's scanner is quadratic in the depth of [ and { nesting (2,000 levels: 10-20 s)
# and its composer recurses per level; no real spec comes near this.
MAX_FLOW_DEPTH = 200


def too_deep_at(text: str) -> tuple[int, int] | None:
    """Line and column (1-based) of the first [ or { nested deeper than MAX_FLOW_DEPTH,
    counted crudely (brackets in quoted text count too), which is enough to refuse hostile
    text before the parser spends seconds on it. None when the text stays within."""
    depth, line, line_start = 0, 1, 0
    for offset, char in enumerate(text):
        if char == "\n":
            line, line_start = line + 1, offset + 1
        elif char in "[{":
            depth += 1
            if depth > MAX_FLOW_DEPTH:
                return line, offset - line_start + 1
        elif char in "]}":
            depth = max(depth - 1, 0)
    return None


def shared_container(document: Any) -> Loc | None:
    """Where a list or mapping appears a second time, i.e. an alias such as `*base`.

    Copying such a document for validation expands every alias, so ten nested aliases of
    ten items each ("billion laughs") would hang the action on a hostile issue body. The
    walk visits each container once, in document order, so an anchor comes before its alias.
    """
    seen: set[int] = set()
    stack: list[tuple[Loc, Any]] = [((), document)]
    while stack:
        loc, node = stack.pop()
        if not isinstance(node, dict | list):
            continue
        if id(node) in seen:
            return loc
        seen.add(id(node))
        items = list(node.items() if isinstance(node, dict) else enumerate(node))
        stack.extend(((*loc, key), child) for key, child in reversed(items))
    return None


def _syntax_message(exc: MarkedYAMLError) -> str:
    """The problem, plus where the construct it belongs to began: an unclosed quote is
    reported at the end of the file, but the line to fix is where the quote opened."""
    mark = exc.context_mark
    if not (exc.context and exc.problem and mark):
        return str(exc.problem or exc.context)
    return f"{exc.context} at {mark.line + 1}:{mark.column + 1}, {exc.problem}"


# Hand-written YAML (specs, contracts) is a page or two; anything larger is a mistake or an
# attack, and is refused before it is read whole.
MAX_YAML_BYTES = 256 * 1024


def read_text_file(path: Path, *, max_bytes: int = MAX_YAML_BYTES, what: str = "this file",
                   too_large_hint: str = "keep the file to its fields") -> str:
    """A hand-written text file's content. Problems come back as one SpecError located at
    1:1 (or at the first byte that is not UTF-8). Never reads more than max_bytes + 1 bytes,
    and only from a regular file: `/dev/zero` is a path too."""
    try:
        raw = read_bounded(path, max_bytes)
    except FileTooLarge as exc:
        raise too_large(str(path), max_bytes, what, too_large_hint) from exc
    except FileProblem as exc:
        raise _whole_file(path, exc.problem, exc.hint) from exc
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, col = _text_position(raw, exc.start)
        raise SpecError([
            f"{path}:{line}:{col}: not UTF-8 text (byte 0x{raw[exc.start]:02x})"
            "\n  hint: save the file as UTF-8"
        ]) from exc


def too_large(source: str, max_bytes: int, what: str, hint: str) -> SpecError:
    return SpecError([
        f"{source}:1:1: larger than {max_bytes // 1024} KiB, the most {what} may be"
        f"\n  hint: {hint}"
    ])


def _whole_file(path: Path, message: str, hint: str) -> SpecError:
    # 1:1 like ruff's E902: editors and problem matchers expect a position on every line.
    return SpecError([f"{path}:1:1: {message}\n  hint: {hint}"])


def _text_position(raw: bytes, offset: int) -> tuple[int, int]:
    line_start = raw.rfind(b"\n", 0, offset) + 1
    column = len(raw[line_start:offset].decode("utf-8", errors="replace"))
    return raw.count(b"\n", 0, offset) + 1, column + 1


def read_yaml_file(path: Path) -> tuple[str, Any]:
    text = read_text_file(path)
    return text, load_yaml_text(text, str(path))


def validate(model: type[ModelT], data: Any, source: str, *, prefix: Sequence[Any] = ()) -> ModelT:
    """Validate plain YAML data against a model, raising SpecError with every problem."""
    if data is None:
        data = {}
    try:
        return model.model_validate(to_plain(data))
    except ValidationError as exc:
        raise SpecError(describe_errors(exc, data, source, prefix=prefix, model=model)) from exc


def load_model(model: type[ModelT], path: Path) -> ModelT:
    _, data = read_yaml_file(path)
    if data is not None and not isinstance(data, dict):
        raise SpecError([f"{path}:1:1: expected a mapping of fields at the top level"])
    return validate(model, data, str(path))


def describe_errors(
    exc: ValidationError,
    data: Any,
    source: str,
    *,
    prefix: Sequence[Any] = (),
    default_hint: str | None = None,
    model: type[BaseModel] | None = None,
) -> list[str]:
    """One `source:line:col: dotted.path: message` line per error, each with a hint when known.

    A validator can carry its own hint in the error context (PydanticCustomError with
    ``{"hint": ...}``); `default_hint` covers the rest, e.g. a pointer to the docs. With
    `model`, an unknown field's hint names the closest known field.
    """
    problems = []
    for error in exc.errors(include_url=False):
        # A tagged union's tag, "(a mapping)", is pydantic's, not a field the user wrote.
        loc = tuple(part for part in error["loc"]
                    if not (isinstance(part, str) and part.startswith("(")))
        line, col = locate(data, loc)
        dotted = ".".join(str(part) for part in (*prefix, *loc)) or "(top level)"
        message = _message(error)
        hint = (
            error.get("ctx", {}).get("hint")
            or (_unknown_field_hint(model, loc) if error["type"] == "extra_forbidden" else None)
            or _HINTS.get(error["type"])
            or default_hint
        )
        text = f"{source}:{line}:{col}: {dotted}: {message}"
        if hint:
            text += f"\n  hint: {hint}"
        problems.append(text)
    return problems


def _unknown_field_hint(model: type[BaseModel] | None, loc: tuple[Any, ...]) -> str | None:
    """`jduge` → "did you mean judge?"; pydantic's error does not say what is allowed."""
    parent = _model_at(model, loc[:-1]) if model else None
    if parent is None or not loc or not isinstance(loc[-1], str):
        return None
    known = list(parent.model_fields)
    close = difflib.get_close_matches(loc[-1], known, n=1)
    if close:
        return f"did you mean {close[0]}?"
    return f"remove it; known fields here: {', '.join(known)}"


def _model_at(model: type[BaseModel], loc: Sequence[Any]) -> type[BaseModel] | None:
    current: type[BaseModel] | None = model
    for part in loc:
        if isinstance(part, int):
            continue  # a list item: the list's model was found at its field
        if current is None or part not in current.model_fields:
            return None
        current = _nested_model(current.model_fields[part].annotation)
    return current


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    if inspect.isclass(annotation) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):  # list[X], X | None, Annotated[X, ...]
        found = _nested_model(arg)
        if found:
            return found
    return None


def _message(error: Mapping[str, Any]) -> str:
    if error["type"] == "extra_forbidden":
        return "unknown field"
    got = error.get("input")
    message = str(error["msg"])
    if error["type"] not in ("missing", "blank") and not isinstance(got, dict | list):
        message += f"; got {_shown(got)}"
    return message


MAX_SHOWN_CHARS = 200


def _shown(value: Any) -> str:
    """The value as the message quotes it, bounded: repr of a huge int raises ValueError
    (Python's 4,300-digit limit: `timeout_s: 0xfff…` crashed validate) and a huge string
    would flood the output."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 10_000:
        return "a number with thousands of digits"
    text = repr(value)
    return text if len(text) <= MAX_SHOWN_CHARS else text[:MAX_SHOWN_CHARS] + "…"


def locate(data: Any, loc: Sequence[Any]) -> tuple[int, int]:
    """Line and column (1-based) of the deepest node of `loc` that exists in `data`."""
    line, col = 1, 1
    if hasattr(data, "lc") and data.lc.line is not None:
        line, col = data.lc.line + 1, data.lc.col + 1
    node = data
    for part in loc:
        position = _child_position(node, part)
        if position is None:
            break
        line, col = position
        node = node[part]
    return line, col


def _child_position(node: Any, part: Any) -> tuple[int, int] | None:
    if isinstance(node, CommentedMap) and part in node:
        # A value's position is more useful than its key's for a wrong type or value,
        # but a scalar value has no position of its own: use the key's.
        line, col = node.lc.key(part)
        return line + 1, col + 1
    if isinstance(node, CommentedSeq) and isinstance(part, int) and 0 <= part < len(node):
        line, col = node.lc.item(part)
        return line + 1, col + 1
    return None


def to_plain(data: Any) -> Any:
    """ruamel's commented containers as plain dicts/lists, for pydantic."""
    if isinstance(data, dict):
        return {str(key): to_plain(value) for key, value in data.items()}
    if isinstance(data, list):
        return [to_plain(item) for item in data]
    return data
