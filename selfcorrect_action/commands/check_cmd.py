"""`selfcorrect check [SPEC...]`: are the committed scripts still what their records say was
verified (issue 36)? No model call. Which specs: the ones named (a record under
.selfcorrect/lock/ stands for its spec), or every spec the action's default tasks glob
finds plus every record; with `touched`, the PATHs are the files a commit touches and the
specs are those whose spec, record, inputs, tests or script are among them (the pre-commit
hook). Progress on stderr; the summary table, or with --json the list of results, on
stdout. Exit codes: verified/check.py's exit_code. The runtime and a prebuilt sandbox
image are read as a run reads them: --runtime, else SELFCORRECT_RUNTIME and
SELFCORRECT_SANDBOX_IMAGE (runs/settings.py)."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from selfcorrect_action import templating
from selfcorrect_action.action.inputs import DEFAULT_TASKS
from selfcorrect_action.action.specs import spec_paths
from selfcorrect_action.choices import Runtime
from selfcorrect_action.errors import UsageError
from selfcorrect_action.runs import settings
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.spec_files import repo_root
from selfcorrect_action.verified.check import CheckStatus, exit_code
from selfcorrect_action.verified.checker import (
    all_records,
    check_specs,
    is_record_path,
    touched,
)
from selfcorrect_action.verified.results import CheckResult

if TYPE_CHECKING:
    from selfcorrect_action.loop.deps import Executor


def check(paths: list[Path], *, touched_files: bool = False, as_json: bool = False,
          strict: bool = False, update_lock: bool = False, runtime: Runtime | None = None,
          environ: Mapping[str, str] | None = None, cancel: CancelToken | None = None,
          cwd: Path | None = None) -> int:
    cwd = cwd or Path.cwd()
    root = repo_root(cwd) or cwd
    environ = os.environ if environ is None else environ
    run = settings.resolve(environ, settings.flag_values({"runtime": runtime})).settings
    specs, records = targets(root, paths, cwd=cwd, touched_files=touched_files)
    token = cancel or CancelToken()
    results = check_specs(root, specs, records=records, update_lock=update_lock,
                          runtime=run.runtime, sandbox_image=run.sandbox_image,
                          environ=environ, on_progress=_progress_to_stderr,
                          stoppable=lambda box: _stoppable(box, token))
    code = exit_code((result.status for result in results), strict=strict)
    if as_json:
        print(json.dumps([result.model_dump(mode="json") for result in results], indent=2))
    else:
        print(summary(results, update_lock=update_lock, strict=strict, code=code), end="")
    return code


def targets(root: Path, paths: list[Path], *, cwd: Path, touched_files: bool
            ) -> tuple[list[str], list[str]]:
    """(specs, records) to check, repository-relative."""
    if not paths:
        return spec_paths(root, DEFAULT_TASKS), all_records(root)
    named = [_in_repository(root, cwd, path, strict=not touched_files) for path in paths]
    relative = list(dict.fromkeys(path for path in named if path is not None))
    if touched_files:
        return touched(root, spec_paths(root, DEFAULT_TASKS), relative)
    return ([path for path in relative if not is_record_path(path)],
            [path for path in relative if is_record_path(path)])


def summary(results: list[CheckResult], *, update_lock: bool, strict: bool, code: int
            ) -> str:
    counts = Counter(result.status for result in results)
    ordered = [(status.value.replace("_", " "), counts[status]) for status in CheckStatus
               if counts[status]]
    return templating.render("reports/check_summary.txt.j2", results=results,
                             update_lock=update_lock, strict=strict, code=code,
                             counts=ordered, tasks=DEFAULT_TASKS,
                             no_engine=any(result.no_docker for result in results))


def _in_repository(root: Path, cwd: Path, path: Path, *, strict: bool) -> str | None:
    absolute = Path(os.path.abspath(cwd / path))
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        if not strict:
            return None  # a touched file outside the repository holds no spec of it
        raise UsageError(f"{path} is not inside the repository {root}",
                         hint="run selfcorrect check from the repository that holds the "
                         "spec") from None


def _stoppable(box: Sandbox, token: CancelToken) -> Executor:
    # Imported when a re-verification opens the sandbox: it brings the loop's modules,
    # which a check whose specs all match never needs (checker.py).
    from selfcorrect_action.runs.stoppable import StoppableExecutor

    return StoppableExecutor(box, token)


def _progress_to_stderr(line: str) -> None:
    print(templating.terminal_safe(line), file=sys.stderr)
