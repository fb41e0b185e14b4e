"""Batch isolation: one hardened container runs many execution requests one after another,
each under a uid of its own (see "Batch mode" in sandbox/runner.py). The benchmark's way to
pay for one container per batch instead of one per candidate; the loop never uses it.

The container differs from a single execution's in three settings only: the runner starts as
root with CAP_SETUID and CAP_SETGID (and no other capability), so that it can run each item
under its own uid; /work is a sticky 1733 tmpfs in which each item makes its own 0700
folder; /tmp is root's alone (0700). Everything else (read-only root, no network, limits,
seccomp, no-new-privileges, the runner as PID 1) is the single execution's configuration.
A single execution's container is unchanged: uid 10001 with no capabilities, and its runner
refuses a batch, as a batch container's runner refuses a single execution.

What a batch does not isolate is listed in benchmarks/humaneval.md ("Batch isolation").
"""

from __future__ import annotations

import functools
import io
import itertools
import json
import random
import secrets
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from selfcorrect_action.sandbox.archive import extract_artifacts
from selfcorrect_action.sandbox.config import PoolKey, container_config, tmpfs_options
from selfcorrect_action.sandbox.engine_api import Engine
from selfcorrect_action.sandbox.host import ContainerHost
from selfcorrect_action.sandbox.lifecycle import Prepared
from selfcorrect_action.sandbox.models import (
    ArtifactRecord,
    ExecutionRequest,
    ExecutionResult,
    StreamCapture,
)
from selfcorrect_action.sandbox.wire import (
    PROTOCOL_VERSION,
    AttachStream,
    DeadlineExceeded,
    ProtocolViolation,
    StreamClosed,
    read_header,
    read_report,
)

