"""Changing a frozen pydantic record without bypassing its validation.

`model_copy(update=...)` copies the values in unchecked: a step that set `"status": "error"`
(a plain string) through it produced a state whose `status.value` crashed the orchestrator
later, far from the mistake (issue 10). `evolve` validates the changed record instead, and
refuses field names the model does not have.
"""

from __future__ import annotations

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
