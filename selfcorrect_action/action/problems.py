"""Spec problems (`SOURCE:LINE:COL: message` + `  hint: ...`, as SpecError carries them) as
records a comment lists and an annotation points with."""

from __future__ import annotations

import re
from dataclasses import dataclass

_LOCATED = re.compile(r"^(?P<where>.{1,400}?):(?P<line>\d{1,7}):(?P<col>\d{1,7}): (?P<msg>.*)$",
                      re.DOTALL)
MAX_PROBLEMS_SHOWN = 50


@dataclass(frozen=True)
class Problem:
    where: str  # "spec.yml:3:5", or the whole location text of an issue's problem
    message: str
    hint: str = ""
    file: str | None = None
    line: int | None = None
    col: int | None = None


def parse_problem(text: str) -> Problem:
    first, _, rest = text.partition("\n")
    hint = next((line.strip()[len("hint:"):].strip() for line in rest.splitlines()
                 if line.strip().startswith("hint:")), "")
    match = _LOCATED.match(first)
    if match is None:
        return Problem(where="", message=first, hint=hint)
    line, col = int(match.group("line")), int(match.group("col"))
    return Problem(where=f"{match.group('where')}:{line}:{col}", message=match.group("msg"),
                   hint=hint, file=match.group("where"), line=line, col=col)


def parse_problems(texts: list[str]) -> list[Problem]:
    return [parse_problem(text) for text in texts[:MAX_PROBLEMS_SHOWN]]
