"""The task spec in an issue body: the shipped issue form, or a ```yaml block in free text.

The body is untrusted text (anyone can open an issue), so it is read line by line (no
regular expression with backtracking runs on it), capped at GitHub's 65,536 characters,
and every YAML in it goes through the same guards as a spec file (yamlio.load_yaml_text).
The spec itself is then loaded by spec.load_spec_text, the one loader every spec goes
through, so an issue can neither skip a check nor gain a field a spec file lacks.

Which way the body is read:

1. The issue form (.github/ISSUE_TEMPLATE/selfcorrect.yml) when the body has its `### Task`
   heading outside any code block. Each field becomes its spec field (FORM_FIELDS).
2. Otherwise the first fenced ```yaml (or ```yml, or ~~~yaml) block with a top-level
   `prompt:` key holds the whole spec; text around it is ignored.

Where problems point (every problem keeps its `\\n  hint: ...` line):

- a YAML block: `issue #12 (YAML block):3:5: contract.timeout_s: ...`, line 1 being the
  first line inside the fence; `issue #12 (YAML block 2):...` when the spec is in the
  second ```yaml block of the body (the same text is LoadedSpec.source, saying which block).
- a form field: `issue #12, section "Execution contract", line 2:5: contract.timeout_s: ...`
  is line 2, column 5 of what was written in that field (for a YAML field, line 1 is the
  first line inside its ```yaml fence; for the others, the first line under the heading).
- a form field with no line to point at (left empty, or the problem is the field as a
  whole): `issue #12, section "Task": prompt: must not be empty`.
- the body as a whole: `issue #12: the issue has no body`.

A spec read from the form has the source `issue #12 (form)`; its `document` is the spec as
assembled from the fields, so positions in it are not positions in the issue.

What this relies on about GitHub's rendering of a submitted form:

- Each field other than `markdown` elements (which are "not submitted") becomes
  `### <label>`, a blank line, then the value; fields are separated by a blank line and come
  in the form's order. GitHub docs, "Syntax for issue forms": "responses for each input are
  converted to markdown and added to the body of an issue"; "Syntax for GitHub's form
  schema" (markdown: "not submitted"). The exact layout is not documented; it is what real
  bodies show, e.g. brainhackorg/global2023#63 (a stored copy of its body from the API), and
  what the widely used parsers expect (stefanbuck/github-issue-parser splits on `###` and
  blank lines; issue-ops/parser matches `### <label>` then the value).
- An empty field is `_No response_` (same sources; stefanbuck/github-issue-parser maps it to
  "", and its end-to-end test, which submits real issues through the web form, gets "" for
  fields left empty). An empty `render:` textarea was also seen as an empty fence
  (browser-use issue body: "### Relevant Log Output\\n\\n```shell\\n\\n```"): both are empty.
- A textarea with `render: yaml` "will be formatted into a codeblock" (form schema docs): the
  value arrives as ```yaml, the text, ``` (browser-use body: "```python\\n...\\n```").
- A dropdown gives the chosen option's text (several chosen: joined by ", ", as in the
  brainhack body); a dropdown that is not required offers "None" (a reserved word, docs:
  "Common validation errors when creating issue forms"). That "None" is submitted as
  `_No response_` is inferred (the end-to-end snapshot above gets "" for an untouched
  dropdown), not documented: anything else that is not an option is reported.
- What the user typed keeps the browser's line breaks, often \\r\\n, while GitHub's own joins
  are \\n (the brainhack body mixes both): line endings are normalised to \\n first.
- GitHub does not escape a field's text: a `### Kind` line typed in the Task field is a
  heading like GitHub's own, so a label appearing twice is reported, not guessed at.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any, Literal, NamedTuple

from ruamel.yaml import YAML

from selfcorrect_action import yamlio
from selfcorrect_action.errors import SpecError
from selfcorrect_action.spec import LoadedSpec, default_output, load_spec_text
from selfcorrect_action.spec_files import Loc

# GitHub refuses issue bodies longer than this; a longer one did not come from GitHub.
MAX_BODY_CHARS = 65_536
NO_RESPONSE = "_No response_"

Shape = Literal["text", "line", "choice", "paths", "yaml"]


@dataclass(frozen=True)
class FormField:
    """One field of the issue form: `key` is the spec field and the form element's id,
    `label` the heading GitHub writes above its value."""

    key: str
    label: str
    shape: Shape


# In the order of the form (.github/ISSUE_TEMPLATE/selfcorrect.yml; a test keeps them equal).
FORM_FIELDS: tuple[FormField, ...] = (
    FormField("prompt", "Task", "text"),
    FormField("kind", "Kind", "choice"),
    FormField("output", "Output file", "line"),
    FormField("inputs", "Input files", "paths"),
    FormField("tests", "Test files", "paths"),
    FormField("contract", "Execution contract", "yaml"),
    FormField("budget", "Budget", "yaml"),
    FormField("judge", "LLM judge", "choice"),
)
KIND_OPTIONS = ("script", "function")
# The judge dropdown's options; its first word says which (an edited body may say yes/no).
JUDGE_OPTIONS = ("Yes (default)", "No: stop after the execution and contract checks")
_JUDGE_WORDS = {"yes": True, "true": True, "no": False, "false": False}

_BY_KEY = {f.key: f for f in FORM_FIELDS}
_BY_HEADING = {f.label.casefold(): f for f in FORM_FIELDS}
_ORDER = {f.key: i for i, f in enumerate(FORM_FIELDS)}
_TASK = FORM_FIELDS[0]

USE_FORM_HINT = ("open the issue with the selfcorrect issue form, or put the whole task spec "
                 "in a ```yaml block that starts with `prompt: |`")
# What YAML's reader refuses (ruamel.yaml.reader.Reader.NON_PRINTABLE), refused in every
# form field too: a NUL or a lone surrogate is not text, and would reach the model's prompt.
# A single character class: linear, whatever the text.
_NOT_TEXT = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# A contract or budget is a few levels deep; far deeper is hostile, and copying it back into
# YAML recurses per level.
MAX_FIELD_DEPTH = 20
# int() refuses to print more than 4,300 digits, but YAML reads 0x... of any length.
_MAX_INT_BITS = 14_000


class _Problem(NamedTuple):
    order: tuple[int, int, int]  # field, line, column: how problems are sorted
    text: str


def spec_from_issue(number: int, body: str | None, *, root: Path,
                    check_files: bool = True) -> LoadedSpec:
    """The task spec in issue `number`'s body, its files relative to `root` (the checked-out
    repository). Raises SpecError with every problem found, each located as described in
    the module docstring. A spec without an output writes scripts/issue_<number>.py."""
    lines = _body_lines(number, body)
    scan = _scan(lines)
    if any(f is _TASK for _, f in scan.headings):
        return _from_form(number, scan, root=root, check_files=check_files)
    chosen = _spec_block(scan)
    if chosen is None:
        raise SpecError([_no_spec(number, scan)])
    ordinal, fence = chosen
    source = f"issue #{number} (YAML block{'' if ordinal == 1 else f' {ordinal}'})"
    text = "\n".join(_inside(lines, fence)) + "\n"
    _refuse_unprintable_numbers(text, source)
    return load_spec_text(text, source, root=root, name=f"issue-{number}",
                          check_files=check_files)


# --- the body as lines, and what is where in it -------------------------------------------

def _body_lines(number: int, body: str | None) -> list[str]:
    if body is not None and len(body) > MAX_BODY_CHARS:
        raise SpecError([
            f"issue #{number}: the issue body is {len(body):,} characters, more than the "
            f"{MAX_BODY_CHARS:,} GitHub allows\n  hint: describe the task in fewer words; "
            "put data in a file of the repository and list it under Input files (inputs:)"])
    if body is None or not body.strip():
        raise SpecError([f"issue #{number}: the issue has no body\n  hint: {USE_FORM_HINT}"])
    return body.replace("\r\n", "\n").replace("\r", "\n").split("\n")


@dataclass
class _Fence:
    """A fenced code block: `opened` is the index of its opening line, `closed` of its
    closing one (None: it runs to the end of the body, as CommonMark has it)."""

    char: str
    length: int
    info: str
    opened: int
    closed: int | None = None
    swallowed: list[FormField] = field(default_factory=list)  # form headings in it


@dataclass(frozen=True)
class _Scan:
    lines: list[str]
    headings: list[tuple[int, FormField]]  # form headings outside code blocks
    fences: list[_Fence]


def _scan(lines: list[str]) -> _Scan:
    """One pass: code blocks, and the form's headings outside them (a `### Task` inside a
    user's ```yaml block is a YAML comment, not a section)."""
    headings: list[tuple[int, FormField]] = []
    fences: list[_Fence] = []
    current: _Fence | None = None
    for index, line in enumerate(lines):
        if current is not None:
            if _closes(line, current):
                current.closed, current = index, None
            elif (inside := _heading(line)) is not None:
                current.swallowed.append(inside)
        elif (opened := _opens(line, index)) is not None:
            fences.append(opened)
            current = opened
        elif (found := _heading(line)) is not None:
            headings.append((index, found))
    return _Scan(lines, headings, fences)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _opens(line: str, index: int) -> _Fence | None:
    """A CommonMark fence opening: up to 3 spaces, then 3 or more ` or ~, then the info."""
    stripped = line.lstrip(" ")
    char = stripped[:1]
    if _indent(line) > 3 or char not in ("`", "~"):
        return None
    length = len(stripped) - len(stripped.lstrip(char))
    info = stripped[length:].strip()
    if length < 3 or (char == "`" and "`" in info):
        return None
    return _Fence(char, length, info, index)


