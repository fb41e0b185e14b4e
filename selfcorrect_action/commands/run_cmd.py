"""`selfcorrect run`: one task (a spec file, or a prompt with --prompt) through the whole
loop, with live progress on the terminal, writing the passing file, run.json and AUDIT.md to
the output folder.

The run itself is runs/pipeline.py's (the action's, the benchmark's, the API's too), ending in
a folder as the API's runs do (runs/publish.py); what is particular to this front end is the
terminal: progress lines and the final summary. A repair writes its changed files and their
diff there instead, or with `--apply` writes the files into the repository
(runs/repair_output.py); a script with `--apply` goes into the repository at its `output:`
path with its header, and its verification record beside (runs/script_apply.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from selfcorrect_action.api.results import RUN_JSON_KEYS, run_result
from selfcorrect_action.api.tasks import default_out_dir, load_task
from selfcorrect_action.loop.state import RunState
from selfcorrect_action.redact import redact, secrets_from_env
from selfcorrect_action.report.view import cautions
from selfcorrect_action.report.writer import ReportPaths
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.runs.pipeline import prepare
from selfcorrect_action.runs.publish import FolderRun, run_to_folder
from selfcorrect_action.runs.repair_output import RepairOutput
from selfcorrect_action.runs.session import RunEvents
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.templating import render, terminal_safe
from selfcorrect_action.writable_paths import writable_file, writable_folder

STEP_STYLES = {"plan": "cyan", "generate": "magenta", "execute": "blue", "evaluate": "yellow",
               "llm": "dim", "sandbox": "dim", "graph": "dim", "done": "bold"}


@dataclass(frozen=True)
class RunOptions:
    task: Path | str  # a spec file, or a prompt (--prompt)
    settings: RunSettings
    out_dir: Path | None = None
    as_json: bool = False
    overwrite_record: bool = False
    # Write into the repository: a repair's changed files, or a script with its header and
    # its verification record (runs/script_apply.py).
    apply: bool = False


def run_spec(options: RunOptions, *, environ: Mapping[str, str],
             cancel: CancelToken | None = None) -> int:
    secrets = secrets_from_env(environ)
    settings = options.settings
    loaded = load_task(options.task)
    prepared = prepare(loaded, settings, environ=environ, secrets=secrets)
    out_dir = writable_folder(options.out_dir or default_out_dir(loaded), "--out")
    if settings.record is not None:
        writable_file(settings.record, "--record", new=not options.overwrite_record,
                      new_hint="pass --overwrite-record to replace it, or name another file")
    console = Console(stderr=True, highlight=False)
    events = RunEvents(on_event=progress_printer(console, secrets))
    done = run_to_folder(prepared, out_dir, environ=environ, secrets=secrets, events=events,
                         cancel=cancel, apply=options.apply)
    if done.repair is not None:
        assert done.outcome.report_paths is not None
        print_repair_outcome(done.outcome.state, done.outcome.report_paths, done.repair,
                             as_json=options.as_json, secrets=secrets,
                             history=done.outcome.history)
    else:
        print_outcome(done, as_json=options.as_json, secrets=secrets)
    done.outcome.raise_if_interrupted()
    return done.exit_code


def print_repair_outcome(state: RunState, paths: ReportPaths, written: RepairOutput, *,
                         as_json: bool, secrets: list[str], history: Path | None = None
                         ) -> None:
    if as_json:
        usage = state.usage
        print(json.dumps({
            "status": state.status.value,
            "stop_reason": redact(state.stop_reason, secrets=secrets),
            "attempts": len(state.attempts), "tokens": usage.tokens,
            "cost_usd": round(usage.cost_usd, 6) if usage.cost_known else None,
            "replayed": state.replayed,
            "changed_files": [str(path) for path in written.files],
            "applied": written.applied, "not_applied": written.refused or None,
            "diff": str(written.diff) if written.diff else None,
            "run_json": str(paths.run_json), "audit": str(paths.audit_md),
            "stale": [str(path) for path in written.stale],
            "cautions": cautions(state),
            "run_id": state.run_id, "history": str(history) if history else None,
        }, indent=2))
        return
    print(redact(render("reports/repair_summary.txt.j2", state=state, written=written,
                        audit=paths.audit_md, run_json=paths.run_json,
                        cautions=cautions(state), history=history), secrets=secrets), end="")


def progress_printer(console: Console, secrets: list[str]) -> Callable[[str, str], None]:
    def show(step: str, message: str) -> None:
        # Messages quote script output and model answers: no secrets, no rich markup and no
        # terminal control characters.
        safe = escape(terminal_safe(redact(message, secrets=secrets)))
        # A CI log is not a terminal: no hard wrap at 80 columns there (issue 9).
        console.print(f"[{STEP_STYLES.get(step, 'white')}]{step:>8}[/] {safe}", markup=True,
                      soft_wrap=not console.is_terminal)
    return show


def print_outcome(done: FolderRun, *, as_json: bool, secrets: list[str]) -> None:
    if as_json:
        result = run_result(done, secrets=secrets)
        print(json.dumps(result.model_dump(mode="json", include=set(RUN_JSON_KEYS)), indent=2))
        return
    state, paths, written = done.outcome.state, done.outcome.report_paths, done.written
    assert paths is not None
    print(redact(render("reports/run_summary.txt.j2", state=state, output=written.script,
                        written=written,
                        audit=paths.audit_md, run_json=paths.run_json, stale=written.stale,
                        cautions=cautions(state), history=done.outcome.history),
                 secrets=secrets), end="")
