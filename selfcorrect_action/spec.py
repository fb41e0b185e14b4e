"""The task spec: what the user asks for, as a YAML file or a fenced YAML block in an issue.

Every problem comes back located (`file:line:col: dotted.path: message` plus a hint), because
the people writing specs fix them in an editor or a pre-commit run, not in a debugger.
Field reference: docs/task-spec.md.
"""

from __future__ import annotations

import ast
import keyword
import re
import shlex
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError
from ruamel.yaml import YAML
from ruamel.yaml.scalarstring import LiteralScalarString

from selfcorrect_action import yamlio
from selfcorrect_action.choices import Generation
from selfcorrect_action.contract import ExecutionContract
from selfcorrect_action.errors import SpecError
from selfcorrect_action.repair.spec_files import repair_file_problems
from selfcorrect_action.spec_checks import Conflict, dotted, find_conflicts
from selfcorrect_action.spec_files import (
    MAX_SPEC_BYTES,
    Loc,
    output_problem,
    read_spec_text,
    repo_root,
    too_large,
)
from selfcorrect_action.spec_files import file_problems as _file_problems

TaskKind = Literal["script", "function", "repair"]
# How the frozen tests meet the candidate: from another process under another uid (only
# plain data crosses), or imported into pytest's own process (docs/task-spec.md).
Isolation = Literal["process", "in-process"]
# How the frozen tests are run: `auto` judges a pass without pytest when the tests need
# nothing of it (evaluation/plain_tests.py), `pytest` always runs pytest.
TestsRunner = Literal["auto", "pytest"]

DOCS_HINT = "see docs/task-spec.md for what this field takes"
DEFAULT_OUTPUT_DIR = "scripts"
# What a repair runs when the spec names no command (docs/repair.md): the repository's own
# pytest configuration decides the rest.
DEFAULT_TEST_COMMAND = ("python", "-m", "pytest", "-q")
MAX_ARGUMENTS = 64
MAX_ARGUMENT_CHARS = 1000


def _path_error(message: str, hint: str) -> PydanticCustomError:
    return PydanticCustomError("repo_path", message, {"hint": hint})


def _repo_path(value: str) -> str:
    """A file path relative to the repository root that cannot escape it."""
    pure = PurePosixPath(value)
    if not value.strip() or value.endswith("/") or not pure.parts:
        raise _path_error("must name a file", "write a path such as data/sales.csv")
    if any(ord(char) < 32 or ord(char) == 127 for char in value):
        # A newline in a path would fake lines in every report and log that names it.
        raise _path_error("must not contain control characters (newlines, tabs...)",
                          "write the path on one line, as the file is named")
    _no_angle_brackets(value, "data/sales.csv")
    if pure.is_absolute() or "\\" in value or re.match(r"[A-Za-z]:", value):
        raise _path_error(
            "must be relative to the repository root",
            "drop the leading / (or drive letter) and use forward slashes",
        )
    # Case-blind: `.GIT/config` is the repository's own .git on macOS and Windows checkouts.
    if ".." in pure.parts or any(part.casefold() == ".git" for part in pure.parts):
        raise _path_error(
            "must stay inside the repository: no '..' and nothing under .git/",
            "write the path from the repository root, e.g. data/sales.csv",
        )
    return str(pure)


def _python_path(value: str) -> str:
    value = _repo_path(value)
    if PurePosixPath(value).suffix != ".py":
        raise _path_error("must be a Python file ending in .py", "rename it to end in .py")
    if PurePosixPath(value).parts[0].casefold() == ".github":
        # The action never writes there (a token that can push under .github/ can change
        # the workflows): refused up front, before any model is paid for.
        raise _path_error("must not be under .github/", "write it elsewhere, e.g. scripts/")
    return value


