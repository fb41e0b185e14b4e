"""`selfcorrect view RUN`: write one run's page and open it in the browser (`--no-open` only
writes it); `selfcorrect view --site DIR`: the history as a static site to publish.

A site is for publishing: runs made for a private (or internal) repository are left out
unless --include-private says otherwise, and the warning comes before anything is written.
"""

from __future__ import annotations

import sys
import webbrowser
from collections.abc import Sequence
from pathlib import Path

from selfcorrect_action.commands.run_ref import FoundRun, find_run, need_history
from selfcorrect_action.errors import UsageError
from selfcorrect_action.fileio import write_atomically
from selfcorrect_action.history.entry import HistoryEntry
from selfcorrect_action.history.location import pages
from selfcorrect_action.history.store import HistoryStore, Query
from selfcorrect_action.report.run_json import load_run_json
from selfcorrect_action.templating import terminal_safe
from selfcorrect_action.viewer import site
from selfcorrect_action.viewer.page import page_name, render_page
from selfcorrect_action.writable_paths import writable_file

SITE_TITLE = "selfcorrect run history"


def view_run(ref: str, folder: Path | None, *, out: Path | None, open_page: bool,
             secrets: Sequence[str]) -> int:
    found = find_run(ref, folder, secrets=secrets)
    target = writable_file(out or _default_page(found, folder), "--out")
    write_atomically(target, render_page(found.state, found.artifacts, secrets=secrets,
                                         from_report=True))
    print(target)
    if open_page and not webbrowser.open(target.resolve().as_uri()):
        print(f"selfcorrect: no browser to open it with here: open {target} in one",
              file=sys.stderr)
    return 0


def _default_page(found: FoundRun, folder: Path | None) -> Path:
    if folder is None:
        raise UsageError("no run history is configured to keep the page in",
                         hint="pass --out FILE.html, or --history DIR")
    target = pages(folder) / page_name(found.state.run_id)
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


def view_site(folder: Path | None, site_dir: Path, query: Query, *, include_private: bool,
              secrets: Sequence[str]) -> int:
    with HistoryStore(need_history(folder), create=False) as store:
        entries = _publishable(store.entries(query), include_private=include_private)
        site.prepare_site(site_dir)
        rows = [_row(store, entry, site_dir, secrets) for entry in entries]
    index = site.finish_site(site_dir, rows, site.site_index(rows, title=SITE_TITLE))
    print(index)
    return 0


def _publishable(entries: list[HistoryEntry], *, include_private: bool) -> list[HistoryEntry]:
    private = [entry for entry in entries if entry.private]
    if not private:
        return entries
    repositories = ", ".join(sorted({entry.repository for entry in private}))
    runs = f"{len(private)} run{'s' * (len(private) != 1)}"
    if include_private:
        _warn(f"writing {runs} of private repositories ({repositories}) into the site: "
              "publish it only where everyone who can reach it may read those repositories")
        return entries
    _warn(f"leaving out {runs} of private repositories ({repositories}): a site is for "
          "publishing, and their code, prompts and outputs would be there for anyone who "
          "can reach it; pass --include-private to write them anyway")
    return [entry for entry in entries if not entry.private]


def _row(store: HistoryStore, entry: HistoryEntry, site_dir: Path,
         secrets: Sequence[str]) -> site.SiteRow:
    """The run's page written, and its row of the index (which reads the run's state too)."""
    try:
        state = load_run_json(store.run_json(entry.run_id))
    except UsageError as exc:
        _warn(f"run {entry.run_id}: no page: {exc.message}")
        return site.site_row(entry, "", None, secrets=secrets)
    html = render_page(state, store.artifacts(entry.run_id), secrets=secrets, from_report=True)
    page = site.write_page(site_dir, page_name(entry.run_id), html)
    return site.site_row(entry, page, state, secrets=secrets)


def _warn(message: str) -> None:
    print(f"selfcorrect: warning: {terminal_safe(message)}", file=sys.stderr)
