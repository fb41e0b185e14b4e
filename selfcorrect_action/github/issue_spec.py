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

from pathlib import Path, PurePosixPath

from selfcorrect_action import yamlio
from selfcorrect_action.errors import SpecError
from selfcorrect_action.github.issue_body import Fence, Scan, body_lines, inside, scan_body
from selfcorrect_action.github.issue_fields import (
    FORM_FIELDS,
    JUDGE_OPTIONS,
    KIND_OPTIONS,
    MAX_BODY_CHARS,
    NO_RESPONSE,
    TASK,
    USE_FORM_HINT,
    dotted,
    hazard,
)
from selfcorrect_action.github.issue_form import spec_from_form
from selfcorrect_action.github.issue_visible import hidden_text, shown_fences
from selfcorrect_action.spec import LoadedSpec, TaskSpec, load_spec_text

# What the form's tests and the workflow docs name, from where they have always been read.
__all__ = ["FORM_FIELDS", "JUDGE_OPTIONS", "KIND_OPTIONS", "MAX_BODY_CHARS", "NO_RESPONSE",
           "spec_from_issue"]


def spec_from_issue(number: int, body: str | None, *, root: Path,
                    check_files: bool = True) -> LoadedSpec:
    """The task spec in issue `number`'s body, its files relative to `root` (the checked-out
    repository). Raises SpecError with every problem found, each located as described in
    the module docstring. A spec without an output writes scripts/issue_<number>.py."""
    loaded = _read(number, body, root=root, check_files=check_files)
    if (problem := issue_output_problem(root, loaded.spec)) is not None:
        raise SpecError([f"issue #{number}: output: {problem}\n  hint: {ISSUE_OUTPUT_HINT}"])
    return loaded


HIDDEN_HINT = ("whoever approves the issue cannot see what it says: remove it, or put it in "
               "`backticks` or a code block, where GitHub shows it as written")


# An issue's script lands in a pull request whose checks run with the repository's secrets
# (on a branch of this repository when an App opens it): it must be a new file that no tool
# runs by itself. A spec committed to the repository is its committer's to point anywhere.
IMPLICITLY_RUN = frozenset({"conftest.py", "setup.py", "noxfile.py", "tasks.py", "fabfile.py",
                            "dodo.py", "conf.py", "sitecustomize.py", "usercustomize.py",
                            "__init__.py", "__main__.py"})
ISSUE_OUTPUT_HINT = ("name a new script, e.g. scripts/<name>.py; to write elsewhere, commit the "
                     "spec to the repository and run it with workflow_dispatch")


def issue_output_problem(root: Path, spec: TaskSpec) -> str | None:
    """Why an issue's spec may not write its output where it says, if it may not."""
    if spec.kind == "repair" or spec.output is None:
        return None
    output = str(spec.output)
    # Any case: pytest matches file names without it on Windows, and macOS runners'
    # file systems ignore it.
    name = PurePosixPath(output).name.casefold()
    if name in IMPLICITLY_RUN or name.startswith("test_") or name.endswith("_test.py"):
        return (f"{output} is a file that tools run by themselves (pytest, setuptools, nox, "
                "Sphinx, Python's start-up), so the pull request's checks would run the "
                "model's code with the repository's secrets")
    if (root / output).exists() or (root / output).is_symlink():
        return (f"{output} already exists: an issue's task writes a new script, never over "
                "a file of the repository")
    return None


def _read(number: int, body: str | None, *, root: Path, check_files: bool) -> LoadedSpec:
    lines = body_lines(number, body)
    if hidden := hidden_text("\n".join(lines)):
        raise SpecError([f"issue #{number}, line {index + 1}: {what}, which GitHub does not "
                         f"show\n  hint: {HIDDEN_HINT}" for index, what in hidden])
    scan = scan_body(lines)
    if any(f is TASK for _, f in scan.headings):
        return spec_from_form(number, scan, root=root, check_files=check_files)
    chosen = _spec_block(scan)
    if chosen is None:
        raise SpecError([_no_spec(number, scan)])
    ordinal, fence = chosen
    source = f"issue #{number} (YAML block{'' if ordinal == 1 else f' {ordinal}'})"
    text = "\n".join(inside(lines, fence)) + "\n"
    # CommonMark shows a NUL as U+FFFD; the loader reports the NUL itself, located.
    as_shown = text.replace("\x00", "\ufffd")
    if not any(shown.line == fence.opened and shown.text == as_shown
               for shown in shown_fences("\n".join(lines))):
        # What this reader took for the spec's block, GitHub shows otherwise (inside a
        # list item or a quote, cut short, or not as code at all): the labeller may have
        # read something else.
        raise SpecError([f"{source}: the block that holds the spec is not shown by GitHub "
                         "as a code block of its own at the top level of the issue\n  hint: "
                         "start the ```yaml line at the beginning of a line, outside any "
                         "list or quote, and close it with ``` on a line of its own"])
    _refuse_unprintable_numbers(text, source)
    return load_spec_text(text, source, root=root, name=f"issue-{number}",
                          check_files=check_files)


# --- a free-form body: the ```yaml block holding the spec ---------------------------------

def _yaml_blocks(scan: Scan) -> list[Fence]:
    """Code blocks whose info string starts with yaml or yml (any case)."""
    return [f for f in scan.fences
            if f.info and f.info.split(maxsplit=1)[0].casefold() in ("yaml", "yml")]


def _spec_block(scan: Scan) -> tuple[int, Fence] | None:
    """(1-based ordinal among the body's YAML blocks, block) of the first block with a
    top-level `prompt:` key. A line starting `prompt:` is enough (a broken block that
    clearly meant to be the spec gets its syntax error reported, not "no spec found");
    failing that, a block that parses to a mapping with a prompt (`{prompt: ...}`)."""
    blocks = _yaml_blocks(scan)
    for ordinal, fence in enumerate(blocks, 1):
        if any(_names_prompt(line) for line in inside(scan.lines, fence)):
            return ordinal, fence
    for ordinal, fence in enumerate(blocks, 1):
        try:
            document = yamlio.load_yaml_text("\n".join(inside(scan.lines, fence)), "block")
        except SpecError:
            continue
        if isinstance(document, dict) and "prompt" in document:
            return ordinal, fence
    return None


def _names_prompt(line: str) -> bool:
    return line.startswith(("prompt:", "prompt :", '"prompt":', "'prompt':"))


def _no_spec(number: int, scan: Scan) -> str:
    found = ""
    if blocks := _yaml_blocks(scan):
        found = (f" (found {len(blocks)} ```yaml block{'s' if len(blocks) > 1 else ''}, "
                 "none with a top-level `prompt:` key)")
    elif scan.headings:
        found = f' (found form sections, but not the "{TASK.label}" one)'
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
    found = hazard(document, depth_limit=None)
    if found is not None:
        loc, message, hint = found
        line, col = yamlio.locate(document, loc)
        raise SpecError([f"{source}:{line}:{col}: {dotted(loc)}: {message}\n  hint: {hint}"])
