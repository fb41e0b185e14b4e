"""`selfcorrect config`: every run setting as a run would use it, and where it came from (a
flag, a SELFCORRECT_* variable, the default), so "why did it use that model?" has an answer
before anything is spent; then whether each model tier's key is set (never its value), so a
missing key is found here rather than by a run (issue 38, item 7)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass

from selfcorrect_action.runs.prepare import TierKey, chosen_tiers, tier_keys
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


def key_said(key: TierKey) -> str:
    """Whether the key is there, in words; the variables' names only."""
    if key.state == "set":
        return f"{' and '.join(key.variables)} set"
    if key.state == "missing":
        return f"{' or '.join(key.variables)} not set: a run would be refused"
    if key.state == "other_auth":
        return f"{' and '.join(key.variables)} not set; the provider may use {key.why}"
    return f"no key needed ({key.why})"


def show_config(resolved: Resolved, *, as_json: bool,
                environ: Mapping[str, str] | None = None) -> int:
    rows = config_rows(resolved)
    environ = os.environ if environ is None else environ
    settings = resolved.settings
    keys = tier_keys(chosen_tiers(settings), settings, environ)
    if as_json:
        print(json.dumps({"settings": {row.name: {"value": row.raw, "source": row.source}
                                       for row in rows},
                          "keys": [{"tiers": list(key.tiers), "model": key.model,
                                    "state": key.state, "variables": list(key.variables),
                                    "said": key_said(key)} for key in keys]},
                         indent=2, default=str))
    else:
        print(render("reports/config.txt.j2", rows=rows,
                     keys=[(", ".join(key.tiers), key.model, key_said(key)) for key in keys]),
              end="")
    return 0
