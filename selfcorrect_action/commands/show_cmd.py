"""`selfcorrect show RUN`: one run from the history (or a run.json), as text or JSON: its
figures, each attempt in a line, the files it kept, and where its reports are."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from selfcorrect_action.commands.history_cmd import entry_json
from selfcorrect_action.commands.run_ref import find_run
from selfcorrect_action.report.run_json import redacted_state
from selfcorrect_action.report.view import run_view
from selfcorrect_action.templating import render


def show_run(ref: str, folder: Path | None, *, as_json: bool, secrets: Sequence[str]) -> int:
    found = find_run(ref, folder, secrets=secrets)
    state = redacted_state(found.state, secrets=secrets)
    if as_json:
        print(json.dumps({"run": entry_json(found.entry), "in_history": found.in_history,
                          "kept": [{"attempt": a.attempt, "path": a.path, "kind": a.kind,
                                    "size": a.size, "note": a.note or None}
                                   for a in found.artifacts],
                          "state": state.model_dump(mode="json")}, indent=2))
        return 0
    kinds = Counter("image" if a.is_image else "table" for a in found.artifacts if a.data)
    print(render("reports/show.txt.j2", view=run_view(state), entry=found.entry,
                 in_history=found.in_history, kept=dict(kinds)), end="")
    return 0
