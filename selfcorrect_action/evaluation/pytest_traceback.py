"""pytest's `--tb=short` failure text, distilled to what a repair needs.

The text of a junit <failure> looks like this (pytest 7.2 and later):

    tests/test_two_sum.py:15: in test_param
        assert two_sum(nums, target) == expected
    two_sum.py:4: in two_sum
        if target - n in seen:
           ^^^^^^^^^^          <- pytest 8+ on Python 3.11+
    E   TypeError: unsupported operand type(s) for -: 'int' and 'str'

Frames under the work dir (relative paths: the tests and the candidate) say where; the `E   `
lines say what, including pytest's assertion rewrite ("At index 0 diff: 1 != 0"). Library
frames in between are noise. Every line is length-capped before a regex sees it.
"""

from __future__ import annotations

import re
from collections import deque

from selfcorrect_action.evaluation.tracebacks import Frame, parse_traceback

MAX_DETAIL_CHARS = 1500
MAX_LINE_CHARS = 200
MAX_E_LINES = 12
MAX_FRAMES = 4
# What one exception's block keeps while reading: enough to choose from, bounded whatever
# the length of the text (a recursion error prints a thousand frames).
_KEPT_FRAMES = 16
_KEPT_ERRORS = 64

# `tests/test_x.py:8: in test_order`, `<frozen importlib._bootstrap>:1204: in _gcd_import`
_FRAME = re.compile(r"(\S[^:\n]{0,300}):(\d{1,9}): in (\S.*)")
_CHAIN_MARKERS = (
    "During handling of the above exception",
    "The above exception was the direct cause",
)
# Advice to the human at the terminal, not information about the failure.
_NOISE = ("Use -v to get more diff", "Use -v to get the full diff", "Omitting ")


class _Block:
    """One exception of a chain: its first frame in the work dir, its latest frames, and the
    head of its `E` lines with a count of the rest."""

    def __init__(self) -> None:
        self.first_local: Frame | None = None
        self.recent: deque[Frame] = deque(maxlen=_KEPT_FRAMES)
        self.errors: list[str] = []
        self.more_errors = 0

    @property
    def frames(self) -> list[Frame]:
        first = self.first_local
        head = [first] if first is not None and first not in self.recent else []
        return [*head, *self.recent]

    def add_frame(self, frame: Frame) -> None:
        if self.first_local is None and _in_work_dir(frame):
            self.first_local = frame
        self.recent.append(frame)

    def set_source(self, source: str) -> None:
        last = self.recent[-1]
        with_source = Frame(last.file, last.line, last.function, source)
        if self.first_local is last:
            self.first_local = with_source
        self.recent[-1] = with_source

    def add_error(self, text: str) -> None:
        if len(self.errors) < _KEPT_ERRORS:
            self.errors.append(text)
        else:
            self.more_errors += 1


def first_line(text: str) -> str:
    """The first non-blank line, whitespace collapsed."""
    for line in text.splitlines():
        if line.strip():
            return " ".join(line.split())
    return ""


def distil_failure(text: str) -> str:
    """Frames in the work dir plus the last frame, then the `E` lines, bounded."""
    blocks = _blocks(text)
    if not blocks:
        return ""
    last = blocks[-1]
    lines = [*_frame_lines(_chosen_frames(last.frames)), *_error_lines(last)]
    if len(blocks) > 1 and blocks[-2].errors:
        lines.append(f"(raised while handling: {blocks[-2].errors[-1].strip()})")
    return _bounded(lines)


def detail_frames(detail: str) -> list[Frame]:
    """The frames in a distilled detail (or in raw `--tb=short` text), outermost first.

    A module that does not compile shows up only in the `E` lines, as the interpreter prints
    it (`File "/work/two_sum.py", line 3`), so those are read as a traceback too.
    """
    blocks = _blocks(detail)
    frames = [frame for block in blocks for frame in block.frames]
    if blocks:
        printed = parse_traceback("\n".join(blocks[-1].errors))
        frames.extend(printed.frames if printed else ())
    return frames


def _blocks(text: str) -> list[_Block]:
    """The last two exceptions of a chain (the cause, then the one reported), oldest first."""
    blocks: deque[_Block] = deque([_Block()], maxlen=2)
    after_frame = False
    for raw in text.splitlines():
        line = raw[: MAX_LINE_CHARS * 2].rstrip()
        expects_source, after_frame = after_frame, False
        if line.startswith(_CHAIN_MARKERS):
            blocks.append(_Block())
        elif match := _FRAME.fullmatch(line):
            blocks[-1].add_frame(Frame(match.group(1), int(match.group(2)), match.group(3)))
            after_frame = True
        elif line == "E" or line.startswith("E "):
            # pytest writes "E   " then the text; deeper indentation is part of the text.
            blocks[-1].add_error(line[4:] if line.startswith("E   ") else line[2:])
        elif expects_source and line.startswith(" ") and _is_source(line):
            blocks[-1].set_source(line.strip())
    return [block for block in blocks if block.recent or block.errors]


def _is_source(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and stripped != "???" and not set(stripped) <= {"^", "~", " "}


def _in_work_dir(frame: Frame) -> bool:
    return not frame.file.startswith(("/", "<", ".."))


def _chosen_frames(frames: list[Frame]) -> list[Frame]:
    """The first work-dir frame (usually the test), the innermost work-dir frames (usually the
    candidate), and the frame that raised, wherever it is."""
    local = [frame for frame in frames if _in_work_dir(frame)]
    chosen = local[:1] + local[1:][-(MAX_FRAMES - 2):] if local else []
    if frames and frames[-1] not in chosen:
        chosen.append(frames[-1])
    return chosen


def _frame_lines(frames: list[Frame]) -> list[str]:
    lines: list[str] = []
    for frame in frames:
        lines.append(f"{frame.file}:{frame.line}: in {frame.function}")
        if frame.source:
            lines.append(f"    {frame.source}")
    return lines


def _error_lines(block: _Block) -> list[str]:
    kept = [
        error for error in block.errors if error.strip() and not error.strip().startswith(_NOISE)
    ]
    if len(kept) + block.more_errors > MAX_E_LINES:
        more = len(kept) - (MAX_E_LINES - 1) + block.more_errors
        kept = [*kept[: MAX_E_LINES - 1], f"… ({more:,} more lines)"]
    return [f"E   {error}" for error in kept]


def _bounded(lines: list[str]) -> str:
    """Lines cut at MAX_LINE_CHARS; when the whole is too long, leading frame lines go first,
    since the error lines at the end say what went wrong."""
    cut = [line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 1] + "…"
           for line in lines]
    while len(cut) > 1 and sum(len(line) + 1 for line in cut) > MAX_DETAIL_CHARS:
        del cut[0]
    return "\n".join(cut)[:MAX_DETAIL_CHARS]