def _one_line(value: str, what: str, example: str) -> str:
    if not value.strip():
        raise _path_error(f"must name {what}", f"write {example}")
    if any(ord(char) < 32 or ord(char) == 127 for char in value):
        raise _path_error("must not contain control characters (newlines, tabs...)",
                          f"write it on one line, e.g. {example}")
    _no_angle_brackets(value, example)
    return value.strip()


def _no_angle_brackets(value: str, example: str) -> None:
    """Paths are quoted in the comments, pull requests and commits selfcorrect writes, where
    `<!-- ... -->` is hidden HTML: a red team built an approval marker out of an output
    path. No file a task needs is named with < or > (Windows refuses them too)."""
    if "<" in value or ">" in value:
        raise _path_error("must not contain < or > (shown on GitHub, they can form hidden "
                          "HTML)", f"rename it without them, e.g. {example}")


def _repo_glob(value: str) -> str:
    """A `files:` glob: relative to the repository root, inside it, never under .github/."""
    value = _one_line(value, "files", "src/mypkg/**/*.py")
    pure = PurePosixPath(value)
    if pure.is_absolute() or "\\" in value or re.match(r"[A-Za-z]:", value):
        raise _path_error("must be relative to the repository root",
                          "drop the leading / and use forward slashes, e.g. src/**/*.py")
    if ".." in pure.parts or any(part.casefold() == ".git" for part in pure.parts):
        raise _path_error("must stay inside the repository: no '..' and nothing under .git/",
                          "write the glob from the repository root, e.g. src/**/*.py")
    if pure.parts[0].casefold() == ".github":
        raise _path_error("must not be under .github/ (the action never writes there)",
                          "name the package's files, e.g. src/mypkg/*.py")
    return value


def _node_id(value: str) -> str:
    """A pytest node id (`tests/test_x.py::test_y[1]`) whose file part stays in the repo."""
    value = _one_line(value, "a test", "tests/test_parse.py::test_empty")
    path = PurePosixPath(value.split("::", 1)[0])
    if path.is_absolute() or ".." in path.parts or "\\" in value:
        raise _path_error("must be a pytest node id relative to the repository root",
                          "write it as pytest prints it, e.g. tests/test_parse.py::test_empty")
    return value


def _argv(value: Any) -> Any:
    """`test_command: pytest -q tests` is split as a shell would (no shell runs it);
    a list is taken as the argv itself."""
    if isinstance(value, str):
        try:
            value = shlex.split(value)
        except ValueError as exc:
            raise PydanticCustomError("argv", "cannot be split into arguments: {why}", {
                "why": str(exc), "hint": "close the quote, or write the command as a list"
            }) from exc
    if isinstance(value, list) and (not value or value[0] == ""):
        raise PydanticCustomError("argv", "must name a program to run", {
            "hint": "leave it out for the default, python -m pytest -q"})
    return value


def _argument(value: str) -> str:
    if "\0" in value or "\n" in value or "\r" in value:
        raise _path_error("must not contain a newline or a NUL byte",
                          "write each argument on one line")
    return value


def _non_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError(
            "blank", "must not be empty", {"hint": "write some text, or remove the field"}
        )
    return value.strip()


