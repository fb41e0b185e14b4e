"""Fixtures for the GitHub side: the stand-in server, and forges talking to it that never
sleep for real."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from selfcorrect_action.github.pygithub_forge import PyGithubForge
from tests.fakes.github_server import (
    DEFAULT_REPO,
    WRITE_TOKEN,
    FakeGitHub,
    fake_github,  # noqa: F401  # the fixture, for every test in this folder
)

MakeForge = Callable[..., PyGithubForge]


@pytest.fixture
def waits() -> list[float]:
    """Every wait the forge asked for, in seconds; nothing sleeps for real."""
    return []


@pytest.fixture
def make_forge(fake_github: FakeGitHub,  # noqa: F811  # the fixture imported above
               waits: list[float]) -> Iterator[MakeForge]:
    made: list[PyGithubForge] = []

    def make(repository: str = DEFAULT_REPO, token: str = WRITE_TOKEN,
             **options: Any) -> PyGithubForge:
        # jitter 1.0: each backoff is its full step (1, 2, 4, 8 s), so waits are exact.
        settings: dict[str, Any] = {"api_url": fake_github.api_url, "sleep": waits.append,
                                    "jitter": lambda: 1.0, "timeout_s": 5, **options}
        forge = PyGithubForge(repository, token=token, **settings)
        made.append(forge)
        return forge

    yield make
    for forge in made:
        forge.close()


@pytest.fixture
def forge(make_forge: MakeForge) -> PyGithubForge:
    return make_forge()
