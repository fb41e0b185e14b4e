"""The runner's side of a Docker action, read once: the GITHUB_* variables and the event
file. Paths are the container's (/github/workspace, /github/file_commands/...)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from selfcorrect_action.errors import UsageError
from selfcorrect_action.fileio import FileProblem, read_bounded

# GitHub caps webhook payloads at 25 MB.
MAX_EVENT_BYTES = 25 * 1024 * 1024


class ActionContext(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    event_name: str
    event: dict[str, Any]
    repository: str
    api_url: str
    server_url: str
    workspace: Path
    run_id: str
    run_attempt: str
    output_file: Path | None
    summary_file: Path | None

    @property
    def run_key(self) -> str:
        """Names this workflow run's attempt: a re-run gets comments of its own."""
        return f"{self.run_id}.{self.run_attempt}"

    @property
    def run_url(self) -> str:
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"


def read_context(environ: Mapping[str, str]) -> ActionContext:
    def need(name: str) -> str:
        value = environ.get(name, "").strip()
        if not value:
            raise UsageError(f"{name} is not set: `selfcorrect action` runs inside a GitHub "
                             "Actions job", hint="use `selfcorrect run` outside Actions")
        return value

    return ActionContext(
        event_name=need("GITHUB_EVENT_NAME"),
        event=_event(Path(need("GITHUB_EVENT_PATH"))),
        repository=need("GITHUB_REPOSITORY"),
        # GitHub Enterprise Server (and the tests' stand-in) set these; github.com's defaults.
        api_url=environ.get("GITHUB_API_URL", "").strip() or "https://api.github.com",
        server_url=environ.get("GITHUB_SERVER_URL", "").strip() or "https://github.com",
        workspace=Path(environ.get("GITHUB_WORKSPACE", "").strip() or "."),
        run_id=environ.get("GITHUB_RUN_ID", "").strip() or "0",
        run_attempt=environ.get("GITHUB_RUN_ATTEMPT", "").strip() or "1",
        output_file=_optional_path(environ, "GITHUB_OUTPUT"),
        summary_file=_optional_path(environ, "GITHUB_STEP_SUMMARY"),
    )


def _event(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(read_bounded(path, MAX_EVENT_BYTES))
    except FileProblem as exc:
        raise UsageError(f"GITHUB_EVENT_PATH {path}: {exc.problem}", hint=exc.hint) from exc
    except ValueError as exc:
        raise UsageError(f"GITHUB_EVENT_PATH {path}: not a JSON event payload ({exc})") from exc
    if not isinstance(data, dict):
        raise UsageError(f"GITHUB_EVENT_PATH {path}: the payload is not a JSON object")
    return data


def _optional_path(environ: Mapping[str, str], name: str) -> Path | None:
    value = environ.get(name, "").strip()
    return Path(value) if value else None