def _as_list(value: Any) -> Any:
    """`tests: one.py` means `tests: [one.py]`; an empty `inputs:` means none."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else value


def _none_as_empty(value: Any) -> Any:
    """`contract:` with every line under it commented out means the defaults, not an error."""
    return {} if value is None else value


def _prompt_given(value: Any) -> Any:
    """`prompt:` with nothing after it (or only spaces) is the one field that cannot default."""
    if value is None or (isinstance(value, str) and not value.strip()):
        raise PydanticCustomError("blank", "must not be empty", {
            "hint": "describe the task: `prompt: |`, then the text on the lines below"})
    return value


def _signature(value: str) -> str:
    """A function's name (`parse_row`) or its `def` line (`def parse_row(line: str) ->
    dict:`): what a `kind: function` candidate must define, and the start of its code."""
    text = value.strip()
    if text.isidentifier() and not keyword.iskeyword(text):
        return text
    header = text if text.startswith(("def ", "async def ")) else f"def {text}"
    header = header if header.rstrip().endswith(":") else header.rstrip() + ":"
    try:
        tree = ast.parse(f"{header}\n    ...\n")
    except SyntaxError:
        tree = None
    if tree is None or len(tree.body) != 1 or "\n" in text or not isinstance(
            tree.body[0], ast.FunctionDef | ast.AsyncFunctionDef):
        raise PydanticCustomError(
            "signature", "must be a function's name or its def line",
            {"hint": "e.g. `signature: parse_row` or "
                     "`signature: def parse_row(line: str) -> dict:`"})
    return header


def entry_point(signature: str) -> str:
    """The function a signature names (validated: `parse_row` or a `def` line)."""
    if signature.isidentifier():
        return signature
    found = re.match(r"(?:async\s+)?def\s+([A-Za-z_][A-Za-z0-9_]*)", signature)
    assert found is not None, signature
    return found.group(1)


RepoPath = Annotated[str, AfterValidator(_repo_path)]
RepoGlob = Annotated[str, AfterValidator(_repo_glob)]
NodeId = Annotated[str, Field(max_length=1000), AfterValidator(_node_id)]
Argument = Annotated[str, Field(max_length=MAX_ARGUMENT_CHARS), AfterValidator(_argument)]
PythonPath = Annotated[str, AfterValidator(_python_path)]
NonBlank = Annotated[str, AfterValidator(_non_blank)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _empty_means_default(cls, data: Any) -> Any:
        """`kind:` with nothing after it is the default, like every field left empty (the
        docs promise it); only the required prompt must be written out."""
        if not isinstance(data, dict):
            return data
        return {key: value for key, value in data.items()
                if value is not None or key not in cls.model_fields
                or cls.model_fields[key].is_required()}


class Budget(_Strict):
    # strict=True: `patch_attempts: true` or `tokens: "60000"` is a mistake, not a number.
    patch_attempts: int = Field(default=3, ge=0, le=20, strict=True)
    rethink_attempts: int = Field(default=2, ge=0, le=10, strict=True)
    # Upper bounds: a typo of a few extra digits should be caught, not printed as a cap.
    tokens: int = Field(default=60_000, gt=0, le=100_000_000, strict=True)
    cost_usd: float | None = Field(default=None, ge=0, le=100_000, strict=True,
                                   allow_inf_nan=False)


class ModelChoice(_Strict):
    """litellm model names per tier; None means the CLI's or environment's default."""

    cheap: NonBlank | None = None
    strong: NonBlank | None = None
    judge: NonBlank | None = None
    review: NonBlank | None = None  # kind repair's reviewer; None: the judge's model


class TaskSpec(_Strict):
    prompt: Annotated[NonBlank, BeforeValidator(_prompt_given)]
    kind: TaskKind = "script"
    # None only when built in code; the loaders fill it in from the spec's name.
    output: PythonPath | None = None
    contract: Annotated[ExecutionContract, BeforeValidator(_none_as_empty)] = Field(
        default_factory=ExecutionContract
    )
    tests: Annotated[list[PythonPath], BeforeValidator(_as_list)] = Field(default_factory=list)
    inputs: Annotated[list[RepoPath], BeforeValidator(_as_list)] = Field(default_factory=list)
    budget: Annotated[Budget, BeforeValidator(_none_as_empty)] = Field(default_factory=Budget)
    models: Annotated[ModelChoice, BeforeValidator(_none_as_empty)] = Field(
        default_factory=ModelChoice
    )
    # strict: `judge: "no"` or `judge: 0` are mistakes, not a quiet true or false.
    judge: bool = Field(default=True, strict=True)
    isolation: Isolation = "process"
    tests_runner: TestsRunner = "auto"
    # kind function: the function the tests call, by name or `def` line (docs/task-spec.md).
    signature: Annotated[str, AfterValidator(_signature)] | None = None
    # kind function: chat, or completion (the model continues the function's code); None:
    # the --generation flag's or SELFCORRECT_GENERATION's, else auto.
    generation: Generation | None = None
    # kind repair (docs/repair.md): what may be rewritten, how the repository's tests run,
    # which must pass, what the sandbox needs installed, and the reviewer before each run.
    files: Annotated[list[RepoGlob], BeforeValidator(_as_list)] = Field(default_factory=list)
    test_command: Annotated[
        list[Argument], BeforeValidator(_argv), Field(max_length=MAX_ARGUMENTS)
    ] = Field(default_factory=lambda: list(DEFAULT_TEST_COMMAND))
    failing_tests: Annotated[list[NodeId], BeforeValidator(_as_list)] = Field(
        default_factory=list)
    requirements: RepoPath | None = None
    review: bool = Field(default=True, strict=True)

    @model_validator(mode="after")
    def _consistent(self) -> TaskSpec:
        conflicts = find_conflicts(self)
        if conflicts:
            # The loader expands ctx["conflicts"] into one located problem each.
            summary = "; ".join(f"{dotted(c.loc)}: {c.message}" for c in conflicts)
            raise PydanticCustomError(
                "spec_conflict", "{summary}", {"summary": summary, "conflicts": conflicts}
            )
        return self


def default_output(name: str) -> str:
    """`.selfcorrect/tasks/sales-chart.yml` → `scripts/sales_chart.py` (an importable name,
    so a `kind: function` spec works without an `output:`)."""
    stem = re.sub(r"\W+", "_", PurePosixPath(name).stem.lower(), flags=re.ASCII).strip("_")
    if not stem or stem[0].isdigit() or keyword.iskeyword(stem):
        stem = f"task_{stem}".rstrip("_")
    return f"{DEFAULT_OUTPUT_DIR}/{stem}.py"


def user_contract_fields(spec: TaskSpec) -> set[str]:
    """Contract fields the user wrote, which the planner must keep as written.

    Top-level names (`network`, `artifacts`) and, per artifact, `artifacts.<i>.<field>`.
    This rests on pydantic's `model_fields_set`, so a spec that is serialised and loaded
    again must be dumped with `exclude_unset=True` (as `dump_spec` does), or every field
    would look user-written.
    """
    contract = spec.contract
    fields = set(contract.model_fields_set)
    for i, artifact in enumerate(contract.artifacts):
        fields |= {f"artifacts.{i}.{name}" for name in artifact.model_fields_set}
    return fields


def dump_spec(spec: TaskSpec) -> str:
    """The spec as YAML with only the fields that were set, so loading it back gives the
    same spec and the same `user_contract_fields`."""
    return spec_yaml(spec.model_dump(mode="json", exclude_unset=True))


def spec_yaml(data: dict[str, Any]) -> str:
    """A spec's fields as the YAML a person would write (a prompt of many lines as a block),
    for load_spec_text to check with located problems."""
    data = dict(data)
    if "\n" in str(data.get("prompt", "")):
        data["prompt"] = LiteralScalarString(str(data["prompt"]) + "\n")
    yaml = YAML(typ="rt")
    yaml.default_flow_style = False
    out = StringIO()
    yaml.dump(data, out)
    return out.getvalue()


@dataclass(frozen=True)
class LoadedSpec:
    """A valid spec with where it came from; `root` is what tests/inputs are relative to."""

    spec: TaskSpec
    source: str
    root: Path
    path: Path | None = None
    # The parsed YAML, kept to locate problems found after loading (file checks).
    document: Any = field(default=None, repr=False, compare=False)

    @property
    def output_path(self) -> Path:
        assert self.spec.output is not None  # the loaders always fill it in
        return self.root / self.spec.output

    @property
    def test_paths(self) -> list[Path]:
        return [self.root / p for p in self.spec.tests]

    @property
    def input_paths(self) -> list[Path]:
        return [self.root / p for p in self.spec.inputs]


def load_spec(path: Path, *, root: Path | None = None, check_files: bool = True) -> LoadedSpec:
    """Read a spec file. `root` defaults to the git repository holding it (or the current
    directory outside one). Raises SpecError carrying every problem found."""
    text = read_spec_text(path)
    if root is None:
        root = repo_root(path.resolve().parent) or Path.cwd()
    return _load(text, str(path), root=root, name=path.name, path=path, check_files=check_files)


def load_repo_spec(root: Path, relative: str) -> LoadedSpec:
    """The spec file at repository path `relative`, its problems located by that path (the
    action's annotations and `selfcorrect check` quote it). A committed link must not make
    either read, and quote in public annotations, a file outside the repository."""
    path = root / relative
    try:
        inside = path.resolve().is_relative_to(root.resolve())
    except OSError:
        inside = False
    if not inside:
        raise SpecError([f"{relative}:1:1: the spec is a link to a file outside the "
                         "repository\n  hint: commit the spec itself, not a link"])
    try:
        text = read_spec_text(path)
    except SpecError as exc:
        raise SpecError([problem.replace(str(path), relative, 1) for problem in exc.problems]
                        ) from exc
    loaded = load_spec_text(text, relative, root=root, name=relative)
    return LoadedSpec(loaded.spec, loaded.source, loaded.root, path, loaded.document)


def load_spec_text(
    text: str,
    source: str,
    *,
    root: Path | None = None,
    name: str | None = None,
    check_files: bool = True,
) -> LoadedSpec:
    """Load a spec held in a string, e.g. a fenced block from an issue body: `source` labels
    the problems (`issue #12:3:1: ...`), `name` picks the default output (default: source)."""
    if root is None:
        root = repo_root(Path.cwd()) or Path.cwd()
    return _load(text, source, root=root, name=name or source, path=None, check_files=check_files)


