"""`selfcorrect run`: one task spec through the whole loop, with live progress on the
terminal, writing the passing file, run.json and AUDIT.md to the output folder.

The run itself is built from the reusable parts in runs/ (the action builds it the same way);
what is particular to this front end is the terminal: progress lines and the final summary.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from selfcorrect_action.commands.paths import writable_file, writable_folder
from selfcorrect_action.errors import Interrupted, SpecError
from selfcorrect_action.loop.state import RunState
from selfcorrect_action.redact import redact, secrets_from_env
from selfcorrect_action.report.view import cautions
from selfcorrect_action.runs.outcome import SIGNAL_EXIT_CODES, exit_code
from selfcorrect_action.runs.prepare import (
    check_models,
    check_replay_fits,
    initial_state,
    resolve_models,
)
from selfcorrect_action.runs.publish import Published, publish
from selfcorrect_action.runs.session import RunEvents, RunSession
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


def run_spec(options: RunOptions, *, environ: Mapping[str, str]) -> int:
    secrets = secrets_from_env(environ)
    settings = options.settings
    loaded = load_checked(options.spec_path)
    models = resolve_models(loaded, settings, environ)
    check_models(models, settings)
    if settings.replay is not None:
        check_replay_fits(settings.replay, loaded.spec.prompt, secrets=secrets)
    out_dir = writable_folder(options.out_dir or Path("out") / options.spec_path.stem, "--out")
    if settings.record is not None:
        writable_file(settings.record, "--record", new=not options.overwrite_record,
                      new_hint="pass --overwrite-record to replace it, or name another file")
    console = Console(stderr=True, highlight=False)
    events = RunEvents(on_event=progress_printer(console, secrets))
    with RunSession(loaded, models, settings, environ=environ, secrets=secrets,
                    events=events) as session:
        state = session.run(initial_state(loaded, models, settings))
        paths = publish(state, loaded, out_dir, session.work_root, secrets=secrets)
    print_outcome(state, paths, as_json=options.as_json, secrets=secrets)
    if state.interrupted_by:
        raise Interrupted(state.interrupted_by, SIGNAL_EXIT_CODES.get(state.interrupted_by, 130))
    return exit_code(state)


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


def print_outcome(state: RunState, paths: Published, *, as_json: bool,
                  secrets: list[str]) -> None:
    usage = state.usage
    if as_json:
        print(json.dumps({
            "status": state.status.value,
            "stop_reason": redact(state.stop_reason, secrets=secrets),
            "attempts": len(state.attempts), "tokens": usage.tokens,
            "cost_usd": round(usage.cost_usd, 6) if usage.cost_known else None,
            "replayed": state.replayed,
            "output": str(paths.output) if paths.output else None,
            "run_json": str(paths.run_json), "audit": str(paths.audit),
            "stale": [str(path) for path in paths.stale],
            "cautions": cautions(state),
        }, indent=2))
        return
    print(redact(render("reports/run_summary.txt.j2", state=state, output=paths.output,
                        audit=paths.audit, run_json=paths.run_json, stale=paths.stale,
                        cautions=cautions(state)),
                 secrets=secrets), end="")
