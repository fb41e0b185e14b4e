"""What `selfcorrect validate` checks of a repair spec against the repository: each glob of
`files:` matches a file that may be rewritten, each failing test's file exists, and the
requirements file is one the derived image can install. Problems come back as
(loc, message, hint) for spec.py to locate in the YAML."""

from __future__ import annotations

from pathlib import Path

from selfcorrect_action.errors import UsageError
from selfcorrect_action.repair import requirements
from selfcorrect_action.repair.files import frozen_reason
from selfcorrect_action.repair.globs import matching
from selfcorrect_action.repair.repository import list_files
from selfcorrect_action.spec_files import FileProblem, file_problems


def repair_file_problems(root: Path, *, files: list[str], failing_tests: list[str],
                         requirements: str | None) -> list[FileProblem]:
    """The problems of a repair spec's `files:`, `failing_tests:` and `requirements:` in the
    repository at `root`. Given the fields, not the TaskSpec: spec.py calls this, and the
    repair's rules stay below the spec that names them (docs/architecture.md, the layering)."""
    try:
        names, _ = list_files(root.resolve())
    except UsageError as exc:
        return [(("files",), exc.message, exc.hint or "check the repository with git status")]
    return [*_glob_problems(files, names), *_test_problems(failing_tests, names),
            *_requirements_problems(root, requirements)]


def _glob_problems(globs: list[str], names: list[str]) -> list[FileProblem]:
    found: list[FileProblem] = []
    for index, glob in enumerate(globs):
        hits = matching([glob], names)
        if not hits:
            found.append((("files", index), f"{glob} matches no file of the repository",
                          "globs are anchored at the repository root: src/*.py is not "
                          "src/pkg/x.py (use src/**/*.py)"))
        elif all(frozen_reason(hit) for hit in hits):
            why = frozen_reason(hits[0])
            found.append((("files", index), f"{glob} matches only files a repair never "
                          f"rewrites ({hits[0]}: {why})",
                          "name the package's source files; tests, conftest.py and "
                          "non-Python files stay frozen"))
    return found


def _test_problems(node_ids: list[str], names: list[str]) -> list[FileProblem]:
    known = set(names)
    folders = {str(Path(name).parent) for name in names}
    found: list[FileProblem] = []
    for index, node_id in enumerate(node_ids):
        path = node_id.split("::", 1)[0].rstrip("/")
        if path not in known and path not in folders:
            found.append((("failing_tests", index), f"{path} is not a file of the repository",
                          "write the node id as pytest prints it, from the repository root"))
    return found


def _requirements_problems(root: Path, path: str | None) -> list[FileProblem]:
    if path is None:
        return []
    missing = file_problems(root, [(("requirements",), path)])
    if missing:
        return missing
    try:
        text = (root / path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return [(("requirements",), f"{path} is not UTF-8 text", "save it as UTF-8")]
    return [(("requirements",), f"{path} line {problem.line}: {problem.message}",
             "one package per line, e.g. hypothesis>=6 (see docs/repair.md)")
            for problem in requirements.problems(text)]
