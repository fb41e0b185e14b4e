"""One script through the sandbox and evaluation layers 1-2: what `selfcorrect exec` and the
MCP `exec` tool run. The script and its inputs are placed in the work dir by file name; a
file someone names is read as `selfcorrect exec` reads it (a regular file, at most 48 MiB)."""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from selfcorrect_action.api.results import ExecResult, exec_result
from selfcorrect_action.choices import MAX_TIMEOUT_S, Runtime
from selfcorrect_action.contract import ExecutionContract
from selfcorrect_action.errors import UsageError
from selfcorrect_action.evaluation.layers import evaluate
from selfcorrect_action.fileio import FileProblem, read_bounded
from selfcorrect_action.records import evolve
from selfcorrect_action.redact import redact, secrets_from_env
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.runs.stoppable import StoppableExecutor
from selfcorrect_action.sandbox import engine
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.egress.policy import (
    require_credentials,
    secret_values,
    settings_from_environ,
)
from selfcorrect_action.sandbox.image import ensure_image
from selfcorrect_action.sandbox.models import ExecutionRequest, InputFile, Limits, script_argv
from selfcorrect_action.waiting import announced_wait

MAX_INPUT_BYTES = 48 * 1024 * 1024
Progress = Callable[[str], None]


def exec_script(
    script: Path | InputFile,
    *,
    contract: ExecutionContract | None = None,
    inputs: Sequence[Path | InputFile] = (),
    runtime: Runtime = "runc",
    timeout_s: float | None = None,
    artifacts_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
    on_progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> ExecResult:
    """Run `script` (a file, or a name and its bytes) in a fresh locked-down container with
    `inputs` beside it; judge it against `contract`. The artifacts are copied to
    `artifacts_dir` (kept) or to a temporary folder (gone afterwards). A cancel kills the
    script and raises Interrupted."""
    environ = os.environ if environ is None else environ
    contract = with_timeout(contract or ExecutionContract(), timeout_s)
    require_credentials(contract.network, environ)
    # A credential's value is redacted wherever it is shown, whatever its variable's name.
    secrets = [*secrets_from_env(environ), *secret_values(contract.network, environ)]
    say = _redacting(on_progress, secrets)
    request = build_request(script, inputs, contract, runtime)
    name = request.files[0].path
    with contextlib.closing(engine.connect(environ)) as client:
        image = ensure_image(client, progress=say)
        with tempfile.TemporaryDirectory(prefix="selfcorrect-") as scratch, \
                Sandbox(client, image, egress=settings_from_environ(environ)) as sandbox:
            target = artifacts_dir or Path(scratch) / "artifacts"
            say(f"running {name} in a fresh sandbox ({runtime}, timeout "
                f"{contract.timeout_s:g} s)")
            with announced_wait(say, f"{name} to finish", timeout_s=contract.timeout_s):
                result = StoppableExecutor(sandbox, cancel or CancelToken()).run(request, target)
            verdict = evaluate(result, contract, script_name=name)
            return exec_result(result, verdict, secrets=secrets)


def with_timeout(contract: ExecutionContract, timeout_s: float | None) -> ExecutionContract:
    if timeout_s is None:
        return contract
    if not math.isfinite(timeout_s) or not 0 < timeout_s <= MAX_TIMEOUT_S:
        raise UsageError(f"--timeout must be a number of seconds in (0, {MAX_TIMEOUT_S:g}], "
                         f"got {timeout_s}")
    return evolve(contract, {"timeout_s": timeout_s})


def build_request(script: Path | InputFile, inputs: Sequence[Path | InputFile],
                  contract: ExecutionContract, runtime: Runtime) -> ExecutionRequest:
    files = [_file(script, "script"), *(_file(item, "--input") for item in inputs)]
    names = [f.path for f in files]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise UsageError(
            f"two files would land at the same place in the work dir: {', '.join(duplicates)}",
            hint="rename one of them; inputs are placed by file name",
        )
    limits = Limits(memory_mb=contract.memory_mb)
    return ExecutionRequest(
        argv=script_argv(files[0].path), files=files, timeout_s=contract.timeout_s,
        limits=limits, runtime=runtime, network=contract.network,
        artifact_paths=[a.path for a in contract.artifacts], warm=contract.warm,
    )


def _file(item: Path | InputFile, what: str) -> InputFile:
    """A file given by path is read: a regular file only, never past the work dir's size.
    One given as bytes is held to the same size."""
    if isinstance(item, InputFile):
        if len(item.data) > MAX_INPUT_BYTES:
            raise UsageError(f"{what} {item.path}: is larger than "
                             f"{MAX_INPUT_BYTES // (1024 * 1024)} MiB, the most accepted here",
                             hint="pass a smaller file")
        return item
    try:
        data = read_bounded(item, MAX_INPUT_BYTES)
    except FileProblem as exc:
        raise UsageError(f"{what} {item}: {exc.problem}", hint=exc.hint) from exc
    return InputFile(path=item.name, data=data)


def _redacting(on_progress: Progress | None, secrets: list[str]) -> Progress:
    def say(line: str) -> None:
        if on_progress is not None:
            on_progress(redact(line, secrets=secrets))
    return say
