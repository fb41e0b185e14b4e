"""Running one request on one prepared container and turning what comes back into an
ExecutionResult. The wall-clock limit is enforced here, from outside the container."""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any

from selfcorrect_action.errors import SandboxError, SandboxUnavailable
from selfcorrect_action.sandbox import lifecycle
from selfcorrect_action.sandbox.archive import extract_artifacts
from selfcorrect_action.sandbox.egress.direct import with_direct_attempts
from selfcorrect_action.sandbox.egress.policy import EgressSettings
from selfcorrect_action.sandbox.egress.relay import EgressRelay
from selfcorrect_action.sandbox.lifecycle import Prepared
from selfcorrect_action.sandbox.models import (
    ArtifactRecord,
    ExecutionRequest,
    ExecutionResult,
    StreamCapture,
)
from selfcorrect_action.sandbox.wire import (
    DeadlineExceeded,
    ProtocolViolation,
    StreamClosed,
    encode_request,
    read_result,
    read_started,
)

# The runner stops the script itself at timeout_s and still reports what it printed; we
# kill the whole container only if the report has not come this much later.
KILL_GRACE_S = 3.0
STARTUP_TIMEOUT_S = 60.0
ARTIFACT_TIMEOUT_S = 60.0
SIGKILL = 9
MAX_REJECTED_LISTED = 100
# What the runner says on stderr when it refuses to start a script it cannot filter.
NO_FILTER = "cannot install the syscall filter"


def execute(prepared: Prepared, request: ExecutionRequest, artifact_dir: Path,
            egress: EgressSettings | None = None) -> ExecutionResult:
    relay = None
    if request.network != "none":
        relay = EgressRelay(request.network, egress or EgressSettings(), prepared.stream.send)
    watched: list[Any] = []
    try:
        result = _execute(prepared, request, artifact_dir, relay, watched)
    finally:
        log = relay.close() if relay is not None else None
    if log is None:
        return result
    log = with_direct_attempts(log, result.stderr.text, watched)
    return result.model_copy(update={"network": log})


def _execute(prepared: Prepared, request: ExecutionRequest, artifact_dir: Path,
             relay: EgressRelay | None, watched: list[Any]) -> ExecutionResult:
    """`watched` receives the network watch's entries from the runner's report (raw)."""
    stream = prepared.stream
    stream.deadline = time.monotonic() + STARTUP_TIMEOUT_S
    nonce = secrets.token_hex(16)
    try:
        stream.send(encode_request(request, deadline_s=request.timeout_s, nonce=nonce))
        read_started(stream)
    except (DeadlineExceeded, StreamClosed, ProtocolViolation, OSError) as exc:
        said = bytes(stream.stderr[-500:]).decode(errors="replace")
        if NO_FILTER in said:
            raise SandboxUnavailable(
                f"the sandbox cannot filter the script's system calls: {said.strip()}",
                hint="run on a kernel and container runtime with seccomp filters (every "
                "supported Docker and gVisor has them); scripts never run unfiltered",
            ) from exc
        raise SandboxError(
            f"the sandbox did not start the script ({type(exc).__name__}: {exc}); "
            f"runner said: {bytes(stream.stderr[-500:]).decode(errors='replace') or 'nothing'}",
            hint="rebuild the image with `selfcorrect sandbox build --force`",
        ) from exc
    started = time.monotonic()
    stream.deadline = started + request.timeout_s + KILL_GRACE_S
    try:
        report = read_result(stream, nonce, relay.on_frame if relay is not None else None)
        if relay is not None:
            relay.close()  # the script is gone: end its connections before the artifacts
    except DeadlineExceeded:
        lifecycle.kill(prepared)
        return _maybe_warm(prepared, request, _timed_out(request))
    except StreamClosed:
        return _maybe_warm(prepared, request, _runner_died(prepared, request, started))
    except (ProtocolViolation, OSError) as exc:
        lifecycle.kill(prepared)
        return _broken(request, started, f"the runner's report was unreadable: {exc}")
    direct = report.get("direct")
    watched.extend(direct if isinstance(direct, list) else [])
    stream.deadline = time.monotonic() + ARTIFACT_TIMEOUT_S
    records, note = _artifacts(prepared, request, artifact_dir, report)
    return _from_report(prepared, request, report, records, note)


