"""The disk and raw-text side of loading a task spec: reading the file, refusing YAML that
would blow up when copied, finding the repository root, and checking the files a spec names.

Kept apart from the schema in spec.py; problems come back as (loc, message, hint) for the
caller to locate in the YAML, or as SpecError lines where there is no field to point at.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from selfcorrect_action.errors import SpecError
from selfcorrect_action.test_files import test_file_problem
from selfcorrect_action.yamlio import MAX_YAML_BYTES, read_text_file
from selfcorrect_action.yamlio import too_large as too_large_file

Loc = tuple[str | int, ...]
FileProblem = tuple[Loc, str, str]

# The work dir is a 64 MiB tmpfs (sandbox Limits.work_mb): what the spec places there must
# leave room for what the script writes. Tests are source code: a MiB is already huge.
MAX_PLACED_BYTES = 48 * 1024 * 1024
MAX_TEST_BYTES = 1024 * 1024


def repo_root(start: Path) -> Path | None:
    """The nearest folder at or above `start` holding `.git` (a folder, or a file in a git
    worktree or submodule), or None outside any repository."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def work_dir_name(path: str) -> str:
    """Where a file lands in the sandbox work dir: inputs and tests are copied in by file
    name (as `selfcorrect exec --input` does) and the script runs under its own file name."""
    return PurePosixPath(path).name


# A spec is a hand-written page: a prompt, a contract, a few paths. A quarter of a MiB is
# already ~64k tokens of prompt, the default token budget of a whole run.
MAX_SPEC_BYTES = MAX_YAML_BYTES
TOO_LARGE_HINT = (
    "keep the spec to the task's description; put data in a file and list it under `inputs:`"
)


def read_spec_text(path: Path) -> str:
    """The file's text; unreadable, oversized or non-UTF-8 files become one located
    problem."""
    return read_text_file(path, max_bytes=MAX_SPEC_BYTES, what="a task spec",
                          too_large_hint=TOO_LARGE_HINT)


def too_large(source: str) -> SpecError:
    return too_large_file(source, MAX_SPEC_BYTES, "a task spec", TOO_LARGE_HINT)


def file_problems(root: Path, entries: Sequence[tuple[Loc, str]]) -> list[FileProblem]:
    """Problems for (loc, path) entries that are not regular files inside `root`, for
    tests that are not UTF-8 text of a sensible size, and for files that together would
    not fit the sandbox's work dir."""
    real_root = root.resolve()
    problems = []
    total = 0
    for loc, relative in entries:
        found = _file_problem(root, real_root, relative) or _content_problem(
            root / relative, loc, relative)
        if found:
            problems.append((loc, *found))
        else:
            total += (root / relative).stat().st_size
    if total > MAX_PLACED_BYTES and not problems:
        problems.append((entries[0][0][:1], (
            f"the tests and inputs add up to {total:,} bytes; at most {MAX_PLACED_BYTES:,} fit "
            "in the sandbox's work dir with room for what the script writes"),
            "use smaller inputs (a sample of the data), or fewer of them"))
    return problems


def _content_problem(target: Path, loc: Loc, relative: str) -> tuple[str, str] | None:
    size = target.stat().st_size
    if size > MAX_PLACED_BYTES:
        return (f"{relative} is {size:,} bytes; a file copied into the sandbox may be at most "
                f"{MAX_PLACED_BYTES:,}", "use a smaller file, e.g. a sample of the data")
    if loc[0] != "tests":
        return None  # inputs are bytes: data, images, anything
    if size > MAX_TEST_BYTES:
        return (f"{relative} is {size:,} bytes; a test file may be at most {MAX_TEST_BYTES:,}",
                "split the tests, or move test data into `inputs:`")
    raw = target.read_bytes()
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        return (f"{relative} is not UTF-8 text (byte 0x{raw[exc.start]:02x} on its line {line})",
                "save the test file as UTF-8")
    problem = test_file_problem(source)
    if problem:
        return (f"{relative} {problem}",
                "frozen tests run against every attempt: fix them first (run pytest on them)")
    return None


def _file_problem(root: Path, real_root: Path, relative: str) -> tuple[str, str] | None:
    target = root / relative
    if not target.exists():  # follows links: a dangling link counts as missing
        return (f"{relative} does not exist (looked in {target})",
                f"{paths_start(root)}; fix the path or add the file")
    if not target.is_file():
        return f"{relative} is not a regular file ({target})", "list files, not folders"
    real = target.resolve()
    # A committed symlink to /proc/self/environ or ~/.ssh would copy host secrets into
    # the sandbox, whose output ends up in a pull request.
    if not real.is_relative_to(real_root):
        return (
            f"{relative} resolves to {real}, outside the repository",
            "copy the file into the repository instead of linking to it",
        )
    return None


def paths_start(root: Path) -> str:
    """Where a spec's paths start, as it is: outside a git repository there is no repository
    root to speak of (a hint once said "the repository root (/tmp)")."""
    if (root / ".git").exists():
        return f"paths are relative to the repository root ({root})"
    if root == Path.cwd().resolve():
        return (f"paths are relative to the current folder ({root}): no git repository holds "
                "the spec, so they start where selfcorrect runs")
    return f"paths are relative to {root}, the folder given as the root (no git repository)"


def output_problem(root: Path, relative: str) -> tuple[str, str] | None:
    """A problem with where the passing script would be written, if any: a committed
    symbolic link on the way (scripts -> ../tests) would make it overwrite a frozen test or
    land outside the repository."""
    target = root
    for part in PurePosixPath(relative).parts:
        target = target / part
        if target.is_symlink():
            return (f"{relative} goes through the symbolic link {target.relative_to(root)} "
                    f"(to {os.readlink(target)})",
                    "write the output to a real folder of the repository")
        if not target.exists():
            return None
    if target.is_dir():
        return f"{relative} is a folder", "name a file"
    return None