def file_problems(loaded: LoadedSpec) -> list[str]:
    """Located problems for tests and inputs that are missing or not plain files in the repo,
    and for an output path that goes through a link; for a repair, for globs that match no
    file it may rewrite, missing test files and a requirements file it cannot install."""
    spec = loaded.spec
    fields = {name: getattr(spec, name) for name in FILE_FIELDS[_kind_group(spec.kind)]}
    return [_located(loaded.source, loaded.document, loc, message, hint)
            for loc, message, hint in _named_file_problems(loaded.root, spec.kind, fields)]


# The fields that name files of the repository, by kind: what file_problems checks.
FILE_FIELDS = {"script": ("inputs", "tests", "output"),
               "repair": ("files", "failing_tests", "requirements")}


def _kind_group(kind: object) -> str:
    return "repair" if kind == "repair" else "script"


def _named_file_problems(root: Path, kind: object, fields: dict[str, Any]
                         ) -> list[tuple[Loc, str, str]]:
    """The problems of the files `fields` name (FILE_FIELDS' of `kind`; one left out is not
    checked)."""
    if kind == "repair":
        return repair_file_problems(root, files=fields.get("files") or [],
                                    failing_tests=fields.get("failing_tests") or [],
                                    requirements=fields.get("requirements"))
    placed = [((name, index), path) for name in ("inputs", "tests")
              for index, path in enumerate(fields.get(name) or [])]
    found = _file_problems(root, placed)
    output = fields.get("output")
    if output and (problem := output_problem(root, output)):
        found.append((("output",), *problem))
    return found


