"""A pull request that rewords a prompt is stale against its base record: only a run (or the
judge) can say the script still does what is asked. Whether the pull request holds that
answer itself, as `/selfcorrect regenerate` commits it: a record of its own for the new
prompt and the script it commits, written by a run other than the base record's, whose
run.json the pull request carries too, and which passed with that very prompt.

The script is re-verified whatever this says; what is taken from the pull request is only
the claim that a run answered the new prompt, in its diff for reviewers to see (a pull
request's check only: a push has no reviewers). Pure but for reading the two files."""

from __future__ import annotations

from pathlib import Path

from selfcorrect_action.errors import SpecError
from selfcorrect_action.fileio import FileProblem, read_bounded
from selfcorrect_action.loop.state import Status
from selfcorrect_action.report.run_json import RUN_JSON, RUNS_DIR, RunJsonError, load_run_json
from selfcorrect_action.spec import LoadedSpec
from selfcorrect_action.templating import render
from selfcorrect_action.verified.changes import What, changes
from selfcorrect_action.verified.fingerprint import Fingerprint, prompt_digest
from selfcorrect_action.verified.record import (
    VerifiedRecord,
    load_record,
    lock_path,
)

MAX_RUN_JSON_BYTES = 64 * 1024 * 1024


def answered_here(root: Path, loaded: LoadedSpec, now: Fingerprint,
                  base: VerifiedRecord | None) -> str | None:
    """What the check says of the answer the pull request holds, or None when it holds
    none."""
    shown = lock_path(loaded.source)
    try:
        record = load_record(root / shown, shown=shown)
    except SpecError:
        return None
    if (record is None or record.spec != loaded.source
            or (base is not None and record.run_id == base.run_id)
            or any(change.what in (What.PROMPT, What.SCRIPT)
                   for change in changes(record, now, None))):
        return None
    run_json = root / RUNS_DIR / record.run_id / RUN_JSON
    try:
        state = load_run_json(read_bounded(run_json, MAX_RUN_JSON_BYTES).decode(
            "utf-8", errors="replace"))
    except (FileProblem, RunJsonError):
        return None
    if state.status is not Status.PASSED or prompt_digest(state.spec) != now.prompt_sha256:
        return None
    return render("reports/answered_here.txt.j2", run_id=record.run_id,
                  run_json=run_json.relative_to(root).as_posix()).strip()