def _closes(line: str, fence: _Fence) -> bool:
    run = line.strip(" \t")
    return (_indent(line) <= 3 and len(run) >= fence.length
            and run == fence.char * len(run))


def _heading(line: str) -> FormField | None:
    stripped = line.lstrip(" ")
    if _indent(line) > 3 or not stripped.startswith("### "):
        return None
    return _BY_HEADING.get(stripped[4:].strip().casefold())


def _inside(lines: list[str], fence: _Fence) -> list[str]:
    end = len(lines) if fence.closed is None else fence.closed
    return lines[fence.opened + 1 : end]


# --- a free-form body: the ```yaml block holding the spec ---------------------------------

def _yaml_blocks(scan: _Scan) -> list[_Fence]:
    """Code blocks whose info string starts with yaml or yml (any case)."""
    return [f for f in scan.fences
            if f.info and f.info.split(maxsplit=1)[0].casefold() in ("yaml", "yml")]


def _spec_block(scan: _Scan) -> tuple[int, _Fence] | None:
    """(1-based ordinal among the body's YAML blocks, block) of the first block with a
    top-level `prompt:` key. A line starting `prompt:` is enough (a broken block that
    clearly meant to be the spec gets its syntax error reported, not "no spec found");
    failing that, a block that parses to a mapping with a prompt (`{prompt: ...}`)."""
    blocks = _yaml_blocks(scan)
    for ordinal, fence in enumerate(blocks, 1):
        if any(_names_prompt(line) for line in _inside(scan.lines, fence)):
            return ordinal, fence
    for ordinal, fence in enumerate(blocks, 1):
        try:
            document = yamlio.load_yaml_text("\n".join(_inside(scan.lines, fence)), "block")
        except SpecError:
            continue
        if isinstance(document, dict) and "prompt" in document:
            return ordinal, fence
    return None


