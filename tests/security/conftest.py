from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.choices import Runtime
from selfcorrect_action.sandbox.models import (
    ExecutionRequest,
    ExecutionResult,
    InputFile,
    Limits,
)

RunScript = Callable[..., ExecutionResult]


@pytest.fixture
def run_script(sandbox, runtime: Runtime, tmp_path: Path) -> RunScript:
    """Run a snippet as /work/attack.py under the parametrised runtime."""
    counter = iter(range(1000))

    def run(code: str, *, timeout_s: float = 10, **limits: Any) -> ExecutionResult:
        request = ExecutionRequest(
            argv=["python3", "attack.py"],
            files=[InputFile(path="attack.py", data=textwrap.dedent(code).encode())],
            timeout_s=timeout_s,
            limits=Limits(**limits),
            runtime=runtime,
        )
        return sandbox.run(request, tmp_path / f"artifacts-{next(counter)}")

    return run
