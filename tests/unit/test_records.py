"""evolve: copies of frozen records that are validated, unlike model_copy(update=...)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from selfcorrect_action.loop.state import Status, Usage
from selfcorrect_action.records import evolve
from selfcorrect_action.taxonomy import Category, Verdict


def test_changed_values_are_validated() -> None:
    usage = Usage()
    with pytest.raises(ValidationError):
        evolve(usage, {"tokens": "many"})
    assert evolve(usage, {"tokens": 12}).tokens == 12
    assert usage.tokens == 0  # the original is untouched


def test_unknown_fields_are_refused() -> None:
    with pytest.raises(TypeError, match="no field colour"):
        evolve(Usage(), {"colour": "red"})


def test_enum_fields_hold_enums_not_strings() -> None:
    verdict = Verdict(passed=False, failed_layer="execution", category=Category.RUNTIME,
                      evidence="x")
    changed = evolve(verdict, {"category": "syntax"})
    assert changed.category is Category.SYNTAX
    with pytest.raises(ValidationError):
        evolve(verdict, {"category": "cosmic rays"})
    assert Status("stopped") is Status.STOPPED
