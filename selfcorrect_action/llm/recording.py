"""``--record FILE``: every LLM exchange of a run, one JSON line each, written as it happens.

Format (JSON Lines, UTF-8)::

    {"kind": "selfcorrect.llm-recording", "format_version": 1, "created_at": "...", ...}
    {"index": 0, "request": {ChatRequest}, "response": {ChatResponse without "replayed"}}
    {"index": 1, ...}

Each line is flushed and fsync'ed before the call returns, so a run that crashes keeps every
exchange it finished; a last line cut off by the crash is ignored when the file is read back.
A change to ChatRequest or ChatResponse that old files cannot satisfy must bump FORMAT_VERSION.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from selfcorrect_action import __version__
from selfcorrect_action.fileio import FileProblem, FileTooLarge, read_bounded
from selfcorrect_action.llm.base import LLM
from selfcorrect_action.llm.errors import LLMReplayError
from selfcorrect_action.llm.models import ChatRequest, ChatResponse
from selfcorrect_action.redact import redact_data

FORMAT_VERSION = 1
# Far above any real run's recording (a few MiB): past it, the file is not a recording.
MAX_RECORDING_BYTES = 256 * 1024 * 1024
M = TypeVar("M", bound=BaseModel)


class RecordingHeader(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: Literal["selfcorrect.llm-recording"] = "selfcorrect.llm-recording"
    format_version: int = FORMAT_VERSION
    created_at: datetime
    selfcorrect_version: str = __version__
    # sha256 of the task's prompt: a replay is checked against it (a completion or a small
    # model's prompt need not quote the task). Absent in recordings made before it.
    task_sha256: str | None = None
    # How the run asked for code (runs/model_fit.py): a replay left at `auto` asks the same
    # way, so it makes the same decisions (a repeat at temperature 0 is no cycle yet).
    profile: Literal["standard", "small"] | None = None
    generation: Literal["chat", "completion"] | None = None
    # How many fresh answers an unrunnable one got (loop/generate.py): a replay takes as
    # many. Absent in recordings made before redraws: none.
    redraws: int | None = Field(default=None, ge=0)
    # The profile was left to the model's answers (issue 38): a replay switches where the
    # recording did. Absent before: never.
    profile_open: bool | None = None


def task_digest(prompt: str) -> str:
    return hashlib.sha256(prompt.strip().encode()).hexdigest()


class RecordedExchange(BaseModel):
    model_config = ConfigDict(frozen=True)

    index: int
    request: ChatRequest
    response: ChatResponse


class Recording(BaseModel):
    model_config = ConfigDict(frozen=True)

    header: RecordingHeader
    exchanges: tuple[RecordedExchange, ...]
    # The line number of a last line cut off mid-write (the recording run crashed): it is
    # left out, and said so when the replay runs short.
    torn_line: int | None = None


class Recorder:
    """Appends exchanges to ``path``; the file is created (replaced) on the first one.

    Recordings get committed (examples/replays), so every string in them is redacted like
    a report: the run's secrets and anything token-shaped, in the prompts and the answers.
    """

    def __init__(self, path: Path, *, secrets: Sequence[str] = (),
                 task_sha256: str | None = None,
                 fit: Callable[[], Mapping[str, str]] | None = None) -> None:
        self.path = path
        self.secrets = list(secrets)
        self.task_sha256 = task_sha256
        # Asked when the header is written (at the first exchange, once the run decided).
        self._fit = fit
        self._next_index = 0
        self._lock = threading.Lock()
        self._digest = LineDigest()

    def record(self, request: ChatRequest, response: ChatResponse) -> None:
        with self._lock:
            lines = [] if self._next_index else [_header_line(
                self.task_sha256, dict(self._fit()) if self._fit else {})]
            lines.append(exchange_line(self._next_index, request, response,
                                       secrets=self.secrets))
            append_lines(self.path, lines, fresh=self._next_index == 0)
            self._digest.add(lines)
            self._next_index += 1

    def mark(self) -> RecordingMark:
        """How many exchanges are in the file now, and the digest of its lines so far."""
        with self._lock:
            return RecordingMark(exchanges=self._next_index, sha256=self._digest.hexdigest())


class RecordingMark(BaseModel):
    """A recording as far as a checkpoint saw it: its first `exchanges` exchange lines (and
    its header) hash to `sha256`, so a recording cut short or edited since is found."""

    model_config = ConfigDict(frozen=True)

    exchanges: int = Field(ge=0)
    sha256: str


class LineDigest:
    """sha256 over a recording's lines, each with its newline, as they are in the file."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()

    def add(self, lines: Sequence[str]) -> None:
        for line in lines:
            self._hash.update(line.encode("utf-8") + b"\n")

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


