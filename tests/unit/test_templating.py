from __future__ import annotations

import jinja2
import pytest

from selfcorrect_action.templating import environment, render


def test_json_repair_prompt_quotes_the_problems() -> None:
    text = render(
        "prompts/json_repair.j2",
        problem="the JSON does not match the Plan schema",
        errors=("steps: Field required",),
        schema='{"type": "object"}',
    )

    assert "the JSON does not match the Plan schema" in text
    assert "- steps: Field required" in text
    assert text.rstrip().endswith('{"type": "object"}')


def test_a_missing_variable_fails_the_render() -> None:
    with pytest.raises(jinja2.UndefinedError):
        render("prompts/json_repair.j2", problem="x", errors=())


def test_prompts_are_not_html_escaped() -> None:
    template = environment().from_string("{{ code }}")

    assert template.render(code="if a < b and c > d: print('&')") == (
        "if a < b and c > d: print('&')"
    )
