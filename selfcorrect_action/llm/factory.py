"""``client_for``: the one call the CLI and the action make to get an ``LLM``."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from selfcorrect_action.choices import StructuredOutput
from selfcorrect_action.llm.base import LLM
from selfcorrect_action.llm.client import DEFAULT_TIMEOUT_S, LiteLLMClient
from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.llm.recording import Recorder, RecordingLLM
from selfcorrect_action.llm.replay import ReplaySession
from selfcorrect_action.llm.retry import RetryPolicy
from selfcorrect_action.waiting import Notify


def client_for(
    models: ModelTiers | None = None,
    *,
    replay: Path | None = None,
    record: Path | None = None,
    api_base: str | None = None,
    api_key: str | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    retry: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
    secrets: Sequence[str] = (),
    on_wait: Notify | None = None,
    structured: StructuredOutput = "auto",
    task_sha256: str | None = None,
    fit: Callable[[], Mapping[str, str]] | None = None,
    replay_from: int = 0,
) -> LLM:
    """A client for the real models, or playing back ``replay``; recording to ``record``.

    With ``replay`` the calls still go through litellm (to the ``replay/`` provider) and the
    file is read now, so a missing or malformed recording fails before the run starts; it
    plays from exchange ``replay_from`` (a resumed run's calls so far took the ones before).
    """
    session = ReplaySession.open(replay, start=replay_from) if replay is not None else None
    client: LLM = LiteLLMClient(
        models,
        api_base=api_base,
        api_key=api_key,
        timeout_s=timeout_s,
        retry=retry,
        sleep=sleep,
        replay=session,
        on_wait=on_wait,
        structured=structured,
    )
    if record is not None:
        client = RecordingLLM(client, Recorder(record, secrets=secrets,
                                               task_sha256=task_sha256, fit=fit))
    return client
