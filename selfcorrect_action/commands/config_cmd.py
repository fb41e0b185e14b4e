"""`selfcorrect config`: every run setting as a run would use it, and where it came from (a
flag, a SELFCORRECT_* variable, the default), so "why did it use that model?" has an answer
before anything is spent."""

from __future__ import annotations

import json
from dataclasses import dataclass

from selfcorrect_action.runs.settings import SETTINGS, Resolved
from selfcorrect_action.templating import render


@dataclass(frozen=True)
class Row:
    name: str
    value: str
    source: str
    raw: object


def config_rows(resolved: Resolved) -> list[Row]:
    rows = []
    for setting in SETTINGS:
        value = getattr(resolved.settings, setting.name)
        source = resolved.sources[setting.name]
        shown = str(value) if value is not None else f"(none: {setting.default})"
        rows.append(Row(setting.name, shown, source, value))
    return rows


def show_config(resolved: Resolved, *, as_json: bool) -> int:
    rows = config_rows(resolved)
    if as_json:
        print(json.dumps({"settings": {row.name: {"value": row.raw, "source": row.source}
                                       for row in rows}}, indent=2, default=str))
    else:
        print(render("reports/config.txt.j2", rows=rows), end="")
    return 0
