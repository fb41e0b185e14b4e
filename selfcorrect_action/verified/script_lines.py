"""The lines of a script a failed verification points at: the innermost frame inside the
script of its own traceback, and of each failing test's; what a pull request's check run
marks on the diff (issue 36, item 3). Pure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from selfcorrect_action.evaluation.pytest_traceback import detail_frames
from selfcorrect_action.evaluation.tracebacks import last_frame_in, parse_traceback, same_file
from selfcorrect_action.verified.results import ScriptLine

if TYPE_CHECKING:
    from selfcorrect_action.loop.state import Attempt

MAX_LINES = 20


def script_lines(attempt: Attempt, script: str) -> list[ScriptLine]:
    """`script`: the script's file name in the sandbox's work dir (the state's output_name)."""
    found: dict[int, str] = {}
    execution = attempt.execution
    if execution is not None:
        traceback = parse_traceback(execution.stderr.text)
        frame = last_frame_in(traceback, script) if traceback else None
        if traceback is not None and frame is not None:
            found[frame.line] = traceback.exception_line
    for outcome in attempt.tests:
        if outcome.outcome not in ("failed", "error"):
            continue
        inside = [frame for frame in detail_frames(outcome.detail)
                  if same_file(frame.file, script)]
        if inside:
            found.setdefault(inside[-1].line, f"{outcome.test_id}: {outcome.message}")
    return [ScriptLine(line=line, message=message[:2000] or "the verification failed here")
            for line, message in sorted(found.items())[:MAX_LINES]]
