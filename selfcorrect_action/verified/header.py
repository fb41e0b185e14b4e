"""The short comment a published script carries: which spec it was generated from and how to
check it. Placed after a shebang and a coding line (Python reads those only on the first
two lines), and put in before the script's final verification, so the verified bytes are
the committed ones. Pure."""

from __future__ import annotations

import re

from selfcorrect_action.templating import render

# PEP 263: a coding declaration is a comment matching this on line 1 or 2.
_CODING = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+")
MARK = "# selfcorrect:"


def header_lines(spec: str, lock: str) -> list[str]:
    return render("reports/script_header.txt.j2", spec=spec, lock=lock).strip().splitlines()


def with_header(code: str, *, spec: str, lock: str) -> str:
    """`code` with the header, replacing an earlier one of ours (a regeneration)."""
    lines = without_header(code).splitlines(keepends=True)
    keep = 0
    if lines and lines[0].startswith("#!"):
        keep = 1
    if len(lines) > keep and _CODING.match(lines[keep]):
        keep += 1
    ending = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    header = [line + ending for line in header_lines(spec, lock)]
    return "".join([*lines[:keep], *header, *lines[keep:]])


def without_header(code: str) -> str:
    """`code` with our header's lines taken out (nothing else changes)."""
    return "".join(line for line in code.splitlines(keepends=True)
                   if not line.startswith(MARK))