# The uid range baked into sandbox/runner.py; a batch takes a block of it.
BATCH_UID_MIN = 20000
BATCH_UID_MAX = 59999
UID_BLOCK = 512
MAX_BATCH = UID_BLOCK
# The runner's start, plus the zygote importing and running pytest once.
BATCH_START_TIMEOUT_S = 90.0
ITEM_GRACE_S = 15.0
IDLE_TIMEOUT_S = 300.0
MAX_RESULT_JSON = 4 * 1024 * 1024
MAX_RESTARTS = 3
_EXPIRY_MARGIN_S = 120.0
OnResult = Callable[[int, ExecutionResult], None]
_blocks = itertools.count(random.randrange((BATCH_UID_MAX - BATCH_UID_MIN + 1) // UID_BLOCK))
_BLOCKS = (BATCH_UID_MAX - BATCH_UID_MIN + 1) // UID_BLOCK


def batch_container_config(key: PoolKey, *, session: str, expires_at: float,
                           idle_timeout_s: float, owner: str = "") -> dict[str, Any]:
    """The single execution's configuration with the three batch differences."""
    config = container_config(key, session=session, expires_at=expires_at,
                              idle_timeout_s=idle_timeout_s, owner=owner)
    limits = key.limits
    config["user"] = "0:0"
    config["cap_drop"] = ["ALL"]
    config["cap_add"] = ["SETUID", "SETGID"]
    config["tmpfs"] = {
        "/work": tmpfs_options(limits.work_mb, limits.work_inodes, uid=0, mode="1733"),
        "/tmp": tmpfs_options(limits.tmp_mb, limits.work_inodes, uid=0, mode="0700"),
    }
    return config


def next_uid_base() -> int:
    """A block of uids for one batch: concurrent batches (one per worker) use different
    uids, so that no per-uid limit (RLIMIT_NPROC counts a uid's processes host-wide) ties
    one container's items to another's."""
    return BATCH_UID_MIN + (next(_blocks) % _BLOCKS) * UID_BLOCK


class BatchSandbox(ContainerHost):
    """`run_batch(requests, artifact_dirs)`: the results in order. Requests of one call share
    a runtime and limits (the container's). `preload_pytest` (pytest options without the
    files) makes items whose argv is `python3 -I -m pytest ...` start from a warm pytest;
    with `pytest_when_needed` the container loads the plain runner's modules instead and
    pytest only after the first item that needed it (its tests' plain run did not pass),
    so that a batch whose plain runs all pass never imports it. `preload_modules` (name ->
    source, the same for every item, e.g. the tests' support module) are imported once,
    before the first item, instead of by every item."""

    thread_name_prefix = "batch"

    def __init__(self, engine: Engine, image: str, *, pool_size: int = 0, max_workers: int = 4,
                 preload_pytest: Sequence[str] | None = None, pytest_when_needed: bool = False,
                 preload_modules: dict[str, str] | None = None) -> None:
        super().__init__(engine, image, pool_size=pool_size, max_workers=max_workers)
        self._preload = list(preload_pytest) if preload_pytest is not None else None
        self._when_needed = pytest_when_needed and preload_pytest is not None
        self._modules = dict(preload_modules or {})

    def run_batch(self, requests: Sequence[ExecutionRequest], artifact_dirs: Sequence[Path],
                  *, on_result: OnResult | None = None) -> list[ExecutionResult]:
        """The results in order; `on_result(index, result)` hears each as it arrives."""
        heard = on_result or _ignore
        if len(requests) != len(artifact_dirs):
            raise ValueError("one artifact folder per request")
        if not requests:
            return []
        first = requests[0]
        if any((r.runtime, r.limits) != (first.runtime, first.limits) for r in requests):
            raise ValueError("the requests of one batch must share a runtime and limits")
        if any(r.network != "none" for r in requests):
            raise ValueError("a batch runs without network: run requests that need it one "
                             "by one (Sandbox.run), through the egress proxy")
        self._require_runtime(first.runtime)
        key = self.key(first.limits, first.runtime)
        results: list[ExecutionResult] = []
        restarts = 0
        while len(results) < len(requests):
            at = len(results)
            chunk = list(zip(requests[at:at + MAX_BATCH], artifact_dirs[at:at + MAX_BATCH],
                             strict=True))
            done, broke = self._one_container(key, chunk, functools.partial(_shifted, heard, at))
            results.extend(done)
            if broke is not None:
                restarts += 1
                if restarts > MAX_RESTARTS:
                    for request in requests[len(results):]:
                        results.append(_broken(request, broke, 0))
                        heard(len(results) - 1, results[-1])
        return results

    def _one_container(self, key: PoolKey, items: list[tuple[ExecutionRequest, Path]],
                       heard: OnResult) -> tuple[list[ExecutionResult], str | None]:
        """Results for a prefix of `items`, and why the container broke on the way (None
        when it did not): the item it broke on has a result saying so, the rest are for
        another container."""
        prepared = self._acquire(key)
        try:
            return _drive(prepared, items, self._preload, self._when_needed, self._modules,
                          heard)
        finally:
            self._teardown(prepared)

    def _make_pooled(self, key: PoolKey) -> Prepared:
        config = batch_container_config(
            key, session=self.session, owner=self.owner,
            expires_at=time.time() + IDLE_TIMEOUT_S + _EXPIRY_MARGIN_S,
            idle_timeout_s=IDLE_TIMEOUT_S)
        started = self._engine.start_container(config)
        return Prepared(key, self._engine, started.id, AttachStream(started.socket),
                        idle_timeout_s=IDLE_TIMEOUT_S)


def _drive(prepared: Prepared, items: list[tuple[ExecutionRequest, Path]],
           preload: list[str] | None, when_needed: bool, modules: dict[str, str],
           heard: OnResult) -> tuple[list[ExecutionResult], str | None]:
    stream = prepared.stream
    nonce = secrets.token_hex(16)
    header = {"nonce": nonce, "count": len(items), "uid_base": next_uid_base(),
              "preload": "" if preload is None else "plain" if when_needed else "pytest",
              "warm_args": preload or [], "modules": modules}
    body = json.dumps(header).encode()
    results: list[ExecutionResult] = []
    stream.deadline = time.monotonic() + BATCH_START_TIMEOUT_S
    try:
        stream.send(b"SELFCORRECT-BATCH %d %d\n" % (PROTOCOL_VERSION, len(body)) + body)
        line = stream.read_line(64)
        if line != b"STARTED":
            raise ProtocolViolation(f"expected STARTED, got {line[:64]!r}")
    except (DeadlineExceeded, StreamClosed, ProtocolViolation, OSError) as exc:
        said = bytes(stream.stderr[-500:]).decode(errors="replace").strip()
        note = (f"the batch container did not start ({type(exc).__name__}: {exc}); "
                f"runner said: {said or 'nothing'}")
        return [], note
    # Items ahead: the runner finds the next one waiting when it sends a result, and never
    # waits for the host's round trip. As many as fit in AHEAD_BYTES (at least one), so
    # that a send never blocks while the runner is blocked writing a result we have not
    # read yet.
    ahead = _Ahead(stream, items)
    for index, (request, artifact_dir) in enumerate(items):
        started = time.monotonic()
        stream.deadline = started + request.timeout_s + ITEM_GRACE_S
        try:
            ahead.fill(index)
            report, tar = _read_item_result(stream, nonce, index)
        except (DeadlineExceeded, StreamClosed, ProtocolViolation, OSError) as exc:
            said = bytes(stream.stderr[-500:]).decode(errors="replace").strip()
            note = (f"the batch container stopped during this item ({type(exc).__name__}: "
                    f"{exc}); runner said: {said or 'nothing'}")
            results.append(_broken(request, note, int((time.monotonic() - started) * 1000)))
            heard(index, results[-1])
            return results, note
        results.append(_result(request, report, tar, artifact_dir))
        heard(index, results[-1])
    return results, None


class _Ahead:
    """The items sent ahead of the one whose result is awaited."""

    def __init__(self, stream: AttachStream, items: list[tuple[ExecutionRequest, Path]]
                 ) -> None:
        self.stream, self.items = stream, items
        self.sizes: dict[int, int] = {}  # sent, result not read yet: index -> bytes
        self.next = 0
        self.failed: tuple[int, OSError] | None = None  # a send that failed, for its item

    def fill(self, index: int) -> None:
        """Before reading item `index`'s result: it and the items after it, while they fit.
        A failed send is raised for the item it was meant for."""
        if self.failed is not None and self.failed[0] <= index:
            raise self.failed[1]
        for done in [i for i in self.sizes if i <= index]:
            del self.sizes[done]  # read by the runner, or about to be
        while self.failed is None and self.next < len(self.items):
            body = _encode_item(self.items[self.next][0])
            if self.next > index and sum(self.sizes.values()) + len(body) > AHEAD_BYTES:
                break
            try:
                self.stream.send(body)
            except (DeadlineExceeded, OSError) as exc:
                error = exc if isinstance(exc, OSError) else OSError(f"sending it: {exc}")
                if self.next <= index:
                    raise error from None
                self.failed = (self.next, error)
                return
            if self.next > index:
                self.sizes[self.next] = len(body)
            self.next += 1


# What may wait in the container's stdin unread: well under a pipe's 64 KiB, so that the
# host's send returns while the runner is busy.
AHEAD_BYTES = 32 * 1024


def _encode_item(request: ExecutionRequest) -> bytes:
    limits = request.limits
    header = {
        "files": [{"path": f.path, "mode": f.mode, "size": len(f.data)} for f in request.files],
        "argv": request.argv, "env": request.env, "deadline_s": request.timeout_s,
        "caps": request.caps.model_dump(), "wanted": request.artifact_paths,
        "limits": {"memory_mb": limits.memory_mb, "pids": limits.pids,
                   "nofile": limits.nofile, "work_mb": limits.work_mb},
    }
    body = json.dumps(header).encode()
    payload = b"".join(f.data for f in request.files)
    return b"ITEM %d %d\n" % (len(body), len(payload)) + body + payload


def _read_item_result(stream: AttachStream, nonce: str, index: int
                      ) -> tuple[dict[str, Any], bytes]:
    item, size, tar_size = read_header(stream, b"ITEM-RESULT", nonce, fields=3, max_line=160)
    if item != index:
        raise ProtocolViolation(f"the result of item {item} came for item {index}")
    return read_report(stream, size, MAX_RESULT_JSON, "an item result"), \
        stream.read_exact(tar_size)


def _result(request: ExecutionRequest, report: dict[str, Any], tar: bytes,
            artifact_dir: Path) -> ExecutionResult:
    artifact_dir.mkdir(parents=True, exist_ok=True)
    records, note = extract_artifacts(io.BytesIO(tar), artifact_dir, request.caps)
    rejected = [
        ArtifactRecord(path=str(item["path"])[:300], size=_int(item.get("size")) or 0,
                       rejected=str(item.get("reason", "rejected"))[:200])
        for item in (report.get("rejected") or [])[:100]
        if isinstance(item, dict) and "path" in item
    ]
    unlisted = _int(report.get("unlisted")) or 0
    if unlisted:
        more = f"{unlisted} more files in the work dir were not examined or listed"
        note = f"{note}; {more}" if note else more
    broken = report.get("broken")
    unchanged = report.get("unchanged_inputs")
    return ExecutionResult(
        exit_code=_int(report.get("exit_code")),
        signal=_int(report.get("signal")),
        timed_out=bool(report.get("inner_timeout")),
        oom_killed=bool(_int(report.get("oom_kills"))),
        duration_ms=_int(report.get("duration_ms")) or 0,
        stdout=_capture(report.get("stdout")),
        stderr=_capture(report.get("stderr")),
        artifacts=records + rejected,
        runtime=request.runtime,
        sandbox_note=str(broken)[:500] if broken else None,
        artifact_note=note,
        unchanged_inputs=[str(name)[:300] for name in unchanged if isinstance(name, str)][:100]
        if isinstance(unchanged, list) else [],
    )


def _shifted(heard: OnResult, offset: int, index: int, result: ExecutionResult) -> None:
    heard(offset + index, result)


def _ignore(index: int, result: ExecutionResult) -> None:
    return None


def _broken(request: ExecutionRequest, note: str, duration_ms: int) -> ExecutionResult:
    return ExecutionResult(duration_ms=duration_ms, runtime=request.runtime, sandbox_note=note)


def _capture(raw: Any) -> StreamCapture:
    if not isinstance(raw, dict):
        return StreamCapture()
    return StreamCapture(text=str(raw.get("text", ""))[: 512 * 1024],
                         total_bytes=_int(raw.get("total_bytes")) or 0,
                         truncated=bool(raw.get("truncated")))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