def _names_prompt(line: str) -> bool:
    return line.startswith(("prompt:", "prompt :", '"prompt":', "'prompt':"))


def _no_spec(number: int, scan: _Scan) -> str:
    found = ""
    if blocks := _yaml_blocks(scan):
        found = (f" (found {len(blocks)} ```yaml block{'s' if len(blocks) > 1 else ''}, "
                 "none with a top-level `prompt:` key)")
    elif scan.headings:
        found = f' (found form sections, but not the "{_TASK.label}" one)'
    return (f"issue #{number}: no task spec found: neither the selfcorrect issue form's "
            f"sections nor a ```yaml block with a top-level `prompt:` key{found}"
            f"\n  hint: {USE_FORM_HINT}")


def _refuse_unprintable_numbers(text: str, source: str) -> None:
    """A validation message quotes the wrong value (yamlio), and Python refuses to print an
    int of more than 4,300 digits: a hostile `timeout_s: 0xfff...` would crash the loader
    instead of being reported. Parsed here with the loader's own guards, then again by it."""
    try:
        document = yamlio.load_yaml_text(text, source)
    except SpecError:
        return  # the loader reports it, located
    found = _hazard(document, depth_limit=None)
    if found is not None:
        loc, message, hint = found
        line, col = yamlio.locate(document, loc)
        raise SpecError([f"{source}:{line}:{col}: {_dotted(loc)}: {message}\n  hint: {hint}"])


# --- the issue form -----------------------------------------------------------------------

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
    return _Problem((_ORDER[form_field.key], line, col),
                    f"{_where(number, form_field, position)}: {text}")