def _artifacts(
    prepared: Prepared, request: ExecutionRequest, artifact_dir: Path, report: dict[str, Any]
) -> tuple[list[ArtifactRecord], str | None]:
    artifact_dir.mkdir(parents=True, exist_ok=True)
    try:
        records, note = extract_artifacts(prepared.stream, artifact_dir, request.caps)
    except DeadlineExceeded:
        records, note = [], "artifacts did not arrive in time"
    rejected = [
        ArtifactRecord(path=str(item["path"])[:300], size=_int_or_none(item.get("size")) or 0,
                       rejected=str(item.get("reason", "rejected"))[:200])
        for item in report.get("rejected", [])[:MAX_REJECTED_LISTED]
        if isinstance(item, dict) and "path" in item
    ]
    unlisted = _int_or_none(report.get("unlisted")) or 0
    if unlisted:
        more = f"{unlisted} more files in the work dir were not examined or listed"
        note = f"{note}; {more}" if note else more
    return records + rejected, note


def _from_report(
    prepared: Prepared,
    request: ExecutionRequest,
    report: dict[str, Any],
    records: list[ArtifactRecord],
    note: str | None,
) -> ExecutionResult:
    signal = _int_or_none(report.get("signal"))
    oom_kills = _int_or_none(report.get("oom_kills"))
    oom = bool(oom_kills)
    if signal == SIGKILL and oom_kills is None:
        # No cgroup counter inside (gVisor): ask the engine.
        oom = lifecycle.oom_killed(prepared)
    return ExecutionResult(
        exit_code=_int_or_none(report.get("exit_code")),
        signal=signal,
        timed_out=bool(report.get("inner_timeout")),
        oom_killed=oom,
        duration_ms=_int_or_none(report.get("duration_ms")) or 0,
        stdout=_capture(report.get("stdout")),
        stderr=_capture(report.get("stderr")),
        artifacts=records,
        runtime=request.runtime,
        artifact_note=note,
        unchanged_inputs=_names(report.get("unchanged_inputs")),
        replaced_inputs=_names(report.get("replaced_inputs")),
        start="warm" if report.get("start") == "warm" else "cold",
        start_note=_text_or_none(report.get("start_note")),
        preloaded=_names(report.get("preloaded")),
        warm_rss_kb=_int_or_none(report.get("warm_rss_kb")),
    )


def _maybe_warm(prepared: Prepared, request: ExecutionRequest, result: ExecutionResult
                ) -> ExecutionResult:
    """A result the runner did not report (it died, or was killed): which start the script
    had is unknown, but the modules its container preloaded are, so the client can tell
    whether a cold start must decide instead (gVisor ends the whole sandbox on OOM)."""
    if not request.warm or not prepared.preload:  # None or () : nothing preloaded
        return result
    return result.model_copy(update={"preloaded": list(prepared.preload)})


def _timed_out(request: ExecutionRequest) -> ExecutionResult:
    return ExecutionResult(
        timed_out=True,
        signal=SIGKILL,
        duration_ms=int(request.timeout_s * 1000),
        runtime=request.runtime,
        sandbox_note="the container was killed from outside after the time limit; "
        "its output was lost with it",
    )


def _runner_died(prepared: Prepared, request: ExecutionRequest, started: float) -> ExecutionResult:
    state = lifecycle.container_state(prepared)
    oom = bool(state.get("OOMKilled"))
    what = "ran out of memory" if oom else f"exited with status {state.get('ExitCode', '?')}"
    return ExecutionResult(
        signal=SIGKILL if oom else None,
        oom_killed=oom,
        duration_ms=int((time.monotonic() - started) * 1000),
        runtime=request.runtime,
        stderr=StreamCapture(text=bytes(prepared.stream.stderr).decode(errors="replace")),
        sandbox_note=f"the sandbox's runner stopped before reporting: the container {what} "
        "(the script may have killed it)",
    )


def _broken(request: ExecutionRequest, started: float, note: str) -> ExecutionResult:
    return ExecutionResult(
        duration_ms=int((time.monotonic() - started) * 1000),
        runtime=request.runtime,
        sandbox_note=note,
    )


def _capture(raw: Any) -> StreamCapture:
    if not isinstance(raw, dict):
        return StreamCapture()
    return StreamCapture(
        text=str(raw.get("text", ""))[: 512 * 1024],
        total_bytes=_int_or_none(raw.get("total_bytes")) or 0,
        truncated=bool(raw.get("truncated")),
    )


def _names(raw: Any) -> list[str]:
    if not isinstance(raw, list):
        return []
    return [str(name)[:300] for name in raw if isinstance(name, str)][:MAX_REJECTED_LISTED]


def _text_or_none(value: Any) -> str | None:
    return value[:300] if isinstance(value, str) else None


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
