"""A body written by the issue form: each section becomes its spec field, and every
problem points at the section (and the line in it) where it was written."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any, NamedTuple

from ruamel.yaml import YAML

from selfcorrect_action import yamlio
from selfcorrect_action.errors import SpecError
from selfcorrect_action.github.issue_body import (
    Fence,
    Scan,
    closes,
    leading_blank,
    opens,
)
from selfcorrect_action.github.issue_fields import (
    BY_KEY,
    FORM_FIELDS,
    JUDGE_WORDS,
    MAX_FIELD_DEPTH,
    NO_RESPONSE,
    NOT_TEXT,
    ORDER,
    YES_NO_FIELDS,
    FormField,
    Shape,
    dotted,
    hazard,
)
from selfcorrect_action.spec import LoadedSpec, default_output, load_spec_text
from selfcorrect_action.spec_files import Loc


class _Problem(NamedTuple):
    order: tuple[int, int, int]  # field, line, column: how problems are sorted
    text: str


@dataclass(frozen=True)
class _Section:
    """A form field's value: the lines under its heading, blank lines around them dropped;
    empty when the field was left empty (`_No response_`) or its heading is missing."""

    field: FormField
    lines: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Field:
    """What a form field gives the spec, and where in the field each part of it was."""

    value: Any = None  # None: left empty, the spec's default applies
    positions: tuple[tuple[int, int], ...] = ()  # of the value, or of each list item
    document: Any = None  # a YAML field's parsed text: positions inside it

    def position(self, loc: Loc) -> tuple[int, int] | None:
        """Line and column in the field of `loc` (relative to the field's spec key)."""
        if self.document is not None:
            return yamlio.locate(self.document, loc)
        if not self.positions:
            return None
        index = loc[0] if loc and isinstance(loc[0], int) else 0
        return self.positions[index] if 0 <= index < len(self.positions) else self.positions[0]


def _where(number: int, form_field: FormField, position: tuple[int, int] | None) -> str:
    where = f'issue #{number}, section "{form_field.label}"'
    return f"{where}, line {position[0]}:{position[1]}" if position else where


def _problem(number: int, form_field: FormField, position: tuple[int, int] | None,
             text: str) -> _Problem:
    line, col = position or (0, 0)
    return _Problem((ORDER[form_field.key], line, col),
                    f"{_where(number, form_field, position)}: {text}")


def spec_from_form(number: int, scan: Scan, *, root: Path, check_files: bool) -> LoadedSpec:
    sections = _sections(number, scan)  # raises on a body whose sections cannot be told
    problems: list[_Problem] = []
    fields: dict[str, _Field] = {}
    for form_field in FORM_FIELDS:
        section = sections.get(form_field.key, _Section(form_field))
        if unprintable := _unprintable(number, section):
            problems.append(unprintable)
            continue
        fields[form_field.key] = _READERS[form_field.shape](number, section, problems)
    data: dict[str, Any] = {"prompt": None}
    data |= {key: f.value for key, f in fields.items() if f.value is not None}
    # A field with a problem is left out, so the loader still reports the other fields'
    # problems; the prompt, which has no default, is stood in for, not reported as empty.
    if "prompt" not in fields:
        data["prompt"] = "(not read: see its problem)"
    source = f"issue #{number} (form)"
    loaded: LoadedSpec | None = None
    try:
        loaded = load_spec_text(_as_yaml(data), source, root=root,
                                name=f"issue-{number}", check_files=check_files)
    except SpecError as exc:
        problems += [_relocated(number, p, source, fields) for p in exc.problems]
    if problems or loaded is None:
        raise SpecError([p.text for p in sorted(problems)])
    return loaded


def _sections(number: int, scan: Scan) -> dict[str, _Section]:
    """Each form field's lines: from under its heading to the next form heading."""
    seen: dict[str, list[int]] = {}
    for index, form_field in scan.headings:
        seen.setdefault(form_field.key, []).append(index)
    twice = [(key, at) for key, at in seen.items() if len(at) > 1]
    if twice:
        key, at = twice[0]
        label = BY_KEY[key].label
        raise SpecError([_problem(number, BY_KEY[key], None, (
            f'the heading "### {label}" appears {len(at)} times (body lines '
            f'{_listed([str(i + 1) for i in at])}): the form writes it once')
            + f"\n  hint: rename the heading you wrote (e.g. `#### {label}`) or remove it")
            .text])
    if unclosed := [f for f in scan.fences if f.closed is None and f.swallowed]:
        raise SpecError([_unclosed(number, scan, unclosed[0])])
    ends = [index for index, _ in scan.headings[1:]] + [len(scan.lines)]
    return {form_field.key: _Section(form_field, _trimmed(scan.lines[index + 1 : end]))
            for (index, form_field), end in zip(scan.headings, ends, strict=True)}


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _unclosed(number: int, scan: Scan, fence: Fence) -> str:
    """A ``` never closed turns every later heading into code: the fields under them would
    be silently dropped."""
    owner = max((h for h in scan.headings if h[0] < fence.opened), default=None,
                key=lambda h: h[0])
    lost = ", ".join(f'"{f.label}"' for f in fence.swallowed)
    text = (f"the code block opened with {fence.char * fence.length} is never closed, so the "
            f"sections after it ({lost}) are read as its text"
            f"\n  hint: close the code block with a line of {fence.char * fence.length}")
    if owner is None:
        return f"issue #{number}: body line {fence.opened + 1}: {text}"
    index, form_field = owner
    value_start = index + 1 + leading_blank(scan.lines[index + 1 :])
    return _problem(number, form_field, (fence.opened - value_start + 1, 1), text).text


def _trimmed(lines: list[str]) -> tuple[str, ...]:
    start = leading_blank(lines)
    end = len(lines) - leading_blank(lines[::-1])
    kept = tuple(lines[start:end]) if start < end else ()
    return () if len(kept) == 1 and kept[0].strip() == NO_RESPONSE else kept


def _unprintable(number: int, section: _Section) -> _Problem | None:
    """The first character of the field that is not text (one per field is enough)."""
    for line_no, line in enumerate(section.lines, 1):
        if (match := NOT_TEXT.search(line)) is not None:
            return _problem(number, section.field, (line_no, match.start() + 1), (
                f"{section.field.key}: holds the character U+{ord(match.group()):04X}, "
                "which is not text\n  hint: remove it"))
    return None


def _column(line: str) -> int:
    return len(line) - len(line.lstrip()) + 1


def _read_text(number: int, section: _Section, problems: list[_Problem]) -> _Field:
    if not section.lines:
        return _Field()
    return _Field("\n".join(section.lines), ((1, _column(section.lines[0])),))


def _read_line(number: int, section: _Section, problems: list[_Problem]) -> _Field:
    """A one-line value (an input, a dropdown): more lines are a mistake, not ignored."""
    if not section.lines:
        return _Field()
    if len(section.lines) > 1:
        extra = next(i for i, line in enumerate(section.lines[1:], 2) if line.strip())
        at = (extra, _column(section.lines[extra - 1]))
        problems.append(_problem(number, section.field, at, (
            f"{section.field.key}: takes one line; this field has more"
            "\n  hint: keep only the value, on the first line")))
        return _Field()
    column, value = _item(section.lines[0])
    return _Field(value, ((1, column),))


def _read_choice(number: int, section: _Section, problems: list[_Problem]) -> _Field:
    chosen = _read_line(number, section, problems)
    key = section.field.key
    if key not in YES_NO_FIELDS or chosen.value is None:
        return chosen  # kind: the spec loader names the allowed values
    word = chosen.value.split(maxsplit=1)[0].rstrip(":,.").casefold()
    if word not in JUDGE_WORDS:
        options = " or ".join(f'"{option}"' for option in YES_NO_FIELDS[key])
        problems.append(_problem(number, section.field, chosen.positions[0], (
            f"{key}: must be {options}; got {chosen.value!r}"
            "\n  hint: pick one of the dropdown's options")))
        return _Field()
    return _Field(JUDGE_WORDS[word], chosen.positions)


def _read_paths(number: int, section: _Section, problems: list[_Problem]) -> _Field:
    """One repository path per line; blank lines, fences and `_No response_` skipped, a
    Markdown bullet (`- `, `* `) and `backticks` around a path tolerated."""
    paths: list[str] = []
    positions: list[tuple[int, int]] = []
    for line_no, line in enumerate(section.lines, 1):
        column, path = _item(line)
        if path and path != NO_RESPONSE and not path.startswith(("```", "~~~")):
            paths.append(path)
            positions.append((line_no, column))
    return _Field(paths or None, tuple(positions))


def _item(line: str) -> tuple[int, str]:
    """(1-based column, text) of a one-value line, without a bullet or backticks."""
    column, text = _column(line), line.strip()
    if text[:2] in ("- ", "* "):
        rest = text[2:]
        column += 2 + len(rest) - len(rest.lstrip())
        text = rest.strip()
    if len(text) > 2 and text[0] == text[-1] == "`":
        column += 1
        text = text[1:-1]
    return column, text


def _read_yaml(number: int, section: _Section, problems: list[_Problem]) -> _Field:
    """A `render: yaml` textarea: the text inside its fence (or, in an edited body without
    one, the whole value), read with every spec's YAML guards."""
    key, lines = section.field.key, _unfenced(number, section, problems)
    if lines is None or not "\n".join(lines).strip():
        return _Field()
    try:
        document = yamlio.load_yaml_text("\n".join(lines) + "\n", "field")
    except SpecError as exc:
        problems += [_from_field_yaml(number, section.field, p) for p in exc.problems]
        return _Field()
    document = _unwrapped(document, key)
    if (found := hazard(document, depth_limit=MAX_FIELD_DEPTH)) is not None:
        loc, message, hint = found
        problems.append(_problem(number, section.field, yamlio.locate(document, loc),
                                 f"{dotted((key, *loc))}: {message}\n  hint: {hint}"))
        return _Field()
    if document is None:  # only comments: the defaults
        return _Field()
    return _Field(yamlio.to_plain(document), document=document)


def _unfenced(number: int, section: _Section, problems: list[_Problem]) -> list[str] | None:
    """The lines inside the field's fence, line 1 being the first one inside (what GitHub
    makes of `render: yaml`); None when text follows the fence, which would be ignored."""
    lines = list(section.lines)
    fence = opens(lines[0], 0) if lines else None
    if fence is None:
        return lines
    fence.closed = next((i for i in range(1, len(lines)) if closes(lines[i], fence)), None)
    if fence.closed is None:
        return lines[1:]
    after = lines[fence.closed + 1 :]
    if (skipped := leading_blank(after)) < len(after):
        problems.append(_problem(number, section.field, (fence.closed + 1 + skipped, 1), (
            f"{section.field.key}: text after the ```yaml block, which would be ignored"
            "\n  hint: move it into the block (as YAML) or remove it")))
        return None
    return lines[1 : fence.closed]


def _unwrapped(document: Any, key: str) -> Any:
    """`contract:` written above the contract's fields (a spec file's layout) is the
    contract itself: no ExecutionContract or Budget field has that name."""
    if isinstance(document, dict) and list(document) == [key]:
        return document[key]
    return document


_Reader = Callable[[int, _Section, list[_Problem]], _Field]
_READERS: dict[Shape, _Reader] = {
    "text": _read_text, "line": _read_line, "choice": _read_choice,
    "paths": _read_paths, "yaml": _read_yaml}


def _as_yaml(data: dict[str, Any]) -> str:
    """The fields as a spec file, for the loader every spec goes through."""
    yaml = YAML(typ="rt")
    yaml.default_flow_style = False
    out = StringIO()
    yaml.dump(data, out)
    return out.getvalue()


# --- problems found in a field's own coordinates, told in the issue's ----------------------

def _split(problem: str, source: str) -> tuple[tuple[int, int] | None, str]:
    """`SOURCE:LINE:COL: rest` or `SOURCE: rest` as (position, rest)."""
    rest = problem[len(source) + 1 :] if problem.startswith(source + ":") else problem
    parts = rest.split(":", 2)
    if len(parts) == 3 and all(p.isascii() and p.isdigit() for p in parts[:2]):
        return (int(parts[0]), int(parts[1])), parts[2].removeprefix(" ")
    return None, rest.removeprefix(" ")


def _from_field_yaml(number: int, form_field: FormField, problem: str) -> _Problem:
    """A YAML problem in a form field: already at the field's line, with a path from the
    field's own top (`timeout_s`), which becomes the spec's (`contract.timeout_s`)."""
    position, rest = _split(problem, "field")
    head, sep, tail = rest.partition(": ")
    if head == "(top level)":
        rest = f"{form_field.key}: {tail}"
    elif sep and head and " " not in head and "\n" not in head:
        rest = f"{form_field.key}.{head}: {tail}"
    return _problem(number, form_field, position, rest)


def _relocated(number: int, problem: str, source: str, fields: dict[str, _Field]) -> _Problem:
    """A problem the loader found in the assembled spec, moved to the form field (and the
    line in it) its dotted path names."""
    _, rest = _split(problem, source)
    dotted = rest.partition(": ")[0]
    loc: Loc = tuple(int(p) if p.isascii() and p.isdigit() else p for p in dotted.split("."))
    form_field = BY_KEY.get(str(loc[0]))
    if form_field is None:  # nothing the form writes; not expected, still told
        return _Problem((len(FORM_FIELDS), 0, 0), f"issue #{number}: {rest}")
    given = fields.get(form_field.key, _Field())
    if given.value is None:
        rest = _empty_field_hint(number, rest, form_field)
    return _problem(number, form_field, given.position(loc[1:]), rest)


def _empty_field_hint(number: int, rest: str, form_field: FormField) -> str:
    """The loader's hints speak YAML (`prompt: |`, `set output:`); a form's user fills in
    a field."""
    hints = {"prompt": "describe the task in plain language in the Task field",
             "output": (f"the output defaulted to {default_output(f'issue-{number}')} "
                        "because the Output file field is empty: fill it in")}
    if form_field.key not in hints:
        return rest
    return rest.partition("\n  hint: ")[0] + f"\n  hint: {hints[form_field.key]}"


