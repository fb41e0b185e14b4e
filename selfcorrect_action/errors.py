"""The expected-failure exceptions. One top-level handler (cli.main) maps them to exit codes.

Anything else that escapes is a bug in selfcorrect: cli.main's last resort (crash.py)
prints one line, writes the redacted traceback to a file and exits 3.
"""

from __future__ import annotations

from typing import ClassVar


class SelfcorrectError(Exception):
    """A failure we expected and can explain: what went wrong and how to fix it."""

    exit_code: ClassVar[int] = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n  hint: {self.hint}"
        return self.message


class UsageError(SelfcorrectError):
    """Bad command-line usage or a bad input file (spec, contract)."""

    exit_code = 2


class SpecError(UsageError):
    """A YAML document that does not match its schema; carries every problem found."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


class Interrupted(KeyboardInterrupt):
    """A signal asked us to stop: SIGINT (Ctrl-C) or SIGTERM (a cancelled CI job). A
    KeyboardInterrupt, so every `finally` and every handler of Ctrl-C runs for both; the
    exit code says which (as a shell reports it: 128 + the signal's number)."""

    def __init__(self, signal_name: str = "SIGINT", exit_code: int = 130) -> None:
        super().__init__(signal_name)
        self.signal_name = signal_name
        self.exit_code = exit_code

    @property
    def described(self) -> str:
        if self.signal_name == "SIGINT":
            return "SIGINT (Ctrl-C)"
        return self.signal_name if self.signal_name.startswith("SIG") else "a cancel request"


SIGNAL_EXIT_CODES = {"SIGINT": 130, "SIGTERM": 143}


def interruption(signal_name: str) -> Interrupted:
    """The Interrupted for a signal's name (SIGINT 130, SIGTERM 143); any other name is a
    caller's cancel, which exits as Ctrl-C does."""
    return Interrupted(signal_name, SIGNAL_EXIT_CODES.get(signal_name, SIGNAL_EXIT_CODES["SIGINT"]))


def interrupted_by(exc: BaseException) -> Interrupted:
    """A bare KeyboardInterrupt (Python's own, for Ctrl-C) as an Interrupted."""
    return exc if isinstance(exc, Interrupted) else Interrupted()


class SandboxUnavailable(SelfcorrectError):
    """The Docker engine (or the requested runtime, or the image) cannot be used."""

    exit_code = 3


class ImagePullFailed(SandboxUnavailable):
    """The engine answered but could not pull an image: the reference, the registry or its
    access is wrong (the engine not answering stays a plain SandboxUnavailable)."""


class SandboxError(SelfcorrectError):
    """The sandbox broke in a way that is ours or the engine's fault, not the script's."""

    exit_code = 3