def exchange_line(index: int, request: ChatRequest, response: ChatResponse, *,
                  secrets: Sequence[str]) -> str:
    """One exchange as a recording's line, redacted like a report."""
    exchange = RecordedExchange(index=index, request=request, response=response)
    # Defaults left out: a message without images, a request without a schema, read back
    # the same, and recordings stay the size they were.
    data = exchange.model_dump(mode="json", exclude={"response": {"replayed", "resumed"}},
                               exclude_defaults=True)
    return json.dumps(redact_data(data, secrets=secrets), ensure_ascii=False,
                      separators=(",", ":"))


def request_as_recorded(request: ChatRequest, *, secrets: Sequence[str]) -> dict[str, object]:
    """`request` as a recording holds it: redacted, defaults left out. A recorded request
    read back and dumped the same way compares equal to it when the two are the same."""
    data = request.model_dump(mode="json", exclude_defaults=True)
    redacted: dict[str, object] = redact_data(data, secrets=secrets)
    return redacted


def append_lines(path: Path, lines: Sequence[str], *, fresh: bool) -> None:
    """Write (fresh) or append `lines`, flushed and fsync'ed before returning."""
    with path.open("w" if fresh else "a", encoding="utf-8") as stream:
        stream.write("".join(line + "\n" for line in lines))
        stream.flush()
        os.fsync(stream.fileno())


class RecordingLLM:
    """An ``LLM`` that hands each successful exchange of ``inner`` to a ``Recorder``."""

    def __init__(self, inner: LLM, recorder: Recorder) -> None:
        self.inner = inner
        self.recorder = recorder

    def complete(self, request: ChatRequest) -> ChatResponse:
        response = self.inner.complete(request)
        self.recorder.record(request, response)
        return response


def _header_line(task_sha256: str | None, fit: Mapping[str, str]) -> str:
    header = RecordingHeader.model_validate({"created_at": datetime.now(UTC),
                                             "task_sha256": task_sha256, **fit})
    return header.model_dump_json(exclude_none=True)


def read_recording(path: Path) -> Recording:
    """Parse a recording, with ``file:line`` errors; a torn last line (a crash) is dropped."""
    try:
        raw = read_bounded(path, MAX_RECORDING_BYTES)
    except FileTooLarge as exc:
        raise LLMReplayError(
            f"the replay file {path} {exc.problem}",
            hint="a run's recording is a few MiB at most: check that this is a replay file",
        ) from exc
    except FileProblem as exc:
        raise LLMReplayError(f"the replay file {path}: {exc.problem}",
                             hint=f"pass a .jsonl file written by --record; {exc.hint}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise LLMReplayError(
            f"{path}:{line}: the replay file is not UTF-8 text (byte {exc.start})",
            hint="replays are JSON Lines written by --record; re-record it",
        ) from exc
    lines = text.split("\n")
    torn = None
    if not text.endswith("\n"):
        torn = len(lines) if lines[-1].strip() else None
        lines = lines[:-1]  # written without its newline: the run died mid-write
    numbered = [(number, line) for number, line in enumerate(lines, 1) if line.strip()]
    if not numbered:
        raise LLMReplayError(f"{path}: the replay file holds no exchanges")
    header = _parse_header(path, *numbered[0])
    exchanges = tuple(_parse_line(path, number, line) for number, line in numbered[1:])
    return Recording(header=header, exchanges=exchanges, torn_line=torn)


def _parse_header(path: Path, number: int, line: str) -> RecordingHeader:
    header = _parse(RecordingHeader, path, number, line)
    if header.format_version != FORMAT_VERSION:
        raise LLMReplayError(
            f"{path}:{number}: recording format_version {header.format_version} is not "
            f"supported (this selfcorrect reads {FORMAT_VERSION})",
            hint="re-record the run with this version of selfcorrect (--record FILE)",
        )
    return header


def _parse_line(path: Path, number: int, line: str) -> RecordedExchange:
    return _parse(RecordedExchange, path, number, line)


def _parse(schema: type[M], path: Path, number: int, line: str) -> M:
    try:
        return schema.model_validate_json(line)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "line"
        raise LLMReplayError(
            f"{path}:{number}: not a selfcorrect LLM recording line ({where}: {first['msg']})"
        ) from exc
