from __future__ import annotations

import pytest
import requests
from docker.errors import APIError, NotFound

from selfcorrect_action.errors import SandboxError, SandboxUnavailable, UsageError
from selfcorrect_action.sandbox.build_support import engine_errors, first_line


def test_engine_not_answering_says_how_to_start_it() -> None:
    cause = requests.exceptions.ConnectionError("('Connection aborted.', FileNotFoundError(2))")
    with pytest.raises(SandboxUnavailable) as caught, engine_errors("building img:1"):
        raise cause
    assert "building img:1" in caught.value.message
    assert caught.value.hint and ".ci/docker-up" in caught.value.hint
    assert caught.value.__cause__ is cause


@pytest.mark.parametrize(
    "cause",
    [
        APIError("500 Server Error: boom"),
        NotFound("no such image"),
        requests.exceptions.ReadTimeout(),
    ],
)
def test_other_engine_failures_become_sandbox_errors(cause: Exception) -> None:
    with pytest.raises(SandboxError) as caught, engine_errors("importing x"):
        raise cause
    assert caught.value.message.startswith("Docker failed while importing x")
    assert caught.value.__cause__ is cause


def test_our_own_errors_pass_through() -> None:
    with pytest.raises(UsageError), engine_errors("anything"):
        raise UsageError("mine")


def test_first_line_is_bounded() -> None:
    assert first_line(ValueError("a\nb")) == "a"
    assert first_line(ValueError("")) == "ValueError"
    assert len(first_line(ValueError("x" * 1000))) == 300