def _independent_file_problems(data: dict[str, Any], exc: ValidationError, root: Path,
                               source: str, document: Any) -> list[str]:
    """While some fields are invalid, the files named by the fields that are valid on their
    own: a missing file does not wait for a type error elsewhere to be fixed (issue 38, item
    8). Nothing while `kind` itself is invalid: which fields name files depends on it."""
    broken = {error["loc"][0] for error in exc.errors() if error["loc"]}
    if "kind" in broken:
        return []
    kind = data.get("kind", "script")
    fields = {}
    for name in FILE_FIELDS[_kind_group(kind)]:
        if name in data and name not in broken:
            adapter: TypeAdapter[Any] = TypeAdapter(
                TaskSpec.model_fields[name].rebuild_annotation())
            try:
                fields[name] = adapter.validate_python(data[name])
            except ValidationError:  # invalid alone too, e.g. a conflict's other side
                continue
    found = _named_file_problems(root, kind, fields) if fields else []
    return [_located(source, document, loc, message, hint) for loc, message, hint in found]


def _load(
    text: str, source: str, *, root: Path, name: str, path: Path | None, check_files: bool
) -> LoadedSpec:
    document = _parse_mapping(text, source)
    data = yamlio.to_plain(document)
    # A repair rewrites the repository's own files: it has no script to put anywhere.
    derived = (default_output(name) if data.get("output") is None
               and data.get("kind") != "repair" else None)
    if derived:
        data["output"] = derived
    try:
        spec = TaskSpec.model_validate(data)
    except ValidationError as exc:
        problems = _describe(exc, document, source, derived_output=derived)
        if check_files:
            problems += _independent_file_problems(data, exc, root.resolve(), source,
                                                   document)
        raise SpecError(_in_file_order(problems, source)) from exc
    loaded = LoadedSpec(spec, source, root.resolve(), path, document)
    problems = file_problems(loaded) if check_files else []
    if problems:
        raise SpecError(_in_file_order(problems, source))
    return loaded


