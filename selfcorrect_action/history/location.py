"""Where the run history lives: a folder holding the database and the pages `view` writes.
Pure: the environment comes in as a mapping."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

ENV_HISTORY = "SELFCORRECT_HISTORY"
DATABASE = "history.sqlite3"
PAGES = "pages"


def default_history_dir(environ: Mapping[str, str]) -> Path | None:
    """$XDG_DATA_HOME/selfcorrect, else ~/.local/share/selfcorrect (the XDG Base Directory
    default); None where neither is set (a bare container), and no history is kept."""
    data = environ.get("XDG_DATA_HOME", "").strip()
    # The XDG spec: a relative XDG_DATA_HOME is invalid and must be ignored.
    if data and Path(data).is_absolute():
        return Path(data) / "selfcorrect"
    home = environ.get("HOME", "").strip()
    return Path(home) / ".local" / "share" / "selfcorrect" if home else None


def database(folder: Path) -> Path:
    return folder / DATABASE


def pages(folder: Path) -> Path:
    return folder / PAGES
