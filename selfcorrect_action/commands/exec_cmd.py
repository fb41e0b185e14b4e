"""`selfcorrect exec`: one script through the sandbox and evaluation layers 1-2
(api/exec.py), shown on the terminal or as the JSON object the API returns."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from selfcorrect_action import templating
from selfcorrect_action.api.exec import exec_script as run_in_sandbox
from selfcorrect_action.api.exec import with_timeout
from selfcorrect_action.choices import Runtime
from selfcorrect_action.contract import ExecutionContract, load_contract
from selfcorrect_action.writable_paths import writable_folder


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
    contract = with_timeout(
        load_contract(contract_path) if contract_path else ExecutionContract(), timeout_s)
    if artifacts_dir is not None:
        writable_folder(artifacts_dir, "--artifacts-dir", empty=True)
    result = run_in_sandbox(script, contract=contract, inputs=inputs, runtime=runtime,
                            artifacts_dir=artifacts_dir, environ=os.environ,
                            on_progress=_progress_to_stderr)
    report = result.model_dump(mode="json")
    if as_json:
        print(json.dumps(report, indent=2))
    else:
        print(templating.render("reports/exec_summary.txt.j2", report=report,
                                script=script.name, kept=artifacts_dir))
    return 0 if result.passed else 1


def _progress_to_stderr(line: str) -> None:
    print(line, file=sys.stderr)
