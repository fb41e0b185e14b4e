"""Why an execution failed (layer 1): one category and short evidence for the repair prompt.

Pure: reads the ExecutionResult only. Rules run in order and the first that applies wins: being
killed from outside (timeout, OOM, SIGKILL) explains everything printed before it, a traceback
explains a non-zero exit, and a bare exit code is the last resort. The evidence is bounded
whatever the script printed; the repair packet quotes it, never the raw log.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from selfcorrect_action.contract import ExecutionContract
from selfcorrect_action.evaluation.exception_rules import classify_exception
from selfcorrect_action.evaluation.tracebacks import Traceback, last_frame_in, parse_traceback
from selfcorrect_action.sandbox.egress.records import refusal_evidence
from selfcorrect_action.sandbox.models import ExecutionResult
from selfcorrect_action.taxonomy import Category

EVIDENCE_MAX_CHARS = 600
_TAIL_CHARS = 300
_EXCEPTION_LINE_CHARS = 300
_SOURCE_CHARS = 160

# Sent from outside (our timeout, the kernel's OOM killer, rlimits): the environment stopped it.
_KILLED = frozenset({signal.SIGKILL, signal.SIGTERM, signal.SIGXCPU, signal.SIGXFSZ})
# Raised inside the process: a crash in native code, unless it ran out of memory or stack.
_CRASHES = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGILL, signal.SIGFPE})
_COMMAND_NOT_FOUND = re.compile(r"(?:sh: \d+: (\S+): not found|(\S+): command not found)")
_FAULT_FRAME = re.compile(r'\s*File "([^"\n]*)", line (\d+) in (\S+)')
_OUT_OF_MEMORY = ("stack overflow", "Cannot allocate memory", "MemoryError", "bad_alloc")


@dataclass(frozen=True)
class _Failure:
    result: ExecutionResult
    script_name: str
    contract: ExecutionContract | None

    @property
    def stderr(self) -> str:
        return self.result.stderr.text


Outcome = tuple[Category, str]


def classify_execution_failure(
    result: ExecutionResult, *, script_name: str, contract: ExecutionContract | None = None
) -> Outcome:
    """Category and evidence (at most EVIDENCE_MAX_CHARS) for a run that failed layer 1.

    `script_name` is the candidate file, as a basename or its path in the sandbox; `contract`,
    when given, lets the evidence name the limits that were hit.
    """
    failure = _Failure(result, script_name, contract)
    for rule in _RULES:
        outcome = rule(failure)
        if outcome is not None:
            category, evidence = outcome
            return category, _bounded(evidence)
    return Category.RUNTIME, "the run failed but recorded no exit code, signal or output"


def _timed_out(failure: _Failure) -> Outcome | None:
    if not failure.result.timed_out:
        return None
    limit = failure.contract.timeout_s if failure.contract else failure.result.duration_ms / 1000
    evidence = f"timed out after {limit:g} s and was killed: it must finish faster or do less"
    return Category.RESOURCE, evidence + _last_output(failure)


def _oom(failure: _Failure) -> Outcome | None:
    if not failure.result.oom_killed:
        return None
    limit = f" at the {failure.contract.memory_mb} MB limit" if failure.contract else ""
    evidence = f"killed by the out-of-memory killer{limit}: use less memory"
    return Category.RESOURCE, evidence + _last_output(failure)


def _killed(failure: _Failure) -> Outcome | None:
    number = _signal_number(failure.result)
    if number not in _KILLED:
        return None
    evidence = (f"killed by {_signal_name(number)} without hitting the time or memory limit "
                "on record: another sandbox limit, or the script's own processes sent it")
    return Category.RESOURCE, evidence + _last_output(failure)


def _egress_refused(failure: _Failure) -> Outcome | None:
    """The proxy refused a connection (or the script went around it) and the run failed:
    that is the cause to report, with the host and what is allowed, unless the script did
    not even compile or import."""
    log = failure.result.network
    if log is None or not log.refused() or failure.result.exit_code in (None, 0):
        return None
    tb = parse_traceback(failure.stderr)
    raised = ""
    if tb is not None:
        category, _ = classify_exception(tb, script_name=failure.script_name)
        if category in (Category.SYNTAX, Category.ENVIRONMENT, Category.RESOURCE):
            return None
        raised = f" — then {_describe(tb, failure.script_name)}"
    return Category.EXTERNAL, f"{refusal_evidence(log)}{raised}"


def _exception(failure: _Failure) -> Outcome | None:
    if failure.result.exit_code == 0:
        return None  # a traceback printed by a run that exited 0 was handled by the script
    tb = parse_traceback(failure.stderr)
    if tb is None:
        return None
    category, reason = classify_exception(tb, script_name=failure.script_name)
    evidence = f"{_describe(tb, failure.script_name)} — {reason}"
    if category is Category.RUNTIME:
        return _cause_in_chain(tb, failure.script_name) or (category, evidence)
    return category, evidence


def _cause_in_chain(tb: Traceback, script_name: str) -> Outcome | None:
    """A generic error raised while handling a network or import failure ("raise
    RuntimeError('download failed') from exc") belongs with its cause, not with the code."""
    for cause in reversed(tb.chained_from):
        category, reason = classify_exception(cause, script_name=script_name)
        if category is not Category.RUNTIME:
            outer = _flat(tb.exception_line, _EXCEPTION_LINE_CHARS // 2)
            return (
                category,
                f"{outer}, raised while handling {_describe(cause, script_name)} — {reason}",
            )
    return None


def _crashed(failure: _Failure) -> Outcome | None:
    number = _signal_number(failure.result)
    if number is None:
        return None
    evidence = f"crashed with {_signal_name(number)}{_fault_location(failure)}"
    if any(marker in failure.stderr for marker in _OUT_OF_MEMORY):
        return Category.RESOURCE, evidence + ": out of memory or stack"
    return Category.RUNTIME, evidence + _last_output(failure)


def _sandbox_note(failure: _Failure) -> Outcome | None:
    note = failure.result.sandbox_note
    if note is None:
        return None
    return Category.RESOURCE, f"the sandbox runner did not report normally: {note}"


def _bare_exit(failure: _Failure) -> Outcome | None:
    code = failure.result.exit_code
    if code is None or code == 0:
        return None
    missing = _COMMAND_NOT_FOUND.search(failure.stderr[-64 * 1024 :])
    if missing:
        program = missing.group(1) or missing.group(2)
        return Category.ENVIRONMENT, (
            f"exit code {code}; the shell reported {program!r} not found: it is not installed "
            "in the sandbox image"
        )
    last = failure.stderr.strip().splitlines()[-1:] or [""]
    if last[0].startswith("SyntaxError: "):
        # Python reports a source file it cannot decode (not UTF-8, or binary) with no
        # traceback at all: the file is not Python source.
        return Category.SYNTAX, f"the script is not readable Python source: {_flat(last[0], 300)}"
    return Category.RUNTIME, f"exit code {code} without a traceback{_last_output(failure)}"


_RULES: tuple[Callable[[_Failure], Outcome | None], ...] = (
    _timed_out,
    _oom,
    _killed,
    _egress_refused,
    _exception,
    _crashed,
    _sandbox_note,
    _bare_exit,
)


def _describe(tb: Traceback, script_name: str) -> str:
    """`KeyError: 'total' at chart.py:12 in main: df["total"].sum()`"""
    line = _flat(tb.exception_line, _EXCEPTION_LINE_CHARS)
    frame = last_frame_in(tb, script_name)
    if frame is None:
        return line
    where = f"{PurePosixPath(frame.file).name}:{frame.line}"
    if frame.function is not None:
        where += f" in {frame.function}"
    source = f": {_flat(frame.source, _SOURCE_CHARS)}" if frame.source else ""
    return f"{line} at {where}{source}"


def _fault_location(failure: _Failure) -> str:
    # faulthandler prints "File "...", line N in func", innermost first.
    for match in _FAULT_FRAME.finditer(failure.stderr[-64 * 1024 :]):
        if PurePosixPath(match.group(1)).name == PurePosixPath(failure.script_name).name:
            return f" at {PurePosixPath(match.group(1)).name}:{match.group(2)} in {match.group(3)}"
    return ""


def _last_output(failure: _Failure) -> str:
    for name, stream in (("stderr", failure.result.stderr), ("stdout", failure.result.stdout)):
        tail = stream.text.rstrip()[-_TAIL_CHARS:]
        if tail.strip():
            cut = " (truncated)" if stream.truncated else ""
            return f"; {name}{cut} ends: {_quoted_tail(tail)}"
    return "; no output"


def _quoted_tail(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = "…" + flat[-(limit - 1) :]
    return "'" + flat.replace("'", "\\'") + "'"


def _signal_number(result: ExecutionResult) -> int | None:
    if result.signal is not None:
        return result.signal
    code = result.exit_code
    if code is not None and code < 0:
        return -code  # subprocess convention: -N means killed by signal N
    # No 128+N guess: the runner reports the script's signal apart from its exit code, so
    # an exit code of 137 is the script's own sys.exit(137), not a SIGKILL.
    return None


def _signal_name(number: int) -> str:
    try:
        return f"{signal.Signals(number).name} (signal {number})"
    except ValueError:
        return f"signal {number}"


def _flat(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _bounded(evidence: str) -> str:
    return (
        evidence
        if len(evidence) <= EVIDENCE_MAX_CHARS
        else evidence[: EVIDENCE_MAX_CHARS - 1] + "…"
    )
