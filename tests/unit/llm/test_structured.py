"""Strict JSON answers: extraction from chatty replies, and the one repair-retry, run through
the real client against the fake OpenAI server."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pydantic import BaseModel, Field

from selfcorrect_action.llm import (
    ChatMessage,
    ChatRequest,
    LiteLLMClient,
    LLMStructuredOutputError,
    complete_json,
)
from selfcorrect_action.llm.structured import ReplyProblem, extract_json_object
from tests.fakes.openai_server import FakeOpenAIServer, Reply, Status

MakeClient = Callable[..., LiteLLMClient]


class Plan(BaseModel):
    title: str
    steps: list[str]


REQUEST = ChatRequest(
    purpose="plan",
    tier="cheap",
    messages=(ChatMessage(role="user", content="Plan it. Answer in JSON."),),
)


@pytest.mark.parametrize(
    "reply",
    [
        '{"a": 1}',
        '```json\n{"a": 1}\n```',
        'Sure! Here it is:\n```\n{"a": 1}\n```\nAnything else?',
        'The plan is {"a": 1} as requested.',
        'Set {braces} aside: {"a": 1}',
    ],
)
def test_the_first_json_object_is_found_among_chatter(reply: str) -> None:
    assert extract_json_object(reply) == {"a": 1}


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("I cannot help with that.", "contains no JSON object"),
        ('{"a": 1,, "b": 2}', "not valid JSON (Expecting property name"),
        ('{"a": [1, 2}', "not valid JSON"),
    ],
)
def test_unusable_replies_say_what_is_wrong(reply: str, problem: str) -> None:
    with pytest.raises(ReplyProblem, match=problem.replace("(", r"\(")):
        extract_json_object(reply)


def test_a_valid_first_answer_takes_one_call(
    server: FakeOpenAIServer, make_client: MakeClient
) -> None:
    server.script(Reply(content='```json\n{"title": "t", "steps": ["a"]}\n```'))

    answer = complete_json(make_client(), REQUEST, Plan)

    assert answer.value == Plan(title="t", steps=["a"])
    assert answer.rejected == () and len(server.requests) == 1
    # gpt-4o-mini enforces a JSON Schema (litellm says so): it is sent, without prose.
    sent = server.requests[0].body["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["name"] == "Plan"
    assert sent["json_schema"]["schema"]["required"] == ["title", "steps"]
    assert "title" not in sent["json_schema"]["schema"]


class Bounded(BaseModel):
    name: str = Field(min_length=1, max_length=4000)
    tags: list[str] = Field(max_length=5)


@pytest.mark.parametrize(("mode", "expected"), [
    ("json-object-schema", {"type": "json_object", "schema": {
        "properties": {"name": {"type": "string"}, "tags": {"items": {"type": "string"},
                                                             "type": "array"}},
        "required": ["name", "tags"], "type": "object"}}),
    ("json-object", {"type": "json_object"}),
    ("off", None),
])
def test_what_each_mode_sends(server: FakeOpenAIServer, make_client: MakeClient, mode: str,
                              expected: object) -> None:
    """llama.cpp takes the schema inside json_object, and its grammar compiler choked on
    long maxLength bounds: those are left out of what is sent (and still validated)."""
    server.script(Reply(content='{"name": "x", "tags": []}'))
    answer = complete_json(make_client(structured=mode), REQUEST, Bounded)
    assert answer.value.name == "x"
    assert server.requests[0].body.get("response_format") == expected


def test_a_server_that_refuses_the_schema_is_asked_again_without_it(
    server: FakeOpenAIServer, make_client: MakeClient, sleeps: list[float]
) -> None:
    server.script(Status(400, message="json_schema is not supported"),
                  Reply(content='{"title": "t", "steps": []}'),
                  Reply(content='{"title": "u", "steps": []}'))
    client = make_client(structured="json-schema")
    assert complete_json(client, REQUEST, Plan).value.title == "t"
    assert complete_json(client, REQUEST, Plan).value.title == "u"
    formats = [r.body.get("response_format", {}).get("type") for r in server.requests]
    assert formats == ["json_schema", "json_object", "json_object"]  # remembered
    assert sleeps == []  # not an outage: no backoff


def test_repair_retry_quotes_the_error_and_succeeds(
    server: FakeOpenAIServer, make_client: MakeClient
) -> None:
    bad = '{"title": "t"}'
    server.script(Reply(content=bad), Reply(content='{"title": "t", "steps": ["a", "b"]}'))

    answer = complete_json(make_client(), REQUEST, Plan)

    assert answer.value.steps == ["a", "b"]
    (refused,) = answer.rejected
    assert refused.text == bad and "steps: Field required" in refused.reason
    follow_up = server.requests[1].body["messages"]
    # Its own system prompt (correcting JSON), then the conversation and the problems.
    assert follow_up[0]["role"] == "system" and "correct a JSON answer" in follow_up[0][
        "content"]
    assert follow_up[1:3] == [
        {"role": "user", "content": "Plan it. Answer in JSON."},
        {"role": "assistant", "content": bad},
    ]
    assert follow_up[3]["role"] == "user"
    assert "steps: Field required" in follow_up[3]["content"]
    assert "only the corrected JSON object" in follow_up[3]["content"]
    # The schema in a compact form: one line, no titles or descriptions.
    assert '"required":["title","steps"]' in follow_up[3]["content"].replace(" ", "")
    assert '"title":"Plan"' not in follow_up[3]["content"]


def test_second_garbage_fails_clearly_with_both_replies(
    server: FakeOpenAIServer, make_client: MakeClient
) -> None:
    server.script(Reply(content="Here you go: {oops"), Reply(content='{"title": 3}'))

    with pytest.raises(LLMStructuredOutputError) as raised:
        complete_json(make_client(), REQUEST, Plan)

    message = str(raised.value)
    assert "'plan' answer was not valid Plan JSON, even after one repair-retry" in message
    assert "title: Input should be a valid string" in message
    assert [r.text for r in raised.value.rejected] == ["Here you go: {oops", '{"title": 3}']
    assert "not valid JSON" in raised.value.rejected[0].reason
    assert len(server.requests) == 2