def _from_form(number: int, scan: _Scan, *, root: Path, check_files: bool) -> LoadedSpec:
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


def _sections(number: int, scan: _Scan) -> dict[str, _Section]:
    """Each form field's lines: from under its heading to the next form heading."""
    seen: dict[str, list[int]] = {}
    for index, form_field in scan.headings:
        seen.setdefault(form_field.key, []).append(index)
    twice = [(key, at) for key, at in seen.items() if len(at) > 1]
    if twice:
        key, at = twice[0]
        label = _BY_KEY[key].label
        raise SpecError([_problem(number, _BY_KEY[key], None, (
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


def _unclosed(number: int, scan: _Scan, fence: _Fence) -> str:
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
    value_start = index + 1 + _leading_blank(scan.lines[index + 1 :])
    return _problem(number, form_field, (fence.opened - value_start + 1, 1), text).text


def _leading_blank(lines: Sequence[str]) -> int:
    return next((i for i, line in enumerate(lines) if line.strip()), len(lines))


def _trimmed(lines: list[str]) -> tuple[str, ...]:
    start = _leading_blank(lines)
    end = len(lines) - _leading_blank(lines[::-1])
    kept = tuple(lines[start:end]) if start < end else ()
    return () if len(kept) == 1 and kept[0].strip() == NO_RESPONSE else kept


def _unprintable(number: int, section: _Section) -> _Problem | None:
    """The first character of the field that is not text (one per field is enough)."""
    for line_no, line in enumerate(section.lines, 1):
        if (match := _NOT_TEXT.search(line)) is not None:
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
    if section.field.key != "judge" or chosen.value is None:
        return chosen  # kind: the spec loader names the allowed values
    word = chosen.value.split(maxsplit=1)[0].rstrip(":,.").casefold()
    if word not in _JUDGE_WORDS:
        options = " or ".join(f'"{option}"' for option in JUDGE_OPTIONS)
        problems.append(_problem(number, section.field, chosen.positions[0], (
            f"judge: must be {options}; got {chosen.value!r}"
            "\n  hint: pick one of the dropdown's options")))
        return _Field()
    return _Field(_JUDGE_WORDS[word], chosen.positions)


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
    if (found := _hazard(document, depth_limit=MAX_FIELD_DEPTH)) is not None:
        loc, message, hint = found
        problems.append(_problem(number, section.field, yamlio.locate(document, loc),
                                 f"{_dotted((key, *loc))}: {message}\n  hint: {hint}"))
        return _Field()
    if document is None:  # only comments: the defaults
        return _Field()
    return _Field(yamlio.to_plain(document), document=document)


def _unfenced(number: int, section: _Section, problems: list[_Problem]) -> list[str] | None:
    """The lines inside the field's fence, line 1 being the first one inside (what GitHub
    makes of `render: yaml`); None when text follows the fence, which would be ignored."""
    lines = list(section.lines)
    fence = _opens(lines[0], 0) if lines else None
    if fence is None:
        return lines
    fence.closed = next((i for i in range(1, len(lines)) if _closes(lines[i], fence)), None)
    if fence.closed is None:
        return lines[1:]
    after = lines[fence.closed + 1 :]
    if (skipped := _leading_blank(after)) < len(after):
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


def _hazard(document: Any, *, depth_limit: int | None) -> tuple[Loc, str, str] | None:
    """Where the YAML nests deeper than `depth_limit`, or holds an int too long to print."""
    stack: list[tuple[Loc, Any]] = [((), document)]
    while stack:
        loc, node = stack.pop()
        if depth_limit is not None and len(loc) > depth_limit:
            return loc, f"nested more than {depth_limit} levels deep", (
                "a contract or budget needs a few levels of lists and mappings")
        if isinstance(node, int) and node.bit_length() > _MAX_INT_BITS:
            return loc, "a number too long to print (more than 4,000 digits)", (
                "write a number of sensible size")
        if isinstance(node, dict):
            stack.extend(((*loc, k), v) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend(((*loc, i), v) for i, v in reversed(list(enumerate(node))))
    return None


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
    if len(parts) == 3 and parts[0].isdigit() and parts[1].isdigit():
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
    loc: Loc = tuple(int(p) if p.isdigit() else p for p in dotted.split("."))
    form_field = _BY_KEY.get(str(loc[0]))
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


def _dotted(loc: Loc) -> str:
    return ".".join(str(part) for part in loc) or "(top level)"
