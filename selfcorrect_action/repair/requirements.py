"""A repair spec's `requirements:` file, checked before it is installed into a derived
sandbox image (sandbox/derived_image.py). Pure.

Only what names packages on the package index is taken: a requirement per line (PEP 508:
name, extras, version specifiers, markers), optionally with `--hash=` options, comments and
`\\` continuations. Everything else is refused with its line: `-r`/`-c` and paths name files
the image build never sees, `-e .` would install the repository (whose code is what is being
repaired), URLs and index options pull code from elsewhere than the index the build uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement

MAX_REQUIREMENTS_BYTES = 64 * 1024
_HASH = re.compile(r"--hash=(sha256|sha384|sha512):[0-9a-fA-F]+\Z")


@dataclass(frozen=True)
class RequirementsProblem:
    line: int  # 1-based, in the file
    message: str


def logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each requirement, comments and continuations resolved."""
    found: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = re.sub(r"(^|\s)#.*", "", raw).rstrip()
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        joined = " ".join((pending + line).split())
        pending = ""
        if joined:
            found.append((start, joined))
    if pending.strip():
        found.append((start, " ".join(pending.split())))
    return found


def problems(text: str) -> list[RequirementsProblem]:
    """What is wrong with each line; [] for a file the derived image can install."""
    if len(text.encode()) > MAX_REQUIREMENTS_BYTES:
        return [RequirementsProblem(1, f"the file is larger than {MAX_REQUIREMENTS_BYTES:,} "
                                    "bytes; list the test dependencies only")]
    found = [problem for number, line in logical_lines(text)
             if (problem := _line_problem(number, line)) is not None]
    if not found and not logical_lines(text):
        found.append(RequirementsProblem(1, "the file names no requirement; remove "
                                         "`requirements:` from the spec instead"))
    return found


def _line_problem(number: int, line: str) -> RequirementsProblem | None:
    tokens = line.split()
    cut = next((i for i, token in enumerate(tokens) if token.startswith("-")), len(tokens))
    requirement, options = " ".join(tokens[:cut]), tokens[cut:]
    if not requirement:
        return RequirementsProblem(number, f"{tokens[0]!r}: options (-r, -e, -c, --index-url"
                                   "...) are not taken; list each package by name")
    bad = [option for option in options if not _HASH.match(option)]
    if bad:
        return RequirementsProblem(number, f"{bad[0]!r}: only --hash=<algorithm>:<hex> may "
                                   "follow a requirement")
    try:
        parsed = Requirement(requirement)
    except InvalidRequirement as exc:
        return RequirementsProblem(number, f"{requirement!r} is not a requirement: {exc}")
    if parsed.url:
        return RequirementsProblem(number, f"{parsed.name} @ {parsed.url}: direct URLs are not "
                                   "taken; name a version on the package index")
    return None
