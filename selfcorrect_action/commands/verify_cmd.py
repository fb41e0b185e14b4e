"""`selfcorrect verify RUN|PATH`: a recorded verdict reproduced (issue 36, item 6). RUN|PATH
is a verification record (.selfcorrect/lock/<task>.json), a spec file (its record), a run
id of the history, or a run folder or run.json. The script runs again in the sandbox with
no model call (verified/rerun.py) and is compared with the record (verified/reproduce.py).

Exit 0 when the verdict is reproduced, the differences listed (a digest, the image, the
runtime, a test's outcome); 1 when it is not; 2 for a reference that names nothing to
verify. The runtime: --runtime, else the run's own (a run.json), else SELFCORRECT_RUNTIME.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from selfcorrect_action.choices import Runtime
from selfcorrect_action.commands.run_ref import find_run
from selfcorrect_action.commands.validate_cmd import SPEC_SUFFIXES
from selfcorrect_action.errors import UsageError
from selfcorrect_action.redact import redact, secrets_from_env
from selfcorrect_action.runs import settings
from selfcorrect_action.sandbox.egress.policy import secret_values
from selfcorrect_action.templating import render
from selfcorrect_action.verified import rerun as reruns
from selfcorrect_action.verified.reproduce import (
    Reproduction,
    judge_note,
    reproduce,
    verify_command,
)


def verify(ref: str, history: Path | None, *, runtime: Runtime | None, as_json: bool,
           environ: Mapping[str, str]) -> int:
    resolved = settings.resolve(environ, {}).settings
    subject = _subject(ref, history, runtime=runtime, fallback=resolved.runtime,
                       secrets=secrets_from_env(environ))
    # A credential's value is redacted wherever it is shown, whatever its variable's name.
    secrets = [*secrets_from_env(environ),
               *secret_values(subject.state.contract.network, environ)]

    def progress(line: str) -> None:
        print(redact(line, secrets=secrets), file=sys.stderr)

    result = reproduce(subject.recorded, reruns.rerun(
        subject, environ=environ, sandbox_image=resolved.sandbox_image, on_progress=progress))
    if as_json:
        print(redact(json.dumps(reproduction_json(result, ref), indent=2), secrets=secrets))
    else:
        print(redact(render("reports/verify.txt.j2", result=result,
                            differences=[str(d) for d in result.differences],
                            not_compared=result.not_compared,
                            judge=judge_note(result.recorded)), secrets=secrets), end="")
    return result.exit_code


def _subject(ref: str, history: Path | None, *, runtime: Runtime | None, fallback: Runtime,
             secrets: Sequence[str]) -> reruns.Subject:
    path = Path(ref)
    if not path.exists() and ("/" in ref or path.suffix in (*SPEC_SUFFIXES, ".json")):
        raise UsageError(f"{ref}: no such file or folder",
                         hint="name a verification record, a spec, a run folder or its "
                         "run.json; or a run id from `selfcorrect history`")
    if path.is_file() and path.suffix in SPEC_SUFFIXES:
        return reruns.from_spec(path, runtime=runtime or fallback)
    if path.is_file() and reruns.is_record(path):
        return reruns.from_record(path, runtime=runtime or fallback)
    found = find_run(ref, history, secrets=secrets)
    source = "the history" if found.in_history else ref
    return reruns.from_run(found.state, source, runtime=runtime,
                           root=reruns.run_root(found.state, Path.cwd()))


def reproduction_json(result: Reproduction, ref: str) -> dict[str, object]:
    verdict = result.verdict
    return {
        "reproduced": result.reproduced,
        "identical": result.reproduced and not result.differences,
        "recorded": {"source": result.recorded.source, "run_id": result.recorded.run_id,
                     "verdict": "passed"},
        "verdict": verdict.model_dump(mode="json") if verdict is not None else None,
        "tests": [test.model_dump(mode="json") for test in result.rerun.attempt.tests],
        "differences": [{"what": d.aspect.value, "path": d.path, "detail": d.detail,
                         "text": str(d)} for d in result.differences],
        "not_compared": list(result.not_compared),
        "judge_not_reproduced": judge_note(result.recorded) or None,
        "image": {"tag": result.rerun.image.tag,
                  "context_hash": result.rerun.image.context_hash,
                  "packages_digest": result.rerun.image.packages_digest},
        "runtime": result.rerun.runtime,
        "duration_ms": result.rerun.duration_ms,
        "command": verify_command(ref),
        "exit_code": result.exit_code,
    }
