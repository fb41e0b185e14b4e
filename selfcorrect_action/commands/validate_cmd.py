"""`selfcorrect validate FILE...`: check task specs, as a command and as a pre-commit hook.

Every problem of every file is printed (one `file:line:col: message` line, then its hint), so
a pre-commit run shows all there is to fix at once instead of one problem per commit attempt;
past MAX_SHOWN problems in one file, the rest are counted (a file with hundreds of problems
is not a spec yet, and the log should stay readable).
"""

from __future__ import annotations

from pathlib import Path

from selfcorrect_action.api.validation import validate

MAX_SHOWN = 50


SPEC_SUFFIXES = (".yml", ".yaml")
# Folders nobody keeps specs in, skipped when a folder is walked (a spec folder such as
# .selfcorrect/ is hidden too, so hidden folders in general are not skipped).
SKIPPED_FOLDERS = frozenset({".git", ".venv", "venv", "node_modules", "__pycache__", ".tox"})


def validate_files(paths: list[Path], *, check_files: bool = True) -> int:
    """Print the problems of each spec and a summary line; 0 when all are valid, else 1.
    A folder stands for the *.yml and *.yaml files under it, as ruff and pytest take
    folders (issue 9)."""
    failed = 0
    paths = expand(paths)
    for path in paths:
        problems = spec_problems(path, check_files=check_files)
        for problem in problems[:MAX_SHOWN]:
            print(problem)
        if len(problems) > MAX_SHOWN:
            print(f"{path}: {len(problems) - MAX_SHOWN} more problems not shown; "
                  "fix the ones above first")
        failed += bool(problems)
    print(summary(len(paths), failed))
    return 1 if failed else 0


def expand(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if not path.is_dir():
            files.append(path)
            continue
        files.extend(sorted(
            found for found in path.rglob("*")
            if found.suffix in SPEC_SUFFIXES and found.is_file()
            and not SKIPPED_FOLDERS.intersection(found.relative_to(path).parts)))
    return files


def spec_problems(path: Path, *, check_files: bool = True) -> list[str]:
    return [problem.text for problem in validate(path, check_files=check_files).problems]


def summary(checked: int, failed: int) -> str:
    files = "file" if checked == 1 else "files"
    verdict = f"{failed} with problems" if failed else "no problems"
    return f"{checked} {files} checked, {verdict}"
