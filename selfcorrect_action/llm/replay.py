"""Replay sessions: a recording played back in order, one exchange per call.

The litellm side (the ``replay`` custom provider) lives in replay_provider.py; this module is
plain Python so the client can hold a session without importing litellm. A session is found
by the id the client puts in ``litellm_metadata``, so several replays can run in one process
(tests do) under the single ``replay`` provider litellm allows.
"""

from __future__ import annotations

import threading
import uuid
import weakref
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from selfcorrect_action.llm.errors import LLMReplayError
from selfcorrect_action.llm.models import ChatRequest, Purpose, RequestMode
from selfcorrect_action.llm.recording import RecordedExchange, read_recording

REPLAY_METADATA_KEY = "selfcorrect_replay"
REPLAY_HIDDEN_KEY = "selfcorrect_replay"
_RERECORD = "the run no longer makes the recorded calls; re-record it with --record FILE"

_sessions: weakref.WeakValueDictionary[str, ReplaySession] = weakref.WeakValueDictionary()


class ReplayAsk(BaseModel):
    """What the run asked for, as passed through litellm to the provider."""

    model_config = ConfigDict(frozen=True)

    session: str
    purpose: Purpose
    target: str
    mode: RequestMode = "chat"


class ReplaySession:
    def __init__(self, path: Path, exchanges: tuple[RecordedExchange, ...], *,
                 torn_line: int | None = None) -> None:
        self.path = path
        self.torn_line = torn_line
        self.id = uuid.uuid4().hex
        self._exchanges = exchanges
        self._cursor = 0
        self._lock = threading.Lock()

    @classmethod
    def open(cls, path: Path, *, start: int = 0) -> ReplaySession:
        """Read ``path`` and make the session findable by the replay provider; it plays
        from exchange index ``start`` (a resumed run made the calls before it)."""
        recording = read_recording(path)
        if not 0 <= start <= len(recording.exchanges):
            raise LLMReplayError(
                f"{path}: the run goes on after {start} calls, but the recording has only "
                f"{len(recording.exchanges)} exchanges", hint=_RERECORD)
        session = cls(path, recording.exchanges, torn_line=recording.torn_line)
        session._cursor = start
        _sessions[session.id] = session
        return session

    @property
    def remaining(self) -> int:
        return len(self._exchanges) - self._cursor

    def tag_for(self, request: ChatRequest) -> dict[str, Any]:
        """The ``litellm_metadata`` that lets the provider find this session and check the call."""
        ask = ReplayAsk(session=self.id, purpose=request.purpose, target=request.target,
                        mode=request.mode)
        return {REPLAY_METADATA_KEY: ask.model_dump()}

    def take(self, ask: ReplayAsk) -> RecordedExchange:
        """The next recorded exchange, if it was made for the same purpose and tier."""
        with self._lock:
            index = self._cursor
            if index >= len(self._exchanges):
                torn = (f"; its line {self.torn_line} was cut off mid-write (the recording "
                        "run crashed) and was left out" if self.torn_line else "")
                raise LLMReplayError(
                    f"{self.path}: the run asked for exchange index {index} "
                    f"({_describe(ask.purpose, ask.target)}) but the recording has only "
                    f"{len(self._exchanges)}{torn}",
                    hint=_RERECORD,
                )
            exchange = self._exchanges[index]
            _check_matches(self.path, exchange, ask)
            self._cursor += 1
            return exchange


def session_for(metadata: dict[str, Any] | None) -> tuple[ReplaySession, ReplayAsk]:
    raw = (metadata or {}).get(REPLAY_METADATA_KEY)
    if raw is None:
        raise LLMReplayError(
            "a replay/ model was called without a replay session",
            hint="build the client with client_for(replay=PATH) instead of naming replay/ models",
        )
    ask = ReplayAsk.model_validate(raw)
    session = _sessions.get(ask.session)
    if session is None:
        raise LLMReplayError("the replay session of this call is closed (its client is gone)")
    return session, ask


def _check_matches(path: Path, exchange: RecordedExchange, ask: ReplayAsk) -> None:
    recorded = exchange.request
    if (recorded.purpose, recorded.target) == (ask.purpose, ask.target):
        if recorded.mode != ask.mode:
            raise LLMReplayError(
                f"{path}: exchange index {exchange.index}: recorded a {recorded.mode} "
                f"request, but the run asked for a {ask.mode} one",
                hint=f"replay with --generation {recorded.mode} (and the --profile it was "
                "recorded with)")
        return
    raise LLMReplayError(
        f"{path}: exchange index {exchange.index}: recorded a "
        f"{_describe(recorded.purpose, recorded.target)}, but the run asked for a "
        f"{_describe(ask.purpose, ask.target)}",
        hint=_RERECORD,
    )


def _describe(purpose: str, target: str) -> str:
    where = f"tier {target}" if not target.startswith("model ") else target
    return f"{purpose!r} call on {where}"
