"""Talking to the runner: annotations and notices on stdout (`::error file=…::message`),
step outputs appended to $GITHUB_OUTPUT, Markdown appended to $GITHUB_STEP_SUMMARY.

Everything written here is redacted first: job logs, outputs and summaries are often
public. Messages are escaped as the runner's command parser expects, so a spec problem that
quotes `::set-output` or a newline cannot forge a command of its own.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from selfcorrect_action.redact import redact


def _escape_data(text: str) -> str:
    escaped = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return escaped.replace("##[", "#\u2060#[")  # the runner's older command syntax


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, *, properties: Mapping[str, object] | None = None,
            secrets_: Sequence[str] = ()) -> str:
    """One workflow command line, e.g. `::error file=a.yml,line=3,col=5::bad value`."""
    props = ",".join(f"{key}={_escape_property(redact(str(value), secrets=secrets_))}"
                     for key, value in (properties or {}).items() if value not in (None, ""))
    head = f"::{name} {props}" if props else f"::{name}"
    return f"{head}::{_escape_data(redact(message, secrets=secrets_))}"


def annotate(level: str, message: str, *, file: str | None = None, line: int | None = None,
             col: int | None = None, title: str | None = None, secrets_: Sequence[str] = (),
             stream: TextIO | None = None) -> None:
    print(command(level, message, properties={"file": file, "line": line, "col": col,
                                               "title": title}, secrets_=secrets_),
          file=stream or sys.stdout, flush=True)


def set_outputs(path: Path | None, outputs: Mapping[str, str], *,
                secrets_: Sequence[str] = ()) -> None:
    """Append `name<<DELIM … DELIM` blocks: values may hold newlines (a list of PR URLs)."""
    if path is None:
        return
    with path.open("a", encoding="utf-8") as out:
        for name, value in outputs.items():
            text = redact(value, secrets=secrets_)
            delimiter = f"selfcorrect_{secrets.token_hex(8)}"
            out.write(f"{name}<<{delimiter}\n{text}\n{delimiter}\n")


def append_summary(path: Path | None, markdown: str, *, secrets_: Sequence[str] = ()) -> None:
    if path is None:
        return
    with path.open("a", encoding="utf-8") as out:
        out.write(redact(markdown, secrets=secrets_).rstrip("\n") + "\n\n")
