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
from collections.abc import Callable
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
class Rejection:
    """A reply that was refused, and why: kept for the reports (issue 9: refused answers
    used to vanish, visible only with --record)."""

    text: str
    reason: str
    finish_reason: str | None = None


@dataclass(frozen=True)
class JSONAnswer(Generic[M]):
    """The validated value, and the reply refused before it, if any. (Usage and cost of
    both are counted by whoever the llm is, e.g. the loop's MeteredLLM.)"""

    value: M
    rejected: tuple[Rejection, ...] = ()


class ReplyProblem(Exception):
    def __init__(self, problem: str, errors: tuple[str, ...] = ()) -> None:
        super().__init__(problem)
        self.problem = problem
        self.errors = errors


Check = Callable[[M], str | None]


def complete_json(llm: LLM, request: ChatRequest, schema: type[M], *,
                  check: Check[M] | None = None,
                  on_retry: Callable[[str], None] | None = None) -> JSONAnswer[M]:
    """Ask for JSON matching ``schema``; one repair-retry, then ``LLMStructuredOutputError``.

    ``check`` may refuse a valid answer for what it says (its problem, or None): the same
    repair-retry follows. ``on_retry`` hears why a retry is made, for progress lines. The
    prompt must mention JSON: OpenAI's JSON mode refuses requests that do not.
    """
    request = evolve(request, {"response_format": "json",
                               "json_schema": schema.model_json_schema(),
                               "schema_name": schema.__name__})
    first = llm.complete(request)
    try:
        return JSONAnswer(_accepted(first, schema, check))
    except ReplyProblem as problem:
        retry = repair_request(request, first.text, problem, schema)
        rejected = (_rejection(first, problem),)
        if on_retry is not None:
            on_retry(f"the {request.purpose} answer was not usable ({rejected[0].reason}); "
                     "asking once more")
    second = llm.complete(retry)
    try:
        return JSONAnswer(_accepted(second, schema, check), rejected)
    except ReplyProblem as problem:
        raise _final_error(request, schema, problem,
                           (*rejected, _rejection(second, problem))) from problem


def parse_response(response: ChatResponse, schema: type[M]) -> M:
    """parse_reply, saying so when the reply was cut off by the token limit: "not valid JSON
    (Unterminated string...)" told nobody that the model simply ran out of room."""
    try:
        return parse_reply(response.text, schema)
    except ReplyProblem as problem:
        if response.finish_reason != "length":
            raise
        raise ReplyProblem(
            f"the reply was cut off at the token limit ({response.completion_tokens:,} "
            f"tokens) before the JSON was complete; {problem.problem}", problem.errors,
        ) from problem


def _accepted(response: ChatResponse, schema: type[M], check: Check[M] | None) -> M:
    value = parse_response(response, schema)
    problem = check(value) if check is not None else None
    if problem:
        raise ReplyProblem(problem)
    return value


def _rejection(response: ChatResponse, problem: ReplyProblem) -> Rejection:
    details = "; ".join(problem.errors[:3])
    return Rejection(text=response.text, finish_reason=response.finish_reason,
                     reason=problem.problem + (f" ({details})" if details else ""))


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
    rejected: tuple[Rejection, ...],
) -> LLMStructuredOutputError:
    details = "; ".join(problem.errors[:3])
    return LLMStructuredOutputError(
        f"the {request.purpose!r} answer was not valid {schema.__name__} JSON, even after one "
        f"repair-retry: {problem.problem}" + (f" ({details})" if details else ""),
        hint="try a stronger model tier for this step, or record the run (--record FILE) to "
        "read what the model replied",
        rejected=rejected,
    )
