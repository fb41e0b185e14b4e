"""The run history's command line: `history` (with `import` and `prune`), `show` and `view`,
and the --history flag the run settings share. Parsing only, as in cli.py (which registers
these verbs): each verb hands off to one function in commands/<verb>_cmd.py."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfcorrect_action.choices import RUN_STATUSES
from selfcorrect_action.errors import UsageError
from selfcorrect_action.redact import secrets_from_env

if TYPE_CHECKING:  # generic only in typeshed: at run time the class is not subscriptable
    from selfcorrect_action.history.store import Query

    # Any: cli.py's parser class, a subclass the verbs are made with (parser_class).
    Subparsers = argparse._SubParsersAction[Any]


def add_history_verbs(sub: Subparsers, parser_class: type[argparse.ArgumentParser]) -> None:
    _add_history(sub, parser_class)
    _add_show(sub)
    _add_view(sub)


def add_history_folder(p: argparse.ArgumentParser, *, verb: bool = False) -> None:
    # A verb's own default would replace the value given before it (`history --history D
    # import X`): under a verb, an absent flag leaves the attribute alone.
    p.add_argument("--history", metavar="DIR", default=argparse.SUPPRESS if verb else None,
                   help="the run history's folder (default: SELFCORRECT_HISTORY, else "
                   "$XDG_DATA_HOME/selfcorrect or ~/.local/share/selfcorrect)")


def add_run_history_flags(p: argparse.ArgumentParser, *, what: str = "this run") -> None:
    """--history DIR and --no-history, for a command whose runs are recorded (`run`, `mcp`,
    `bench humaneval`): args.history and args.no_history, the settings `history` and
    `keep_history`."""
    add_history_folder(p)
    p.add_argument("--no-history", action="store_true",
                   help=f"do not record {what} in the run history")


def _add_history(sub: Subparsers, parser_class: type[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "history", help="list the runs in the run history (and import or prune them)",
        description="List the recorded runs, newest first: status, spec, attempts, tokens, "
        "cost, time and whether it was a replay. Every run of `selfcorrect run`, the action "
        "and the benchmark's model mode is recorded when it ends (see docs/viewer.md).",
    )
    add_history_folder(p)
    _add_filters(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_run_history)
    verbs = p.add_subparsers(dest="history_verb", title="verbs", metavar="VERB",
                             parser_class=parser_class)
    imported = verbs.add_parser(
        "import", help="load a repository's .selfcorrect/runs/*/run.json (the action's record)")
    imported.add_argument("source", type=Path, metavar="DIR",
                          help="a repository checkout, its .selfcorrect/runs folder, or a "
                          "`selfcorrect run` output folder")
    add_history_folder(imported, verb=True)
    imported.set_defaults(handler=_run_history_import)
    prune = verbs.add_parser("prune", help="forget the runs older than some days")
    prune.add_argument("--older-than", type=int, required=True, metavar="DAYS",
                       help="forget runs started more than DAYS days ago")
    add_history_folder(prune, verb=True)
    prune.set_defaults(handler=_run_history_prune)


def _add_filters(p: argparse.ArgumentParser) -> None:
    p.add_argument("--spec", metavar="TEXT", help="runs whose task spec contains TEXT")
    p.add_argument("--status", choices=list(RUN_STATUSES),
                   help="runs that ended so")
    p.add_argument("--since", metavar="DATE",
                   help="runs started on or after DATE (2026-01-31, or 2026-01-31T14:00; UTC)")


def _history_folder(args: argparse.Namespace) -> Path | None:
    from selfcorrect_action.runs.settings import history_folder

    return history_folder(os.environ, args.history)


def _query(args: argparse.Namespace) -> Query:
    from selfcorrect_action.commands.history_cmd import since_stamp
    from selfcorrect_action.history.store import Query

    return Query(spec=args.spec, status=args.status,
                 since_utc=since_stamp(args.since) if args.since else None)


def _run_history(args: argparse.Namespace) -> int:
    from selfcorrect_action.commands.history_cmd import list_runs

    return list_runs(_history_folder(args), _query(args), as_json=args.json)


def _run_history_import(args: argparse.Namespace) -> int:
    from selfcorrect_action.commands.history_cmd import import_runs

    return import_runs(_history_folder(args), args.source,
                       secrets=secrets_from_env(os.environ))


def _run_history_prune(args: argparse.Namespace) -> int:
    from selfcorrect_action.commands.history_cmd import prune_runs

    return prune_runs(_history_folder(args), args.older_than)


def _add_show(sub: Subparsers) -> None:
    p = sub.add_parser(
        "show", help="print one run of the history",
        description="Print one run: its figures, a line per attempt, the files it kept "
        "and where its reports are. RUN is a run id (or its first characters) from "
        "`selfcorrect history`, or a run.json (or the folder holding it).",
    )
    p.add_argument("run", metavar="RUN", help="a run id, or a path to a run.json")
    add_history_folder(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_run_show)


def _run_show(args: argparse.Namespace) -> int:
    from selfcorrect_action.commands.show_cmd import show_run

    return show_run(args.run, _history_folder(args), as_json=args.json,
                    secrets=secrets_from_env(os.environ))


def _add_view(sub: Subparsers) -> None:
    p = sub.add_parser(
        "view", help="open a run's page in the browser, or write the history as a site",
        description="Write RUN's page (one self-contained HTML file: every attempt, its "
        "code and diff, the pictures and tables it made, how each layer judged it) and open "
        "it; or, with --site DIR, write the whole history as a static site.",
    )
    p.add_argument("run", nargs="?", metavar="RUN",
                   help="a run id (or its first characters), or a path to a run.json")
    p.add_argument("--out", type=Path, metavar="FILE",
                   help="where the page goes (default: the history's pages/ folder)")
    p.add_argument("--no-open", dest="open_page", action="store_false",
                   help="only write the page (for CI and scripts)")
    p.add_argument("--site", type=Path, metavar="DIR",
                   help="write the history as a static site into DIR instead (index.html "
                   "with filters, and a page per run)")
    p.add_argument("--include-private", action="store_true",
                   help="--site: include the runs of private repositories")
    _add_filters(p)
    add_history_folder(p)
    p.set_defaults(handler=_run_view)


def _run_view(args: argparse.Namespace) -> int:
    from selfcorrect_action.commands import view_cmd

    if (args.run is None) == (args.site is None):
        raise UsageError("view takes a RUN or --site DIR (one of them)",
                         hint="`selfcorrect view 3fa2b1c9` or `selfcorrect view --site site/`")
    secrets = secrets_from_env(os.environ)
    if args.site is not None:
        return view_cmd.view_site(_history_folder(args), args.site, _query(args),
                                  include_private=args.include_private, secrets=secrets)
    return view_cmd.view_run(args.run, _history_folder(args), out=args.out,
                             open_page=args.open_page, secrets=secrets)
