"""What goes into the sandbox and what comes out: records shared by the client, the pool and
the evaluation."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from selfcorrect_action.choices import MAX_TIMEOUT_S, Runtime
from selfcorrect_action.network_rules import NetworkPolicy
from selfcorrect_action.sandbox.egress.records import NetworkLog

SANDBOX_UID = 10001
WORK_DIR = "/work"
# Where the sandbox image keeps the boundary's entry points (sandbox/boundary/).
BOUNDARY_ROOT = "/opt/selfcorrect/boundary"
# The tests' private folder in a boundary container (sandbox/runner.py).
BOUNDARY_TESTS_DIR = "/work/tests"
# The boundary launcher's first argument when the frozen tests need nothing of pytest's
# (evaluation/plain_tests.py): a run that passes is then judged without importing pytest
# (sandbox/boundary/selfcorrect_boundary/plain.py, which spells it the same).
PLAIN_TESTS_FLAG = "--selfcorrect-plain"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Limits(_Frozen):
    """Resource limits of one container. Part of the pool key: equal limits share a pool."""

    memory_mb: int = Field(default=512, ge=32)
    cpus: float = Field(default=1.0, gt=0)
    pids: int = Field(default=128, ge=8)
    nofile: int = Field(default=256, ge=16)
    work_mb: int = Field(default=64, ge=1, description="tmpfs size of the work dir")
    work_inodes: int = Field(default=8192, ge=64, description="files the work dir may hold")
    tmp_mb: int = Field(default=32, ge=1)
    shm_mb: int = Field(default=16, ge=1)


class OutputCaps(_Frozen):
    """How much of each stream and of the artifacts we keep: bounds our memory whatever
    the script does."""

    stream_head_bytes: int = 96 * 1024
    stream_tail_bytes: int = 32 * 1024
    artifact_max_files: int = 256
    artifact_max_file_bytes: int = 32 * 1024 * 1024
    artifact_max_total_bytes: int = 64 * 1024 * 1024


class InputFile(_Frozen):
    """A file placed in the work dir before the script runs."""

    path: str
    data: bytes
    mode: int = 0o644

    @field_validator("path")
    @classmethod
    def _relative(cls, value: str) -> str:
        pure = PurePosixPath(value)
        if not value or pure.is_absolute() or ".." in pure.parts:
            raise ValueError(f"input path must be relative without '..': {value!r}")
        return str(pure)


# The longest a script may run (a contract's timeout_s is capped at the same value): the
# orphan reaper relies on it to tell a live execution from a leftover.


class Boundary(_Frozen):
    """Run the frozen tests in `argv` apart from the candidate: pytest under one uid, the
    candidate's module in a fresh interpreter under another, only plain data between them
    (see "The tests' boundary" in sandbox/runner.py). `candidate` and `tests` name files of
    the request; the others are shared, read-only, with both."""

    candidate: str
    module: str
    tests: list[str] = Field(min_length=1)
    eager: bool = Field(
        default=True, description="import the module while pytest starts (kind: function); "
        "False: only when a test imports it (a script's module runs the script)")


class ExecutionRequest(_Frozen):
    argv: list[str] = Field(min_length=1)
    files: list[InputFile] = Field(default_factory=list)
    timeout_s: float = Field(default=30, gt=0, le=MAX_TIMEOUT_S)
    limits: Limits = Field(default_factory=Limits)
    caps: OutputCaps = Field(default_factory=OutputCaps)
    runtime: Runtime = "runc"
    env: dict[str, str] = Field(
        default_factory=dict, description="explicit extra variables; nothing is inherited"
    )
    artifact_paths: list[str] = Field(
        default_factory=list,
        description="the files the contract asks for: collected first, so a flood of other "
        "files cannot push them past the artifact caps",
    )
    boundary: Boundary | None = Field(
        default=None, description="run the tests apart from the candidate (its own container "
        "kind: root with CAP_SETUID and CAP_SETGID, two uids)")
    # Not a container setting: every container has network_mode=none, and a request with a
    # network gets the egress tunnel and its proxy (issue 19). So no pool key depends on it.
    network: NetworkPolicy = "none"
    warm: bool = Field(
        default=True, description="let a warm interpreter (its libraries imported before the "
        "request came) become the script; False: always a fresh interpreter")
    warm_wait_s: float = Field(
        default=10.0, ge=0, le=60, description="how long the script's start may wait for a "
        "warm interpreter still importing (its imports would take as long in a cold one)")

    @field_validator("files")
    @classmethod
    def _each_path_once(cls, value: list[InputFile]) -> list[InputFile]:
        # The runner writes the files in order: a second file of one path would silently
        # replace the first (an input the tests read, say).
        seen: set[str] = set()
        for item in value:
            if item.path in seen:
                raise ValueError(f"two files of the request have the path {item.path!r}")
            seen.add(item.path)
        return value


def script_argv(name: str) -> list[str]:
    """How a script in the work dir is run. `--` ends the interpreter's options: a script
    named `-c.py` or `-m.py` must run as a file, not as an option with an argument."""
    return ["python3", "--", name]


class ArtifactRecord(_Frozen):
    """One file found in the work dir after the run. `host_path` is set only when it was
    copied out; otherwise `rejected` says why not (link, too big, unsafe path...)."""

    path: str
    size: int
    host_path: Path | None = None
    rejected: str | None = None


# The line the runner puts where it dropped the middle of a long stream.
_OMITTED = re.compile(r"\n\[\.\.\. [\d,]+ bytes omitted \.\.\.\]\n")


class StreamCapture(_Frozen):
    text: str = ""
    total_bytes: int = 0
    truncated: bool = False

    def captured(self) -> list[str]:
        """What the script printed, as the runner kept it: the whole text, or its head and
        its tail without the marker between them (which the script never printed)."""
        if not self.truncated:
            return [self.text]
        return _OMITTED.split(self.text, maxsplit=1)


class ExecutionResult(_Frozen):
    exit_code: int | None = None
    signal: int | None = None
    timed_out: bool = False
    oom_killed: bool = False
    duration_ms: int = 0
    stdout: StreamCapture = Field(default_factory=StreamCapture)
    stderr: StreamCapture = Field(default_factory=StreamCapture)
    artifacts: list[ArtifactRecord] = Field(default_factory=list)
    runtime: Runtime = "runc"
    sandbox_note: str | None = Field(
        default=None,
        description="set when the in-container runner did not report normally "
        "(killed, flooded its channel, protocol broken): what we saw instead",
    )
    artifact_note: str | None = Field(
        default=None,
        description="set when the artifacts could not all be copied out (stream too large, "
        "malformed or late); the script's own outcome is unaffected",
    )
    unchanged_inputs: list[str] = Field(
        default_factory=list,
        description="inputs found as they were placed: not output, so not among the artifacts",
    )
    replaced_inputs: list[str] = Field(
        default_factory=list,
        description="a boundary run's shared files (inputs, the candidate's carried output) "
        "that were not as placed when the tests ended: replaced or changed while they ran",
    )
    network: NetworkLog | None = Field(
        default=None, description="the egress proxy's connection log; None without network")
    start: Literal["cold", "warm"] = Field(
        default="cold", description="warm: a pre-started interpreter with the preloaded "
        "modules imported became the script; cold: a fresh interpreter ran it")
    start_note: str | None = Field(
        default=None, description="why a container with a warm interpreter started the "
        "script cold, or why a warm attempt was run again cold")
    preloaded: list[str] = Field(
        default_factory=list, description="the modules the warm interpreter had imported")
    warm_rss_kb: int | None = Field(
        default=None, description="the warm interpreter's resident memory at the hand-over")

