"""Which files of a repository a repair may rewrite. Pure.

The spec's `files:` globs say what the model may touch; on top of that, whatever the globs
say, these stay frozen (issue 18, "Integrity"): test files, anything that configures or
plugs into pytest, anything that is not Python source, and the workflows. A glob such as
`**/*.py` therefore never hands out the tests that judge the repair.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath

from selfcorrect_action.repair.globs import matching

# Folders whose files are tests or test support, at any depth.
TEST_FOLDERS = frozenset({"tests", "test", "testing"})


def frozen_reason(path: str) -> str | None:
    """Why `path` may never be rewritten by a repair, or None when the globs decide."""
    pure = PurePosixPath(path)
    name = pure.name
    if pure.parts and pure.parts[0].casefold() in {".github", ".git"}:
        return "the workflows and git's own folder are never written"
    if pure.suffix != ".py":
        return "only Python source files are rewritten (configuration, data and docs stay)"
    if name == "conftest.py":
        return "a conftest.py plugs into pytest: it could rewrite any test's outcome"
    if name.startswith("test_") or name.endswith("_test.py"):
        return "a test file: the tests judge the repair"
    folders = {part.casefold() for part in pure.parts[:-1]}
    if folders & TEST_FOLDERS:
        return "inside a test folder: the tests judge the repair"
    return None


def writable(globs: Iterable[str], paths: Iterable[str]) -> list[str]:
    """The paths the globs match that are not frozen, in the order given."""
    return [path for path in matching(globs, paths) if frozen_reason(path) is None]


def refusal(path: str, allowed: Iterable[str], globs: Iterable[str]) -> str | None:
    """Why an answer may not write `path`, or None when it may."""
    reason = frozen_reason(path)
    if reason is not None:
        return f"{path} is frozen ({reason})"
    if path not in set(allowed):
        listed = ", ".join(globs)
        return f"{path} is not a file of the repository that `files:` ({listed}) allows"
    return None
