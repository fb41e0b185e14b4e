"""Paths an MCP client sends, held inside the server's root: a client is a model acting for
someone, and the paths it names are its guesses or an attacker's text in a prompt. Refused:
`..` anywhere, and anything that resolves (through a link) outside the root. An absolute
path is taken when it lies inside the root (clients often send them)."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from selfcorrect_action.errors import UsageError


def confined(root: Path, given: str, what: str) -> Path:
    """`given` (a path a client sent as `what`) as a real path inside `root`."""
    if not given.strip():
        raise UsageError(f"{what}: empty path", hint="name a file under the server's root")
    if any(ord(char) < 32 or ord(char) == 127 for char in given):
        raise UsageError(f"{what}: the path holds control characters (newlines, tabs...)",
                         hint="write the path on one line, as the file is named")
    real_root = root.resolve()
    pure = PurePosixPath(given)
    if ".." in pure.parts:
        raise _outside(what, given, real_root)
    target = (real_root / pure).resolve()  # an absolute `given` replaces real_root here
    if not target.is_relative_to(real_root):
        raise _outside(what, given, real_root)
    return target


def _outside(what: str, given: str, root: Path) -> UsageError:
    return UsageError(
        f"{what} {given!r}: outside the server's root {root}",
        hint="name a path under the root, relative to it, without '..' and not through a "
        "link that leads out (the server was started with --root)")
