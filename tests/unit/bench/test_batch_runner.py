"""sandbox/runner.py's batch mode, in this process: what it refuses before anything runs,
and its second syscall filter. (tests/integration/test_bench_humaneval.py runs it for real.)"""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import exported

RUNNER = Path(__file__).parents[3] / "sandbox" / "runner.py"


@pytest.fixture(scope="module")
def runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("selfcorrect_runner_batch_test", RUNNER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_single_execution_is_never_run_as_root(runner: ModuleType,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner.os, "getuid", lambda: 0)
    with pytest.raises(SystemExit, match="a single execution never runs as root"):
        runner._batch_main({"argv": ["python3", "x.py"]}, io.BytesIO(), io.BytesIO())


def test_a_batch_needs_the_batch_container(runner: ModuleType,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner.os, "getuid", lambda: 10001)
    with pytest.raises(SystemExit, match="batch mode needs its own container"):
        runner._batch_main({"batch": {"count": 1, "uid_base": 20000, "nonce": "n"}},
                           io.BytesIO(), io.BytesIO())


@pytest.mark.parametrize(("base", "count"), [(0, 1), (10001, 1), (59999, 2), (20000, 0)])
def test_uids_outside_the_baked_range_are_refused(runner: ModuleType,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  base: int, count: int) -> None:
    monkeypatch.setattr(runner.os, "getuid", lambda: 0)
    with pytest.raises(SystemExit, match="outside"):
        runner._batch_main({"batch": {"count": count, "uid_base": base, "nonce": "n"}},
                           io.BytesIO(), io.BytesIO())


def test_the_batch_filter_builds_for_both_arches(runner: ModuleType,
                                                 seccomp: ModuleType) -> None:
    program = exported(runner.batch_syscall_filter(seccomp))
    assert len(program) % 8 == 0 and 8 < len(program) // 8 < 40
    assert runner.BATCH_UID_MIN > 10001  # never the single execution's uid


def test_the_client_and_the_runner_agree_on_the_uid_range(runner: ModuleType) -> None:
    from selfcorrect_action.sandbox import batch

    assert (batch.BATCH_UID_MIN, batch.BATCH_UID_MAX) == (runner.BATCH_UID_MIN,
                                                          runner.BATCH_UID_MAX)
    bases = {batch.next_uid_base() for _ in range(5)}
    assert len(bases) == 5
    assert all(b >= runner.BATCH_UID_MIN and b + batch.MAX_BATCH - 1 <= runner.BATCH_UID_MAX
               for b in bases)
