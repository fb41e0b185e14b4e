from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.choices import Runtime
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.docker_engine import DockerEngine
from selfcorrect_action.sandbox.models import (
    ExecutionRequest,
    ExecutionResult,
    InputFile,
    Limits,
)
from selfcorrect_action.sandbox.preload import MIN_MEMORY_MB

RunScript = Callable[..., ExecutionResult]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every attack runs cold under runc and runsc, and warm under runc: what a warm start
    changes is Python's own start-up (sandbox/warm.py), the same code under either runtime,
    while what gVisor changes is the kernel below, which the cold runs cover. Warm under
    gVisor as well doubled the suite's slowest half (each warm run waits for its
    container's numpy import there) for no path of its own; tests/integration/
    test_warm_start.py runs warm starts under both runtimes. Deselected, so counted."""
    dropped = [item for item in items
               if (spec := getattr(item, "callspec", None)) is not None
               and spec.params.get("run_script") == "warm"
               and spec.params.get("runtime") == "runsc"]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        gone = set(dropped)
        items[:] = [item for item in items if item not in gone]


@pytest.fixture(params=["cold", "warm"])
def run_script(request: pytest.FixtureRequest, docker_engine: DockerEngine, sandbox_image: str,
               runtime: Runtime, tmp_path: Path) -> Iterator[RunScript]:
    """Run a snippet as /work/attack.py under the parametrised runtime, in a fresh
    interpreter (cold) or in one that imported numpy before the request came (warm,
    sandbox/warm.py): every attack must fail the same way both ways. A warm run waits for
    its pooled container's imports, and is asserted warm when the limits allow preloads."""
    counter = iter(range(1000))
    warm = request.param == "warm"
    # One container per snippet: a refill would only be started to be removed unused, its
    # imports taking the CPU the attack is timed against.
    with Sandbox(docker_engine, sandbox_image, pool_size=1 if warm else 0, warm=warm,
                 preload_set=("numpy",), refill="never") as box:

        def run(code: str, *, timeout_s: float = 10, **limits: Any) -> ExecutionResult:
            chosen = Limits(**limits)
            request = ExecutionRequest(
                argv=["python3", "attack.py"],
                files=[InputFile(path="attack.py", data=textwrap.dedent(code).encode())],
                timeout_s=timeout_s, limits=chosen, runtime=runtime, warm_wait_s=60,
            )
            if warm:
                box.warm(chosen, runtime)
                box.settle()
            result = box.run(request, tmp_path / f"artifacts-{next(counter)}")
            if warm and chosen.memory_mb >= MIN_MEMORY_MB:
                assert result.start == "warm" or result.sandbox_note or result.start_note, (
                    "the warm variant ran cold without saying why")
            return result

        yield run
        box.settle()
