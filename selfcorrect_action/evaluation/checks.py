"""How artifact checks are named, so every reader of a Verdict sees the same shape:
`<artifact path>: <aspect>` with a detail that starts with the path as well (the detail is what
the repair prompt quotes, without the name)."""

from __future__ import annotations

from selfcorrect_action.taxonomy import Check


def passed(path: str, aspect: str, detail: str) -> Check:
    return Check(name=f"{path}: {aspect}", passed=True, detail=f"{path}: {detail}")


def failed(path: str, aspect: str, detail: str) -> Check:
    return Check(name=f"{path}: {aspect}", passed=False, detail=f"{path}: {detail}")


def count(number: int, noun: str) -> str:
    """Number and noun, pluralised: "1 row", "3 rows", "12,000 rows"."""
    return f"{number:,} {noun}" if number == 1 else f"{number:,} {noun}s"


def listing(items: list[str], *, limit: int = 12) -> str:
    """Quoted, comma-separated, capped: a header of 5,000 columns must not flood a report."""
    shown = ", ".join(repr(_short(item)) for item in items[:limit])
    if len(items) > limit:
        shown += f", … ({len(items) - limit:,} more)"
    return shown or "(none)"


def _short(item: str, chars: int = 40) -> str:
    return item if len(item) <= chars else item[: chars - 1] + "…"
