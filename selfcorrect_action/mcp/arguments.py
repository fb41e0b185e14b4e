"""A tool call whose arguments do not fit the tool's schema, said in the tool's terms (issue
38): the SDK answered with pydantic's own text, which names its internal models
(`exec_toolArguments`) and links pydantic's site. Here: the tool, each argument by its
path (`contract.network`), what it takes and what came, and what the tool takes.

Pure: a ValidationError and the tool's input schema in, a UsageError out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from selfcorrect_action.errors import UsageError

# What pydantic's error types expect, in JSON's words (a client speaks JSON).
EXPECTED = {
    "string_type": "a string", "int_type": "an integer", "int_parsing": "an integer",
    "int_from_float": "an integer", "float_type": "a number", "float_parsing": "a number",
    "bool_type": "true or false", "bool_parsing": "true or false", "list_type": "an array",
    "dict_type": "an object", "model_type": "an object", "model_attributes_type": "an object",
}
JSON_TYPES = ((bool, "a boolean"), (int, "an integer"), (float, "a number"),
              (str, "a string"), (list, "an array"), (dict, "an object"))
MAX_SHOWN_CHARS = 60
# "instance of ExecutionContract": the name of a class of ours, nothing a client can send.
_INSTANCE = re.compile(r" or instance of \w+")


def arguments_error(tool: str, exc: ValidationError, schema: Mapping[str, Any]) -> UsageError:
    """What a call to `tool` got wrong, every argument named by its path."""
    problems = [_problem(error) for error in exc.errors(include_url=False)]
    hints = [error.get("ctx", {}).get("hint") for error in exc.errors(include_url=False)]
    if len(problems) == 1:
        message = f"{tool}: {problems[0]}"
    else:
        message = f"{tool}: {len(problems)} arguments do not fit: {'; '.join(problems)}"
    own = hints[0] if len(hints) == 1 and isinstance(hints[0], str) else None
    return UsageError(message, hint=own or takes(tool, schema))


def unknown_error(tool: str, unknown: Sequence[str], schema: Mapping[str, Any]) -> UsageError:
    """Arguments the tool does not take: a misspelt name would otherwise be dropped and
    the call run without it."""
    names = ", ".join(sorted(unknown))
    return UsageError(f"{tool}: unknown argument{'s' if len(unknown) > 1 else ''} {names}",
                      hint=takes(tool, schema))


def unknown_arguments(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    return [name for name in arguments if name not in schema.get("properties", {})]


def takes(tool: str, schema: Mapping[str, Any]) -> str:
    """`exec takes script (string, required), script_name (string), ...`."""
    required = set(schema.get("required", ()))
    shown = [f"{name} ({_type_words(field)}{', required' if name in required else ''})"
             for name, field in schema.get("properties", {}).items()]
    return f"{tool} takes {', '.join(shown)}" if shown else f"{tool} takes no arguments"


def _problem(error: Mapping[str, Any]) -> str:
    # A tagged union's tag, "(a word)", is pydantic's, not a field the client wrote.
    where = ".".join(str(part) for part in error["loc"]
                     if not (isinstance(part, str) and part.startswith("(")))
    kind = error["type"]
    if kind == "missing":
        return f"argument {where} is required"
    if kind == "extra_forbidden":
        return f"{where}: unknown field"
    got = error.get("input")
    if kind in EXPECTED:
        return f"{_named(where)}: expected {EXPECTED[kind]}; got {_json_type(got)}"
    message = _INSTANCE.sub("", str(error["msg"])).removeprefix("Input ")
    return f"{_named(where)}: {message}; got {_shown(got)}"


def _named(where: str) -> str:
    """A top-level argument is said to be one; a nested field by its path alone."""
    return where if "." in where else f"argument {where}"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return next((words for kind, words in JSON_TYPES if isinstance(value, kind)),
                type(value).__name__)


def _shown(value: Any) -> str:
    if isinstance(value, dict | list):
        return _json_type(value)
    text = repr(value)
    return text if len(text) <= MAX_SHOWN_CHARS else text[:MAX_SHOWN_CHARS] + "…"


def _type_words(field: Mapping[str, Any]) -> str:
    """A JSON schema's type in words: `string`, `array of strings`, `object`."""
    options = [option for option in field.get("anyOf", [field])
               if option.get("type") != "null"]
    words = [_one_type(option) for option in options]
    return " or ".join(dict.fromkeys(word for word in words if word)) or "any"


def _one_type(option: Mapping[str, Any]) -> str:
    kind = option.get("type")
    if kind == "array":
        items = _one_type(option.get("items", {}))
        return f"array of {items}s" if items else "array"
    if "$ref" in option or kind == "object":
        return "object"
    return str(kind or "")
