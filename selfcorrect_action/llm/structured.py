"""Structured answers: a reply parsed as JSON and validated against a pydantic model, with
exactly one repair-retry.

Models wrap JSON in ``` fences or a sentence of chatter even in JSON mode, so the first JSON
object in the reply is taken. When that fails (no JSON, bad JSON, wrong shape), the model sees
its own reply and the exact problems once (templates/prompts/json_repair.j2); a second failure
is an ``LLMStructuredOutputError``. One retry, because a model that misreads a schema twice
rarely gets it on the third try, and each try costs a full prompt.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from selfcorrect_action.llm.base import LLM
from selfcorrect_action.llm.errors import LLMStructuredOutputError
from selfcorrect_action.llm.models import ChatMessage, ChatRequest, ChatResponse
from selfcorrect_action.records import evolve
from selfcorrect_action.templating import render

M = TypeVar("M", bound=BaseModel)

_FENCED = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n(.*?)```", re.DOTALL)
_MAX_ERRORS_SHOWN = 20


@dataclass(frozen=True)
class JSONAnswer(Generic[M]):
    """The validated value and every reply it took (one or two), for usage and cost."""

    value: M
    responses: tuple[ChatResponse, ...]


class ReplyProblem(Exception):
    def __init__(self, problem: str, errors: tuple[str, ...] = ()) -> None:
        super().__init__(problem)
        self.problem = problem
        self.errors = errors


def complete_json(llm: LLM, request: ChatRequest, schema: type[M]) -> JSONAnswer[M]:
    """Ask for JSON matching ``schema``; one repair-retry, then ``LLMStructuredOutputError``.

    The prompt must mention JSON: OpenAI's JSON mode refuses requests that do not.
    """
    request = evolve(request, {"response_format": "json"})
    first = llm.complete(request)
    try:
        return JSONAnswer(parse_reply(first.text, schema), (first,))
    except ReplyProblem as problem:
        retry = repair_request(request, first.text, problem, schema)
    second = llm.complete(retry)
    try:
        return JSONAnswer(parse_reply(second.text, schema), (first, second))
    except ReplyProblem as problem:
        raise _final_error(request, schema, problem, (first, second)) from problem


def parse_reply(text: str, schema: type[M]) -> M:
    """The first JSON object in ``text``, validated; ``ReplyProblem`` says what is wrong."""
    data = extract_json_object(text)
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        raise ReplyProblem(
            f"the JSON does not match the {schema.__name__} schema", _describe(exc)
        ) from exc


def extract_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in a fenced block, else in the whole text; skips prose around it."""
    for candidate in [*_FENCED.findall(text), text]:
        if (found := _first_object(candidate)) is not None:
            return found
    if "{" not in text:
        raise ReplyProblem("the reply contains no JSON object")
    raise ReplyProblem(f"the reply is not valid JSON ({_decode_error(text)})")


def repair_request(
    request: ChatRequest, reply: str, problem: ReplyProblem, schema: type[BaseModel]
) -> ChatRequest:
    """The original conversation, the bad reply, and a message quoting what was wrong."""
    follow_up = render(
        "prompts/json_repair.j2",
        problem=problem.problem,
        errors=problem.errors,
        schema=compact_schema(schema),
    )
    # The conversation so far, under a system prompt for this job: correcting JSON.
    conversation = [m for m in request.messages if m.role != "system"]
    messages = (
        ChatMessage(role="system", content=render("prompts/system/json_repair.j2")),
        *conversation,
        ChatMessage(role="assistant", content=reply),
        ChatMessage(role="user", content=follow_up),
    )
    return evolve(request, {"messages": messages})


_NOISE_KEYS = frozenset({"title", "description", "examples"})


def compact_schema(schema: type[BaseModel]) -> str:
    """The schema without titles and descriptions, on one line: the indented whole took about
    2,700 tokens and overflowed small models' context windows (issue 9). Every constraint
    stays."""
    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k not in _NOISE_KEYS}
        if isinstance(node, list):
            return [strip(item) for item in node]
        return node

    return json.dumps(strip(schema.model_json_schema()), separators=(",", ":"))


def _first_object(text: str) -> dict[str, Any] | None:
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


def _decode_error(text: str) -> str:
    start, end = text.find("{"), text.rfind("}")
    snippet = text[start : end + 1] if end > start else text[start:]
    try:
        json.loads(snippet)
    except json.JSONDecodeError as exc:
        return f"{exc.msg} at line {exc.lineno} column {exc.colno} of the object"
    return "no complete object"


def _describe(exc: ValidationError) -> tuple[str, ...]:
    errors = exc.errors(include_url=False)
    lines = [f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in errors]
    if len(lines) > _MAX_ERRORS_SHOWN:
        lines = [*lines[:_MAX_ERRORS_SHOWN], f"... and {len(lines) - _MAX_ERRORS_SHOWN} more"]
    return tuple(lines)


def _final_error(
    request: ChatRequest,
    schema: type[BaseModel],
    problem: ReplyProblem,
    responses: tuple[ChatResponse, ...],
) -> LLMStructuredOutputError:
    details = "; ".join(problem.errors[:3])
    return LLMStructuredOutputError(
        f"the {request.purpose!r} answer was not valid {schema.__name__} JSON, even after one "
        f"repair-retry: {problem.problem}" + (f" ({details})" if details else ""),
        hint="try a stronger model tier for this step, or record the run (--record FILE) to "
        "read what the model replied",
        responses=responses,
    )
