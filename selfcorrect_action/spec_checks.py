"""Checks between task-spec fields that are each valid on their own.

They run inside TaskSpec's validator, so a spec built in code cannot skip them; each
conflict carries the location of the field to change, which the loader turns into
`file:line:col`.
"""

from __future__ import annotations

import keyword
import sys
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, NamedTuple

from pydantic import BaseModel

from selfcorrect_action.spec_files import Loc, work_dir_name

if TYPE_CHECKING:
    from selfcorrect_action.spec import TaskSpec


class Conflict(NamedTuple):
    loc: Loc
    message: str
    hint: str


def find_conflicts(spec: TaskSpec) -> list[Conflict]:
    """Problems between fields that are each valid on their own."""
    if spec.kind == "repair":
        return [*_repair_conflicts(spec), *_signature_conflicts(spec)]
    return [*_misplaced_repair_fields(spec), *_placement_conflicts(spec),
            *_output_conflicts(spec), *_artifact_conflicts(spec), *_signature_conflicts(spec)]


# Fields only a repair takes, and what a repair does instead of the fields it does not.
# Compared with their defaults, not with what was written: run.json holds a full dump of
# the spec, where every field looks written (see user_contract_fields).
REPAIR_FIELDS = ("files", "test_command", "failing_tests", "requirements", "review")
NOT_FOR_REPAIR = {
    "output": "a repair rewrites the repository's own files (`files:`), it writes no script",
    "tests": "a repair is judged by the repository's own tests: name the ones that must "
             "pass in `failing_tests:`",
    "inputs": "a repair runs in a copy of the whole repository: its files are all there",
    "isolation": "the repository's own suite imports its code in pytest's process; the "
                 "rewritten files are scanned for tampering instead (docs/repair.md)",
    "judge": "a repair is judged by the repository's tests, and by the reviewer (`review:`) "
             "before each run",
    "tests_runner": "a repair runs the repository's own test command (`test_command:`)",
}  # fmt: skip
NOT_FOR_REPAIR_CONTRACT = {
    "artifacts": "a repair is judged by the repository's tests, not by files it writes",
    "stdout_contains": "a repair is judged by the repository's tests, not by its output",
    "success_criteria": "a repair has no judge to read criteria: its tests are the criteria",
}  # fmt: skip


def _changed(model: BaseModel, name: str) -> bool:
    field = type(model).model_fields[name]
    return bool(getattr(model, name) != field.get_default(call_default_factory=True))


def _repair_conflicts(spec: TaskSpec) -> list[Conflict]:
    conflicts = [Conflict((name,), f"kind repair does not take {name}: {why}",
                          f"remove `{name}:`")
                 for name, why in NOT_FOR_REPAIR.items() if _changed(spec, name)]
    contract = spec.contract
    conflicts += [Conflict(("contract", name), f"kind repair does not take {name}: {why}",
                           f"remove `{name}:`")
                  for name, why in NOT_FOR_REPAIR_CONTRACT.items() if _changed(contract, name)]
    if contract.network != "none":
        conflicts.append(Conflict(
            ("contract", "network"), "a repair's tests run without network: dependencies are "
            "installed when the sandbox image is built (`requirements:`)",
            "remove `network:`; list what the tests need in a requirements file"))
    if not spec.files:
        conflicts.append(Conflict(
            ("kind",), "kind repair needs `files:`, the globs of the files it may rewrite",
            "add e.g. `files: [src/mypkg/*.py]` (everything else stays read-only)"))
    return conflicts


def _misplaced_repair_fields(spec: TaskSpec) -> list[Conflict]:
    return [Conflict((name,), f"{name} is for kind repair only (this spec is kind "
                     f"{spec.kind})", f"remove `{name}:`, or set `kind: repair`")
            for name in REPAIR_FIELDS if _changed(spec, name)]


def placed_files(spec: TaskSpec) -> list[tuple[Loc, str]]:
    """(location, path) of every file copied from the repository into the work dir."""
    inputs: list[tuple[Loc, str]] = [(("inputs", i), p) for i, p in enumerate(spec.inputs)]
    return inputs + [(("tests", i), p) for i, p in enumerate(spec.tests)]


