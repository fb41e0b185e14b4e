"""Every problem of a task spec, as data: what `selfcorrect validate` prints, one Problem a
line. The loaders report problems as located text (`source:line:col: field: message`, then
`  hint: ...`); that one format is read back here, so the API and the CLI cannot disagree."""

from __future__ import annotations

import re
import warnings

from selfcorrect_action.api.arguments import PathGiven, as_path, looks_like_spec_path, names_file
from selfcorrect_action.api.results import Problem, ValidationResult
from selfcorrect_action.errors import SpecError, UsageError
from selfcorrect_action.spec import load_spec, load_spec_text

_POSITION = re.compile(r"(?P<line>\d+):(?P<column>\d+): (?P<rest>.*)", re.DOTALL)
# A field path is names and indexes joined by dots (`contract.artifacts.0.kind`); the
# messages that are not about one field start with words and spaces.
_FIELD = re.compile(r"(?P<field>[A-Za-z_][\w-]*(?:\.[\w-]+)*|\(top level\)): (?P<msg>.*)",
                    re.DOTALL)
_HINT = "\n  hint: "


def validate(spec: PathGiven | None = None, *, text: str | None = None,
             root: PathGiven | None = None, source: str = "spec",
             check_files: bool = True) -> ValidationResult:
    """The problems of a spec file (`spec`, a str or a Path) or of a spec's YAML `text`
    (named `source` in the problems); `check_files` also checks the tests and inputs it
    names, relative to `root` (default: the git repository holding the file, or the
    current directory). A file that is not there is a problem, as `selfcorrect validate`
    reports it. (A str that names no file and does not look like a spec file's name is
    read as YAML text, as it was before `text=`, with a DeprecationWarning.)"""
    if (spec is None) == (text is None):
        raise UsageError("give the spec once: a file (spec) or its YAML text (text=)",
                         hint="api.validate('tasks/chart.yml'), or "
                         "api.validate(text='prompt: ...')")
    if isinstance(spec, str) and not (names_file(spec) or looks_like_spec_path(spec)):
        warnings.warn("a str that names no file is read as a spec's YAML text: call "
                      "api.validate(text=...) (a str naming a file is that file)",
                      DeprecationWarning, stacklevel=2)
        spec, text = None, spec
    path, folder = as_path(spec, "spec"), as_path(root, "root")
    named = str(path) if path is not None else source
    try:
        if path is not None:
            load_spec(path, root=folder, check_files=check_files)
        else:
            load_spec_text(text or "", source, root=folder, check_files=check_files)
    except SpecError as exc:
        problems = [problem(text, named) for text in exc.problems]
        return ValidationResult(valid=False, problems=problems)
    return ValidationResult(valid=True, problems=[])


def problem(text: str, source: str) -> Problem:
    """One located problem's text as a Problem."""
    body, _, hint = text.partition(_HINT)
    rest = body[len(source) + 1:].lstrip() if body.startswith(f"{source}:") else body
    line, column = 1, 1
    if position := _POSITION.fullmatch(rest):
        line, column = int(position["line"]), int(position["column"])
        rest = position["rest"]
    field, message = "", rest
    if named := _FIELD.fullmatch(rest):
        field = "" if named["field"] == "(top level)" else named["field"]
        message = named["msg"]
    return Problem(line=line, column=column, field=field, message=message, hint=hint,
                   text=text)
