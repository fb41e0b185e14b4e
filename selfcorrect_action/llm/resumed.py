"""A resumed run's model calls (issue 37): the earlier run's recording, played back while
each new request equals the recorded one in full, then live from the first that differs.

The recording file goes on being the run's: the exchanges its state counts are kept, the
ones played back stay where they are, and the first live call after a difference cuts the
unplayed rest off before it is appended (they answered requests this run no longer makes).
A request is compared as the recording holds it (redacted, defaults left out), so a secret
in a prompt does not make the same request look different.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path

from selfcorrect_action.errors import UsageError
from selfcorrect_action.fileio import FileProblem, read_bounded
from selfcorrect_action.llm.base import LLM
from selfcorrect_action.llm.errors import LLMReplayError
from selfcorrect_action.llm.models import ChatRequest, ChatResponse
from selfcorrect_action.llm.recording import (
    MAX_RECORDING_BYTES,
    LineDigest,
    RecordedExchange,
    RecordingMark,
    append_lines,
    exchange_line,
    read_recording,
    request_as_recorded,
)


class RecordingRefused(UsageError):
    """A checkpoint's recording that was cut short or edited after the checkpoint saw it."""


class ResumedRecording:
    """The earlier run's recording at `path`: its first `kept` exchanges are this run's
    calls so far; the ones after are the tail, offered to the next requests in order."""

    def __init__(self, path: Path, *, header: str, lines: Sequence[str],
                 exchanges: Sequence[RecordedExchange], kept: int,
                 secrets: Sequence[str] = ()) -> None:
        self.path = path
        self.secrets = list(secrets)
        # The model this run asks for a request (set by the run): a recorded answer is
        # played back only if the same model gave it.
        self.model_for: Callable[[ChatRequest], str] | None = None
        self._header = header
        self._lines = list(lines)  # the exchange lines, as in the file
        self._tail: deque[RecordedExchange] = deque(exchanges[kept:])
        self._next_index = kept
        self._in_file = len(self._lines)  # exchange lines in the file now
        self.played_back: list[ChatResponse] = []  # those answers, as recorded
        self.recorded_tail = len(self._tail)
        self._lock = threading.Lock()

    def take(self, request: ChatRequest) -> ChatResponse | None:
        """The next recorded answer if its request equals `request` in full; else None, and
        the run is live from here on (the tail is dropped)."""
        with self._lock:
            if not self._tail:
                return None
            recorded = self._tail[0]
            same_model = self.model_for is None or \
                self.model_for(request) == recorded.response.model
            if not same_model or recorded.request.model_dump(
                    mode="json", exclude_defaults=True) != request_as_recorded(
                        request, secrets=self.secrets):
                self._tail.clear()
                return None
            self._tail.popleft()
            self._next_index += 1
            answer = recorded.response
            self.played_back.append(answer)
            return answer.model_copy(update={"resumed": True})

    def record(self, request: ChatRequest, response: ChatResponse) -> None:
        """A live exchange: appended after the calls so far (the unplayed tail cut off)."""
        with self._lock:
            line = exchange_line(self._next_index, request, response, secrets=self.secrets)
            if self._in_file > self._next_index:
                self._lines = self._lines[: self._next_index]
                append_lines(self.path, [self._header, *self._lines, line], fresh=True)
            else:
                append_lines(self.path, [line], fresh=False)
            self._lines.append(line)
            self._next_index += 1
            self._in_file = self._next_index

    def mark(self) -> RecordingMark:
        with self._lock:
            digest = LineDigest()
            digest.add([self._header, *self._lines[: self._next_index]])
            return RecordingMark(exchanges=self._next_index, sha256=digest.hexdigest())


class ResumingLLM:
    """An ``LLM`` that answers from a ``ResumedRecording`` while it can, else asks `inner`
    and hands the exchange to the recording."""

    def __init__(self, inner: LLM, recording: ResumedRecording) -> None:
        self.inner = inner
        self.recording = recording

    def complete(self, request: ChatRequest) -> ChatResponse:
        answer = self.recording.take(request)
        if answer is not None:
            return answer
        response = self.inner.complete(request)
        self.recording.record(request, response)
        return response


def continued(path: Path, mark: RecordingMark | None, *, kept: int,
              secrets: Sequence[str] = ()) -> ResumedRecording:
    """The recording at `path` made ready to go on: checked against `mark` (what the
    checkpoint saw of it), with its first `kept` exchanges kept as this run's calls."""
    header, lines = _lines(path)
    recording = read_recording(path)
    if mark is not None:
        if len(recording.exchanges) < mark.exchanges:
            raise RecordingRefused(
                f"{path}: the recording holds {len(recording.exchanges)} exchanges, but it had "
                f"{mark.exchanges} when the run's checkpoint was saved: it was cut short",
                hint="resume with the recording the run wrote, or start a fresh run")
        digest = LineDigest()
        digest.add([header, *lines[: mark.exchanges]])
        if digest.hexdigest() != mark.sha256:
            raise RecordingRefused(
                f"{path}: the recording's first {mark.exchanges} exchanges are not the ones "
                "the run's checkpoint saw: it was edited since",
                hint="resume with the recording the run wrote, or start a fresh run")
    for position, exchange in enumerate(recording.exchanges):
        if exchange.index != position:
            raise RecordingRefused(
                f"{path}: exchange {position} is numbered {exchange.index}: the recording "
                "was edited", hint="start a fresh run")
    kept = max(0, min(kept, len(recording.exchanges)))
    return ResumedRecording(path, header=header, lines=lines[: len(recording.exchanges)],
                            exchanges=recording.exchanges, kept=kept, secrets=secrets)


def _lines(path: Path) -> tuple[str, list[str]]:
    """The header line and the whole exchange lines of a recording (a torn last one left
    out), as they are in the file."""
    try:
        text = read_bounded(path, MAX_RECORDING_BYTES).decode("utf-8")
    except (FileProblem, UnicodeDecodeError) as exc:
        raise LLMReplayError(f"{path}: the run's recording cannot be read ({exc})",
                             hint="start a fresh run") from exc
    complete = text if text.endswith("\n") else text[: text.rfind("\n") + 1]
    lines = [line for line in complete.split("\n") if line.strip()]
    if not lines:
        raise RecordingRefused(f"{path}: the run's recording is empty", hint="start a fresh run")
    return lines[0], lines[1:]
