"""Changing a frozen pydantic record without bypassing its validation.

`model_copy(update=...)` copies the values in unchecked: a step that set `"status": "error"`
(a plain string) through it produced a state whose `status.value` crashed the orchestrator
later, far from the mistake (issue 10). `evolve` validates the changed record instead, and
refuses field names the model does not have.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

R = TypeVar("R", bound=BaseModel)


def evolve(record: R, changes: Mapping[str, Any]) -> R:
    """A validated copy of `record` with `changes` applied.

    Nested records already validated are taken as they are (pydantic does not revalidate
    model instances), so this stays cheap for a run state holding many attempts; the
    changed values themselves are checked against their field types.
    """
    fields = type(record).model_fields
    unknown = sorted(set(changes) - set(fields))
    if unknown:
        raise TypeError(f"{type(record).__name__} has no field {', '.join(unknown)}")
    values = {name: getattr(record, name) for name in fields}
    return type(record).model_validate({**values, **changes})


@functools.cache
def schema_words(model: type[BaseModel]) -> frozenset[str]:
    """Every enum value and constant string of `model`'s JSON schema (its StrEnum and
    Literal fields): words a redaction keeps whatever a secret spells, so a status of
    `passed` stays `passed` when a token happens to read the same."""
    words: set[str] = set()
    stack: list[Any] = [model.model_json_schema()]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            words.update(v for v in node.get("enum", ()) if isinstance(v, str))
            if isinstance(node.get("const"), str):
                words.add(node["const"])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return frozenset(words)
