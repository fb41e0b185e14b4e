"""The last resort for an exception that is not one of ours (a bug): a short message on
stderr instead of a traceback in a log that is often public, and the redacted traceback in
a file for the bug report (pre-commit's error_handler is the model). In the action the file
goes beside the run folders in the workspace's .selfcorrect/runs/, which the example
workflows upload whatever the job's outcome; elsewhere into the user's cache."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from selfcorrect_action.fileio import write_atomically
from selfcorrect_action.redact import redact
from selfcorrect_action.templating import render

EXIT_INTERNAL = 3  # as for infrastructure: nothing the user's input did
# report/run_json.py's RUNS_DIR, spelled out: the last resort imports as little as it can (a
# test holds the two equal). A file, not a folder, so nothing takes it for a run's folder.
ACTION_CRASH_DIR = ".selfcorrect/runs"


def crash_log_path(environ: Mapping[str, str]) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    workspace = environ.get("GITHUB_WORKSPACE")
    if workspace:
        return Path(workspace) / ACTION_CRASH_DIR / f"crash-{stamp}.log"
    cache = environ.get("XDG_CACHE_HOME") or str(Path(environ.get("HOME", "~")) / ".cache")
    return Path(cache).expanduser() / "selfcorrect" / f"crash-{stamp}.log"


def report_crash(exc: BaseException, *, secrets: Sequence[str],
                 environ: Mapping[str, str]) -> int:
    text = redact("".join(traceback.format_exception(exc)), secrets=secrets)
    path: Path | None = crash_log_path(environ)
    try:
        assert path is not None
        write_atomically(path, text)
    except OSError:
        path = None
    print(render("reports/crash.txt.j2", kind=type(exc).__name__, path=path),
          file=sys.stderr, end="")
    return EXIT_INTERNAL
