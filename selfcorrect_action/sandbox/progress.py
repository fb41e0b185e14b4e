"""The progress callback of image builds: every line of build and debootstrap output as it
comes, and our own notes, which start with NOTE so a front end can tell them apart."""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[str], None]
NOTE = "==> "


def ignore_progress(line: str) -> None:
    return None
