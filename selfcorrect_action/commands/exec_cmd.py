"""`selfcorrect exec`: one script through the sandbox and evaluation layers 1-2."""

from __future__ import annotations

import contextlib
import json
import math
import sys
import tempfile
from pathlib import Path
from typing import Any

from selfcorrect_action import templating
from selfcorrect_action.choices import MAX_TIMEOUT_S, Runtime
from selfcorrect_action.commands.paths import writable_folder
from selfcorrect_action.contract import ExecutionContract, load_contract
from selfcorrect_action.errors import UsageError
from selfcorrect_action.evaluation.layers import evaluate
from selfcorrect_action.evaluation.sniff import detect_kind
from selfcorrect_action.fileio import FileProblem, read_bounded
from selfcorrect_action.records import evolve
from selfcorrect_action.sandbox import engine
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.image import ensure_image
from selfcorrect_action.sandbox.models import (
    ExecutionRequest,
    ExecutionResult,
    InputFile,
    Limits,
    script_argv,
)
from selfcorrect_action.taxonomy import Verdict
from selfcorrect_action.waiting import announced_wait

MAX_INPUT_BYTES = 48 * 1024 * 1024


def exec_script(
    script: Path,
    *,
    contract_path: Path | None,
    inputs: list[Path],
    runtime: Runtime,
    timeout_s: float | None,
    artifacts_dir: Path | None,
    as_json: bool,
) -> int:
    contract = load_contract(contract_path) if contract_path else ExecutionContract()
    if timeout_s is not None:
        if not math.isfinite(timeout_s) or not 0 < timeout_s <= MAX_TIMEOUT_S:
            raise UsageError(f"--timeout must be a number of seconds in (0, {MAX_TIMEOUT_S:g}], "
                             f"got {timeout_s}")
        contract = evolve(contract, {"timeout_s": timeout_s})
    if artifacts_dir is not None:
        writable_folder(artifacts_dir, "--artifacts-dir", empty=True)
    request = build_request(script, inputs, contract, runtime)
    with contextlib.closing(engine.connect()) as client:
        image = ensure_image(client, progress=_progress_to_stderr)
        with tempfile.TemporaryDirectory(prefix="selfcorrect-") as scratch:
            target = artifacts_dir or Path(scratch) / "artifacts"
            with Sandbox(client, image) as sandbox:
                _progress_to_stderr(f"running {script.name} in a fresh sandbox ({runtime}, "
                                    f"timeout {contract.timeout_s:g} s)")
                with announced_wait(_progress_to_stderr, f"{script.name} to finish",
                                    timeout_s=contract.timeout_s):
                    result = sandbox.run(request, target)
            verdict = evaluate(result, contract, script_name=script.name)
            report = exec_report(result, verdict)
            if as_json:
                print(json.dumps(report, indent=2))
            else:
                print(templating.render("reports/exec_summary.txt.j2", report=report,
                                        script=script.name, kept=artifacts_dir))
    return 0 if verdict.passed else 1


def build_request(
    script: Path, inputs: list[Path], contract: ExecutionContract, runtime: Runtime
) -> ExecutionRequest:
    files = [_input_file(script, "script")]
    for path in inputs:
        files.append(_input_file(path, "--input"))
    names = [f.path for f in files]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise UsageError(
            f"two files would land at the same place in the work dir: {', '.join(duplicates)}",
            hint="rename one of them; inputs are placed by file name",
        )
    limits = Limits(memory_mb=contract.memory_mb, network=contract.network)
    return ExecutionRequest(
        argv=script_argv(script.name), files=files, timeout_s=contract.timeout_s,
        limits=limits, runtime=runtime, artifact_paths=[a.path for a in contract.artifacts],
    )


def _input_file(path: Path, what: str) -> InputFile:
    """The file's bytes: a regular file only, never read past the work dir's size."""
    try:
        data = read_bounded(path, MAX_INPUT_BYTES)
    except FileProblem as exc:
        raise UsageError(f"{what} {path}: {exc.problem}", hint=exc.hint) from exc
    return InputFile(path=path.name, data=data)


def exec_report(result: ExecutionResult, verdict: Verdict) -> dict[str, Any]:
    """The JSON shape documented for `selfcorrect exec --json`."""
    return {
        "passed": verdict.passed,
        "failed_layer": verdict.failed_layer,
        "category": verdict.category.value if verdict.category else None,
        "evidence": verdict.evidence,
        "exit_code": result.exit_code,
        "signal": result.signal,
        "timed_out": result.timed_out,
        "oom_killed": result.oom_killed,
        "duration_ms": result.duration_ms,
        "runtime": result.runtime,
        "stdout": result.stdout.text,
        "stderr": result.stderr.text,
        "stdout_bytes": result.stdout.total_bytes,
        "stderr_bytes": result.stderr.total_bytes,
        "artifacts": [_artifact(a) for a in result.artifacts],
        "checks": [check.model_dump() for check in verdict.checks],
        "sandbox_note": result.sandbox_note,
        "artifact_note": result.artifact_note,
    }


def _artifact(record: Any) -> dict[str, Any]:
    kind = detect_kind(record.host_path) if record.host_path else None
    return {"path": record.path, "size": record.size, "kind": kind, "rejected": record.rejected}


def _progress_to_stderr(line: str) -> None:
    print(line, file=sys.stderr)
