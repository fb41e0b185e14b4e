"""The run history as a static site: index.html (every run, with filters that work in the
browser and a full list without JavaScript) and one page per run under runs/, all relative
links, so any static host serves it as it is, GitHub Pages included (.nojekyll: no Jekyll
pass over the files).

The folder is the site's own: a folder that holds anything else is refused, and pages of runs
no longer in the history are removed when the site is written again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from selfcorrect_action.errors import UsageError
from selfcorrect_action.fileio import write_atomically
from selfcorrect_action.history.entry import HistoryEntry
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.redact import redact
from selfcorrect_action.report import text
from selfcorrect_action.viewer.html import INDEX_SCRIPT, render_html
from selfcorrect_action.viewer.repair import what_changed

INDEX_TEMPLATE = "viewer/index.html.j2"
MARKER = ".selfcorrect-site"
PAGES = "runs"
OURS = frozenset({"index.html", PAGES, MARKER, ".nojekyll"})
TASK_CHARS = 100
LINE_CHARS = 2_000  # of a prompt read for its first line: a run.json may hold any length
SPEC_SUFFIXES = (".yml", ".yaml")


@dataclass(frozen=True)
class SiteRow:
    entry: HistoryEntry
    page: str  # "runs/<name>.html", or "" when the run's page could not be made
    result_class: str
    # From the run's state when it could be read (site_row): what tells runs of one spec
    # apart (issue 38: nine identical rows), and what a repair changed.
    task: str = ""  # the task's first line
    made: str = ""  # the script, or the files a repair changed; else the entry's title

    @property
    def spec_name(self) -> str:
        """The spec file's name (its folder is in spec_folder), or the source as it is
        ("--prompt", "issue #12")."""
        path = PurePosixPath(self.entry.spec)
        return path.name if path.suffix in SPEC_SUFFIXES else self.entry.spec

    @property
    def spec_folder(self) -> str:
        path = PurePosixPath(self.entry.spec)
        return str(path.parent) if path.suffix in SPEC_SUFFIXES and path.parent.parts else ""

    @property
    def script(self) -> str:
        return self.made or self.entry.title


def site_row(entry: HistoryEntry, page: str, state: RunState | None, *,
             secrets: Sequence[str]) -> SiteRow:
    """The index's row of a run; `state`: its run state, None when it could not be read."""
    if state is None:
        return SiteRow(entry, page, result_class(entry.status))
    return SiteRow(entry, page, result_class(entry.status),
                   task=_first_line(redact(state.spec.prompt[:LINE_CHARS], secrets=secrets)),
                   made=_first_line(redact(what_changed(state), secrets=secrets)))


def _first_line(words: str) -> str:
    line = " ".join(next(iter(text.clean(words).strip().splitlines()), "").split())
    return line if len(line) <= TASK_CHARS else line[: TASK_CHARS - 1] + "…"


def site_index(rows: Sequence[SiteRow], *, title: str, left_out: str = "") -> str:
    statuses = [status.value for status in Status if any(r.entry.status == status.value
                                                         for r in rows)]
    return render_html(INDEX_TEMPLATE, script=INDEX_SCRIPT, rows=list(rows), title=title,
                       statuses=statuses, left_out=left_out)


def prepare_site(folder: Path) -> Path:
    """`folder` ready for a site: new, empty, or a site written here before."""
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"--site {folder}: exists and is not a folder",
                         hint="name a new folder, or one `view --site` wrote before")
    if folder.is_dir() and not (folder / MARKER).is_file():
        others = sorted(p.name for p in folder.iterdir() if p.name not in OURS)
        if others:
            raise UsageError(f"--site {folder}: holds files that are not a selfcorrect site "
                             f"({', '.join(others[:3])}{', ...' if len(others) > 3 else ''})",
                             hint="name a new or empty folder: the site's files would be "
                             "mixed with (or replace) what is there")
    (folder / PAGES).mkdir(parents=True, exist_ok=True)
    write_atomically(folder / MARKER, "A site written by `selfcorrect view --site`.\n")
    write_atomically(folder / ".nojekyll", "")
    return folder


def write_page(folder: Path, name: str, html: str) -> str:
    write_atomically(folder / PAGES / name, html)
    return f"{PAGES}/{name}"


def finish_site(folder: Path, rows: Sequence[SiteRow], html: str) -> Path:
    """The index, last (a reader never follows a link to a page not yet written), and the
    pages of runs that are no longer listed removed."""
    index = folder / "index.html"
    write_atomically(index, html)
    listed = {Path(row.page).name for row in rows if row.page}
    for page in (folder / PAGES).glob("*.html"):
        if page.name not in listed:
            page.unlink()
    return index


# Colours of the viewer's style sheet: a cancelled run did not fail (issue 34), so not red.
_RESULT_CLASSES = {Status.PASSED.value: "passed", Status.RUNNING.value: "pending",
                   Status.CANCELLED.value: "cancelled"}


def result_class(status: str) -> str:
    """A run's status as the style sheet's class: passed, pending, cancelled or failed."""
    return _RESULT_CLASSES.get(status, "failed")
