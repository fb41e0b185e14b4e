"""Finding and reading the task specs an action run is about: spec files in the workspace
(by glob, or a pull request's changed files), the spec behind a retry, and each task's
replay file."""

from __future__ import annotations

import fnmatch
from pathlib import Path, PurePosixPath

from selfcorrect_action.errors import UsageError

MAX_SPECS = 100


def spec_paths(workspace: Path, pattern: str) -> list[str]:
    """Repository-relative paths of the files `pattern` (a glob, `**` allowed) matches."""
    pure = PurePosixPath(pattern)
    if pure.is_absolute() or ".." in pure.parts:
        raise UsageError(f"input tasks: {pattern!r} must be a glob inside the repository",
                         hint="for example .selfcorrect/tasks/*.yml")
    if not pure.parts or pure.parts == (".",):
        # pathlib's glob crashes on "." and "./" (IndexError, AttributeError): it names the
        # repository itself, no file in it.
        raise UsageError(f"input tasks: {pattern!r} names the repository, not spec files",
                         hint="give a glob of spec files, e.g. .selfcorrect/tasks/*.yml or "
                         "**/*.selfcorrect.yml")
    found = sorted(path.relative_to(workspace).as_posix()
                   for path in workspace.glob(pure.as_posix())
                   if path.is_file() and ".git" not in path.relative_to(workspace).parts)
    if len(found) > MAX_SPECS:
        raise UsageError(f"input tasks: {pattern!r} matches {len(found)} files, more than the "
                         f"{MAX_SPECS} one run takes", hint="narrow the glob, or fan the specs "
                         "out over a matrix job (examples/workflows/selfcorrect-matrix.yml)")
    return found


def matches(path: str, pattern: str) -> bool:
    """Whether a changed file's path falls under the tasks glob: `*` stays within a folder,
    `**/` spans folders, as for spec_paths."""
    if "**" in pattern:
        return fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(
            path, pattern.replace("**/", ""))
    parts, wanted = PurePosixPath(path).parts, PurePosixPath(pattern).parts
    return len(parts) == len(wanted) and all(
        fnmatch.fnmatchcase(part, want) for part, want in zip(parts, wanted, strict=True))


def replay_for(workspace: Path, replay: str | None, spec_path: str, *, count: int
               ) -> Path | None:
    """The replay input names one recording (one task) or a folder of `<spec name>.jsonl`."""
    if replay is None:
        return None
    target = workspace / replay
    if target.is_dir():
        candidate = target / (PurePosixPath(spec_path).stem + ".jsonl")
        if not candidate.is_file():
            raise UsageError(f"input replay: the folder {replay} has no "
                             f"{candidate.name} for {spec_path}",
                             hint="record it with `selfcorrect run SPEC --record FILE`")
        return candidate
    if count > 1:
        raise UsageError(f"input replay names one recording ({replay}) but {count} task "
                         "specs are to run", hint="give a folder holding one "
                         "<spec name>.jsonl per spec")
    if not target.is_file():
        raise UsageError(f"input replay: {replay} is not a file in the repository",
                         hint="commit the recording, or fix the path")
    return target
