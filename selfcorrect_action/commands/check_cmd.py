"""`selfcorrect check [SPEC...]`: are the committed scripts still what their records say was
verified (issue 36)? No model call. Which specs: the ones named (a record under
.selfcorrect/lock/ stands for its spec), or every spec the action's default tasks glob
finds plus every record; with `touched`, the PATHs are the files a commit touches and the
specs are those whose spec, record, inputs, tests or script are among them (the pre-commit
hook). Progress on stderr; the summary table, or with --json the list of results, on
stdout. Exit codes: verified/check.py's exit_code. The runtime and a prebuilt sandbox
image are read as a run reads them: --runtime, else SELFCORRECT_RUNTIME and
SELFCORRECT_SANDBOX_IMAGE (runs/settings.py). With --judge, the stale specs' judge is asked
through the model a run would use (the model flags, --replay, SELFCORRECT_* variables:
runs/check_judge.py); without --judge those flags are refused, since nothing asks a model."""

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
from selfcorrect_action.redact import secrets_from_env
from selfcorrect_action.runs import settings
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.spec_files import repo_root
from selfcorrect_action.verified.check import CheckStatus, exit_code
from selfcorrect_action.verified.check_judge import JudgeModels, total, total_said
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
          judge: bool = False, model_flags: Mapping[str, str | None] | None = None,
          replay: Path | None = None, environ: Mapping[str, str] | None = None,
          cancel: CancelToken | None = None, cwd: Path | None = None) -> int:
    """`model_flags`: the model settings' flags as given (setting name -> text, None when
    not given: model, api_base, llm_timeout_s, llm_retries, structured_output)."""
    cwd = cwd or Path.cwd()
    root = repo_root(cwd) or cwd
    environ = os.environ if environ is None else environ
    run = check_settings(environ, runtime=runtime, model_flags=model_flags or {},
                         replay=replay, judge=judge)
    specs, records = targets(root, paths, cwd=cwd, touched_files=touched_files)
    token = cancel or CancelToken()
    results = check_specs(root, specs, records=records, update_lock=update_lock,
                          runtime=run.runtime, sandbox_image=run.sandbox_image,
                          environ=environ, on_progress=_progress_to_stderr,
                          stoppable=lambda box: _stoppable(box, token),
                          judges=_judges(run, environ, token) if judge else None)
    code = exit_code((result.status for result in results), strict=strict)
    if judge:
        _progress_to_stderr(total_said(total(results)))
    if as_json:
        print(json.dumps([result.model_dump(mode="json") for result in results], indent=2))
    else:
        print(summary(results, update_lock=update_lock, strict=strict, code=code,
                      judge=judge), end="")
    return code


def check_settings(environ: Mapping[str, str], *, runtime: Runtime | None,
                   model_flags: Mapping[str, str | None], replay: Path | None, judge: bool
                   ) -> settings.RunSettings:
    """The run settings a check uses, read as `selfcorrect run` reads them. A model flag
    without --judge is refused: the check would ask no model, whatever it names."""
    given = settings.flag_values({"runtime": runtime, **model_flags})
    named = [settings.SETTING[name].flag or name for name, item in given.items()
             if item is not None and name != "runtime"] + (["--replay"] if replay else [])
    if named and not judge:
        raise UsageError(f"{', '.join(named)}: only --judge asks a model, and it was not "
                         "given", hint="add --judge to ask the judge of the stale specs "
                         "(it costs tokens), or leave the model flags out")
    given["replay"] = settings.Given(replay, "--replay") if replay else None
    return settings.resolve(environ, given).settings


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


def summary(results: list[CheckResult], *, update_lock: bool, strict: bool, code: int,
            judge: bool = False) -> str:
    counts = Counter(result.status for result in results)
    ordered = [(status.value.replace("_", " "), counts[status]) for status in CheckStatus
               if counts[status]]
    return templating.render("reports/check_summary.txt.j2", results=results,
                             update_lock=update_lock, strict=strict, code=code,
                             counts=ordered, tasks=DEFAULT_TASKS,
                             no_engine=any(result.no_docker for result in results),
                             judge=judge, judge_total=total_said(total(results)))


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


def _judges(run: settings.RunSettings, environ: Mapping[str, str], token: CancelToken
            ) -> JudgeModels:
    # Imported for --judge only: the model client brings the loop's and litellm's modules.
    from selfcorrect_action.runs.check_judge import RunJudgeModels

    return RunJudgeModels(run, environ=environ, secrets=secrets_from_env(environ),
                          cancel=token, say=_progress_to_stderr)


def _stoppable(box: Sandbox, token: CancelToken) -> Executor:
    # Imported when a re-verification opens the sandbox: it brings the loop's modules,
    # which a check whose specs all match never needs (checker.py).
    from selfcorrect_action.runs.stoppable import StoppableExecutor

    return StoppableExecutor(box, token)


def _progress_to_stderr(line: str) -> None:
    print(templating.terminal_safe(line), file=sys.stderr)
