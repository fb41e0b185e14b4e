"""What a request looks like on the wire, per provider: the messages (with image parts for
models that see images) and the `response_format` for structured answers.

Structured answers (issue 8): where litellm says a model enforces a JSON Schema, or where
the user opted in for an OpenAI-compatible server, the schema is sent so the server's
decoder can only produce schema-shaped JSON; everywhere else plain JSON mode. The schema
sent is the answer model's without length bounds and prose: llama.cpp compiles a schema
into a grammar, and long maxLength bounds made it fail ("failed to parse grammar") and
kill the server. Every bound is still checked when the answer is validated.
"""

from __future__ import annotations

from typing import Any

from selfcorrect_action.choices import StructuredOutput
from selfcorrect_action.llm.models import ChatMessage, ChatRequest

# Bounds a grammar-based decoder cannot compile at a useful cost, and prose it does not need.
_DROPPED_KEYS = frozenset({"maxLength", "minLength", "maxItems", "minItems", "pattern",
                           "title", "description", "examples", "default"})


def sendable_schema(schema: dict[str, Any]) -> dict[str, Any]:
    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {key: strip(value) for key, value in node.items()
                    if key not in _DROPPED_KEYS}
        if isinstance(node, list):
            return [strip(item) for item in node]
        return node

    stripped: dict[str, Any] = strip(schema)
    return stripped


def response_format(request: ChatRequest, mode: StructuredOutput, *, enforces_schema: bool
                    ) -> dict[str, Any] | None:
    """The response_format for `request` under `mode` ("auto" sends the schema where the
    model enforces one, per litellm), or None for none at all."""
    if request.response_format != "json" or mode == "off":
        return None
    schema = sendable_schema(request.json_schema) if request.json_schema else None
    if schema is None or mode == "json-object":
        return {"type": "json_object"}
    if mode == "json-object-schema":
        # llama.cpp's server takes the schema inside json_object (and refuses json_schema).
        return {"type": "json_object", "schema": schema}
    if mode == "json-schema" or enforces_schema:
        return {"type": "json_schema",
                "json_schema": {"name": request.schema_name or "answer", "schema": schema,
                                "strict": False}}
    return {"type": "json_object"}


def wire_messages(messages: tuple[ChatMessage, ...]) -> list[dict[str, Any]]:
    """OpenAI-style messages; a message with images becomes a list of content parts."""
    return [_wire(message) for message in messages]


def _wire(message: ChatMessage) -> dict[str, Any]:
    if not message.images:
        return {"role": message.role, "content": message.content}
    parts: list[dict[str, Any]] = [{"type": "text", "text": message.content}]
    parts += [{"type": "image_url", "image_url": {"url": image.data_url}}
              for image in message.images]
    return {"role": message.role, "content": parts}