def _placement_conflicts(spec: TaskSpec) -> list[Conflict]:
    """Inputs and tests are copied into the work dir by file name: two must not share one,
    nor differ only in case (one file on macOS and Windows checkouts, and the artifact
    reader refuses case-only twins)."""
    seen: dict[str, tuple[Loc, str]] = {}
    conflicts = []
    for loc, path in placed_files(spec):
        name = work_dir_name(path)
        if name.casefold() not in seen:
            seen[name.casefold()] = (loc, path)
            continue
        first_loc, first_path = seen[name.casefold()]
        first_name = work_dir_name(first_path)
        if path == first_path:
            message = f"{path} is already listed as {dotted(first_loc)}"
        elif name == first_name:
            message = (f"{path} and {dotted(first_loc)} ({first_path}) would both be copied "
                       f"to the work dir as {name}")
        else:
            message = (f"{path} and {dotted(first_loc)} ({first_path}) differ only in case "
                       f"({name} / {first_name}): one file where case is not kept")
        conflicts.append(Conflict(loc, message, "remove the duplicate or rename one file"))
    return conflicts


# Modules a script in the work dir would hide: the standard library and what the sandbox
# image installs (sandbox/Dockerfile) or its tests run with, the tests' boundary among them
# (sandbox/boundary/: already loaded in both of its processes, so a candidate named like it
# would never be the module the tests import).
SHADOWED_MODULES = frozenset(sys.stdlib_module_names) | {
    "numpy", "pandas", "matplotlib", "PIL", "scipy", "requests", "bs4", "lxml", "pytest",
    "_pytest", "yaml", "openpyxl", "tabulate", "dateutil", "sklearn", "pluggy", "urllib3",
    "certifi", "charset_normalizer", "idna", "six", "pytz", "conftest",
    "selfcorrect_boundary",
}  # fmt: skip


def _output_conflicts(spec: TaskSpec) -> list[Conflict]:
    if spec.output is None:
        return []
    conflicts = []
    name = work_dir_name(spec.output)
    clashes = [loc for loc, path in placed_files(spec) if work_dir_name(path) == name]
    if clashes:
        conflicts.append(Conflict(
            ("output",),
            f"the script runs in the work dir as {name}, the same name as {dotted(clashes[0])}",
            "choose another output file name",
        ))
    module = PurePosixPath(spec.output).stem
    if module in SHADOWED_MODULES:
        conflicts.append(Conflict(
            ("output",),
            f"the script runs as {name} in its work dir, which comes first on sys.path: "
            f"every `import {module}` (inside pandas, pytest... too) would import the script "
            "instead of the real module",
            f"choose a name that is not a module's, e.g. {module}_task.py",
        ))
    if spec.kind == "function" and not _importable(module):
        conflicts.append(Conflict(
            ("output",),
            f"kind function: tests import the module {module!r}, which is not a valid "
            "Python module name",
            "use letters, digits and underscores, e.g. scripts/sales_chart.py",
        ))
    return conflicts


def _artifact_conflicts(spec: TaskSpec) -> list[Conflict]:
    own = {spec.output, work_dir_name(spec.output)} if spec.output else set()
    placed: dict[str, Loc] = {}
    for where, path in placed_files(spec):
        placed.setdefault(work_dir_name(path), where)
    conflicts = []
    earlier: dict[str, str] = {}
    for i, artifact in enumerate(spec.contract.artifacts):
        loc: Loc = ("contract", "artifacts", i, "path")
        twin = earlier.setdefault(artifact.path.casefold(), artifact.path)
        if twin != artifact.path:
            conflicts.append(Conflict(
                loc, f"{artifact.path} and {twin} differ only in case: the artifacts are read "
                "back as one file where case is not kept, and refused as twins",
                "give one of them another name",
            ))
        elif artifact.path in own:
            conflicts.append(Conflict(
                loc, f"{artifact.path} is the script itself (output: {spec.output})",
                "artifacts are files the script writes; the output file is kept anyway",
            ))
        elif artifact.path in placed:
            source = placed[artifact.path]
            why = "the script would overwrite a frozen test" if source[0] == "tests" else (
                "it exists before the script runs, so checking it proves nothing")
            conflicts.append(Conflict(
                loc, f"{artifact.path} is also {dotted(source)}: {why}",
                "give the artifact another name",
            ))
    return conflicts


def _signature_conflicts(spec: TaskSpec) -> list[Conflict]:
    if spec.kind == "function":
        return []
    conflicts = []
    if spec.signature is not None:
        conflicts.append(Conflict(("signature",), "a signature is for `kind: function` (the "
                                  "function the tests call); this spec is a script",
                                  "set `kind: function`, or remove the signature"))
    if spec.generation == "completion":
        conflicts.append(Conflict(("generation",), "completion continues a function's code: "
                                  "it is for `kind: function`; a script is written whole",
                                  "set `kind: function`, or `generation: chat`"))
    return conflicts


def _importable(module: str) -> bool:
    return module.isidentifier() and not keyword.iskeyword(module)


def dotted(loc: Loc) -> str:
    return ".".join(str(part) for part in loc)

