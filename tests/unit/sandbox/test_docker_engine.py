"""The one place docker SDK exceptions become ours: the rules, exception by exception."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest
import requests
from docker.errors import APIError, ImageNotFound, NotFound

from selfcorrect_action.errors import SandboxError, SandboxUnavailable, UsageError
from selfcorrect_action.sandbox.docker_engine import connect, first_line, translated


def test_engine_not_answering_says_how_to_start_it() -> None:
    cause = requests.exceptions.ConnectionError("('Connection aborted.', FileNotFoundError(2))")
    with pytest.raises(SandboxUnavailable) as caught, translated("building img:1"):
        raise cause
    assert "building img:1" in caught.value.message
    assert caught.value.hint and ".ci/docker-up" in caught.value.hint
    assert caught.value.__cause__ is cause


def test_a_missing_image_says_to_build_it() -> None:
    """It used to be recognised by matching the text "No such image" in one module only."""
    with pytest.raises(SandboxUnavailable) as caught, translated("creating a container"):
        raise ImageNotFound("404 Client Error: No such image: selfcorrect-sandbox:0.1.0")
    assert caught.value.hint == "run `selfcorrect sandbox build`"


def test_an_unknown_runtime_says_how_to_register_it() -> None:
    with pytest.raises(SandboxUnavailable) as caught, translated("creating a container"):
        raise APIError("400 Client Error: unknown or invalid runtime name: runsc")
    assert caught.value.hint and "daemon.json" in caught.value.hint


@pytest.mark.parametrize(
    "cause",
    [
        APIError("500 Server Error: boom"),
        NotFound("no such container"),
        requests.exceptions.ReadTimeout(),
    ],
)
def test_other_engine_failures_become_sandbox_errors(cause: Exception) -> None:
    with pytest.raises(SandboxError) as caught, translated("importing x"):
        raise cause
    assert caught.value.message.startswith("Docker failed while importing x")
    assert caught.value.__cause__ is cause


def test_our_own_errors_pass_through() -> None:
    with pytest.raises(UsageError), translated("anything"):
        raise UsageError("mine")


def test_first_line_is_bounded() -> None:
    assert first_line(ValueError("a\nb")) == "a"
    assert first_line(ValueError("")) == "ValueError"
    assert len(first_line(ValueError("x" * 1000))) == 300


def test_an_engine_that_does_not_answer_leaves_no_descriptor_open(tmp_path: Path) -> None:
    """The SDK's half-made client and its socket were kept alive by the chained exception,
    to be found by the collector in some later test (where, on CPython 3.11, a collection
    inside ast.parse fails that parse)."""
    gc.collect()
    before = set(os.listdir("/proc/self/fd"))
    with pytest.raises(SandboxUnavailable) as caught:
        connect({"DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"})
    assert "no Docker engine answers" in caught.value.message
    assert set(os.listdir("/proc/self/fd")) <= before
