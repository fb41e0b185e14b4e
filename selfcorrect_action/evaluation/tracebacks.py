"""Python tracebacks read back out of captured stderr.

The text is untrusted and bounded only by the sandbox's capture caps: it may hold noise before
and after, several tracebacks (logging.exception output, then the fatal one), chained exceptions,
and a cut in the middle when the stream was truncated. The parser is a single forward pass over
lines with anchored regexes applied to length-capped lines, so its cost stays linear in the input
whatever the script printed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

# A line longer than this is cut before any regex sees it: a frame line or an exception header is
# never this long, and the cap keeps every match O(cap).
MAX_LINE_CHARS = 4096
# A multi-line exception message (pandas, notes) keeps at most this much; noise after a
# traceback would otherwise be swallowed into the message without bound.
MAX_MESSAGE_LINES = 20
MAX_MESSAGE_CHARS = 2000
# Links of one exception chain kept: the first ones (the root cause) and the most recent ones.
# Without a cap, a script that chains in a loop makes every link copy all earlier ones.
MAX_CHAIN = 10

_HEADER = "Traceback (most recent call last):"
_CHAIN_MARKERS = frozenset(
    {
        "During handling of the above exception, another exception occurred:",
        "The above exception was the direct cause of the following exception:",
    }
)
# `  File "/work/x.py", line 12, in main` — the `, in` part is absent for the frame that
# SyntaxError prints for the file that failed to compile.
_FRAME = re.compile(r'\s*File "([^"\n]*)", line (\d+)(?:, in (.*))?\s*$')
# `requests.exceptions.ConnectionError: ...`, `KeyError: 'x'`, a bare `AssertionError`.
# Qualified names can carry `<locals>` for classes defined inside functions.
_EXCEPTION = re.compile(r"([A-Za-z_][\w.<>]*)(?::(?: (.*))?)?\s*$")
_CARETS = frozenset("^~ ")
# What the sandbox runner puts where it dropped the middle of a long stream. The line after it
# usually starts mid-line, so it may be garbage even inside a traceback.
_OMISSION = re.compile(r"\[\.\.\. [\d,]+ bytes omitted \.\.\.\]\s*$")


@dataclass(frozen=True)
class Frame:
    file: str
    line: int
    function: str | None  # None for the compile-time frame of a SyntaxError
    source: str | None = None


@dataclass(frozen=True)
class Traceback:
    frames: tuple[Frame, ...]
    exc_type: str  # as printed, qualified names kept: "requests.exceptions.ConnectionError"
    message: str
    chained_from: tuple[Traceback, ...] = ()  # earlier links of the same chain, oldest first

    @property
    def exc_name(self) -> str:
        """The class name without its module: "ConnectionError"."""
        return self.exc_type.rsplit(".", 1)[-1]

    @property
    def exception_line(self) -> str:
        return f"{self.exc_type}: {self.message}" if self.message else self.exc_type


def parse_traceback(text: str) -> Traceback | None:
    """The last complete traceback in `text`, with the earlier links of its chain attached."""
    parser = _Parser()
    for raw in text.splitlines():
        parser.feed(_unbox(raw[:MAX_LINE_CHARS]))
    return parser.finish()


def _unbox(line: str) -> str:
    """Exception groups (3.11+) draw their sub-tracebacks inside a "|" box: take the box off so
    the last sub-exception reads as an ordinary traceback; its "+---" rules end a block."""
    stripped = line.lstrip()
    if stripped.startswith("| "):
        return stripped[2:]
    if stripped in {"|", ""} or stripped.startswith("+-"):
        return ""
    return line


def last_frame_in(tb: Traceback, filename: str) -> Frame | None:
    """The innermost frame that belongs to `filename` (a basename or a path; see same_file)."""
    for frame in reversed(tb.frames):
        if same_file(frame.file, filename):
            return frame
    return None


def same_file(frame_file: str, candidate: str) -> bool:
    """True when one path is a suffix of the other on whole components.

    The script may be named "sales_chart.py" by the caller and "/work/sales_chart.py" in the
    traceback (or the reverse); "/usr/lib/x/sales_chart.py" must not match "/work/sales_chart.py".
    """
    frame_parts = PurePosixPath(frame_file).parts
    candidate_parts = PurePosixPath(candidate).parts
    shortest = min(len(frame_parts), len(candidate_parts))
    if shortest == 0:
        return False
    return frame_parts[-shortest:] == candidate_parts[-shortest:]


class _Block:
    """A traceback being read: frames so far, then the exception line and its continuation."""

    def __init__(self) -> None:
        self.frames: list[Frame] = []
        self.exc_type: str | None = None
        self.message_lines: list[str] = []
        self.message_chars = 0

    def add_source(self, line: str) -> None:
        stripped = line.strip()
        if not self.frames or not stripped or set(stripped) <= _CARETS:
            return
        if stripped.startswith("[Previous line repeated"):
            return
        last = self.frames[-1]
        if last.source is None:
            self.frames[-1] = Frame(last.file, last.line, last.function, stripped)

    def add_message(self, line: str) -> None:
        if len(self.message_lines) >= MAX_MESSAGE_LINES or self.message_chars >= MAX_MESSAGE_CHARS:
            return
        self.message_lines.append(line)
        self.message_chars += len(line) + 1

    def build(self, chain: tuple[Traceback, ...]) -> Traceback:
        assert self.exc_type is not None
        message = "\n".join(self.message_lines).strip()[:MAX_MESSAGE_CHARS]
        return Traceback(tuple(self.frames), self.exc_type, message, chain)


class _Parser:
    """States: idle (outside any traceback), frames (reading frames), message (after the
    exception line). A completed block becomes `last`; chain markers keep the chain going."""

    def __init__(self) -> None:
        self.block: _Block | None = None
        self.in_message = False
        self.chain: list[Traceback] = []
        self.chain_open = False  # a chain marker was seen since the last completed block
        self.last: Traceback | None = None
        self.after_cut = False

    def feed(self, line: str) -> None:
        after_cut, self.after_cut = self.after_cut, False
        stripped = line.strip()
        if _OMISSION.match(stripped):
            # Keep reading the same traceback across the cut: its exception line is in the tail.
            self.after_cut = True
        elif after_cut and not _FRAME.match(line) and not _EXCEPTION.match(line):
            return
        elif stripped in _CHAIN_MARKERS:
            self._complete()
            self.chain_open = True
        elif line.rstrip().endswith(_HEADER):
            self._start()
        elif frame := _FRAME.match(line):
            self._frame(frame)
        elif self.block is None:
            return
        elif self.in_message:
            self._message_line(line)
        else:
            self._frames_line(line)

    def finish(self) -> Traceback | None:
        self._complete()
        return self.last

    def _start(self) -> None:
        self._complete()
        if not self.chain_open:
            self.chain = []
        self.chain_open = False
        self.block = _Block()

    def _frame(self, match: re.Match[str]) -> None:
        if self.block is None or self.in_message:
            # Headerless: a SyntaxError printed by the interpreter, or a header cut off by
            # truncation of the stream.
            self._start()
        assert self.block is not None
        function = match.group(3).strip() if match.group(3) is not None else None
        self.block.frames.append(Frame(match.group(1), int(match.group(2)), function))

    def _frames_line(self, line: str) -> None:
        assert self.block is not None
        if not line.strip():
            return  # frames never hold blank lines, but a stream cut can leave one
        if line[:1].isspace():
            self.block.add_source(line)
            return
        exception = _EXCEPTION.match(line) if self.block.frames else None
        if exception is None:
            self.block = None  # not a traceback after all; forget it
            return
        self.block.exc_type = exception.group(1)
        self.block.add_message(exception.group(2) or "")
        self.in_message = True

    def _message_line(self, line: str) -> None:
        assert self.block is not None
        if not line.strip():
            self._complete()
            return
        self.block.add_message(line)

    def _complete(self) -> None:
        block, self.block, self.in_message = self.block, None, False
        if block is None or block.exc_type is None:
            return
        tb = block.build(tuple(self.chain))
        self.chain.append(tb)
        if len(self.chain) > MAX_CHAIN:
            del self.chain[MAX_CHAIN // 2]
        self.chain_open = False
        self.last = tb