def _parse_mapping(text: str, source: str) -> Any:
    # An issue body arrives as text, not through read_spec_text: the same cap applies.
    if len(text.encode("utf-8", "surrogatepass")) > MAX_SPEC_BYTES:
        raise too_large(source)
    document = yamlio.load_yaml_text(text, source)
    if document is None:
        raise SpecError([
            f"{source}:1:1: the spec is empty"
            "\n  hint: start with `prompt: |` and describe the task (see docs/task-spec.md)"
        ])
    if not isinstance(document, dict):
        found = "a list" if isinstance(document, list) else f"the single value {document!r}"
        line, col = yamlio.locate(document, ())
        raise SpecError([
            f"{source}:{line}:{col}: expected a mapping of fields (prompt:, kind:, ...) "
            f"at the top level, found {found}"
            "\n  hint: write `key: value` lines starting at column 1, without a leading '- '"
        ])
    return document


def _describe(
    exc: ValidationError, document: Any, source: str, *, derived_output: str | None
) -> list[str]:
    problems = []
    for error in exc.errors(include_url=False):
        if error["type"] == "spec_conflict":
            problems += [
                _located(source, document, c.loc, c.message, _hint(c, derived_output))
                for c in error["ctx"]["conflicts"]
            ]
    return problems or yamlio.describe_errors(
        exc, document, source, default_hint=DOCS_HINT, model=TaskSpec
    )


def _in_file_order(problems: list[str], source: str) -> list[str]:
    """Sorted by line and column: pydantic reports in field order, people read top-down."""

    def position(problem: str) -> tuple[int, int]:
        line, col, _ = problem[len(source) + 1 :].split(":", 2)
        return int(line), int(col)

    return sorted(problems, key=position)


def _hint(conflict: Conflict, derived_output: str | None) -> str:
    if derived_output and conflict.loc == ("output",):
        return f"output defaulted to {derived_output} from the spec's name: set `output:`"
    return conflict.hint


def _located(source: str, document: Any, loc: Loc, message: str, hint: str) -> str:
    line, col = yamlio.locate(document, loc)
    return f"{source}:{line}:{col}: {dotted(loc)}: {message}\n  hint: {hint}"
