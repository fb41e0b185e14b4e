from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from selfcorrect_action.sandbox.models import (
    ExecutionRequest,
    ExecutionResult,
    InputFile,
    Limits,
)

RunScript = Callable[..., ExecutionResult]


@pytest.fixture
def run_script(sandbox, runtime: str, tmp_path: Path) -> RunScript:  # type: ignore[no-untyped-def]
    """Run a snippet as /work/attack.py under the parametrised runtime."""
    counter = iter(range(1000))

    def run(code: str, *, timeout_s: float = 10, **limits: object) -> ExecutionResult:
        request = ExecutionRequest(
            argv=["python3", "attack.py"],
            files=[InputFile(path="attack.py", data=textwrap.dedent(code).encode())],
            timeout_s=timeout_s,
            limits=Limits(**limits),  # type: ignore[arg-type]
            runtime=runtime,  # type: ignore[arg-type]
        )
        return sandbox.run(request, tmp_path / f"artifacts-{next(counter)}")

    return run
