"""`selfcorrect run`: one task spec through the whole loop, with live progress on the
terminal, writing the passing file, run.json and AUDIT.md to the output folder.

The run itself is runs/pipeline.py's (the action's and the benchmark's too); what is
particular to this front end is the terminal (progress lines, the final summary) and the
output folder, where the passing script and its artifacts go beside the reports.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from selfcorrect_action.commands.paths import writable_file, writable_folder
from selfcorrect_action.errors import SpecError
from selfcorrect_action.loop.state import RunState
from selfcorrect_action.redact import redact, secrets_from_env
from selfcorrect_action.report.view import cautions
from selfcorrect_action.report.writer import ReportPaths
from selfcorrect_action.runs import pipeline
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.runs.pipeline import prepare
from selfcorrect_action.runs.publish import Output, left_by_earlier_run, write_output
from selfcorrect_action.runs.session import RunEvents
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.spec import LoadedSpec, file_problems, load_spec
from selfcorrect_action.templating import render, terminal_safe

STEP_STYLES = {"plan": "cyan", "generate": "magenta", "execute": "blue", "evaluate": "yellow",
               "llm": "dim", "sandbox": "dim", "done": "bold"}


@dataclass(frozen=True)
class RunOptions:
    spec_path: Path
    settings: RunSettings
    out_dir: Path | None = None
    as_json: bool = False
    overwrite_record: bool = False


def run_spec(options: RunOptions, *, environ: Mapping[str, str],
             cancel: CancelToken | None = None) -> int:
    secrets = secrets_from_env(environ)
    settings = options.settings
    loaded = load_checked(options.spec_path)
    prepared = prepare(loaded, settings, environ=environ, secrets=secrets)
    out_dir = writable_folder(options.out_dir or Path("out") / options.spec_path.stem, "--out")
    if settings.record is not None:
        writable_file(settings.record, "--record", new=not options.overwrite_record,
                      new_hint="pass --overwrite-record to replace it, or name another file")
    console = Console(stderr=True, highlight=False)
    events = RunEvents(on_event=progress_printer(console, secrets))
    outcome = pipeline.run(
        prepared, environ=environ, secrets=secrets, events=events, cancel=cancel,
        reports_dir=out_dir,
        publish=lambda done: write_output(done.state, loaded, out_dir, done.work_root))
    written = outcome.published or Output(None, stale=left_by_earlier_run(loaded, out_dir))
    assert outcome.report_paths is not None
    print_outcome(outcome.state, outcome.report_paths, written, as_json=options.as_json,
                  secrets=secrets, history=outcome.history)
    outcome.raise_if_interrupted()
    return outcome.exit_code


def load_checked(path: Path) -> LoadedSpec:
    loaded = load_spec(path)
    problems = file_problems(loaded)
    if problems:
        raise SpecError(problems)
    return loaded


def progress_printer(console: Console, secrets: list[str]) -> Callable[[str, str], None]:
    def show(step: str, message: str) -> None:
        # Messages quote script output and model answers: no secrets, no rich markup and no
        # terminal control characters.
        safe = escape(terminal_safe(redact(message, secrets=secrets)))
        # A CI log is not a terminal: no hard wrap at 80 columns there (issue 9).
        console.print(f"[{STEP_STYLES.get(step, 'white')}]{step:>8}[/] {safe}", markup=True,
                      soft_wrap=not console.is_terminal)
    return show


def print_outcome(state: RunState, paths: ReportPaths, written: Output, *, as_json: bool,
                  secrets: list[str], history: Path | None = None) -> None:
    usage = state.usage
    if as_json:
        print(json.dumps({
            "status": state.status.value,
            "stop_reason": redact(state.stop_reason, secrets=secrets),
            "attempts": len(state.attempts), "tokens": usage.tokens,
            "cost_usd": round(usage.cost_usd, 6) if usage.cost_known else None,
            "replayed": state.replayed,
            "output": str(written.script) if written.script else None,
            "run_json": str(paths.run_json), "audit": str(paths.audit_md),
            "stale": [str(path) for path in written.stale],
            "cautions": cautions(state),
            "run_id": state.run_id, "history": str(history) if history else None,
        }, indent=2))
        return
    print(redact(render("reports/run_summary.txt.j2", state=state, output=written.script,
                        audit=paths.audit_md, run_json=paths.run_json, stale=written.stale,
                        cautions=cautions(state), history=history),
                 secrets=secrets), end="")
