"""Running the action's image the way GitHub's runner runs a Docker action (after
actions/runner's ContainerActionHandler): `docker run` with the workspace, home, workflow
and file-command folders mounted at /github/..., the Docker socket mounted, INPUT_* and
GITHUB_* set, `--workdir /github/workspace`. `--network host` stands in for the job network,
so the GitHub stand-in on 127.0.0.1 is reachable."""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_BLOCK = re.compile(r"^(?P<name>[^<\n]+)<<(?P<delim>\S+)\n(?P<value>.*?)\n(?P=delim)\n",
                    re.MULTILINE | re.DOTALL)


@dataclass
class ActionRun:
    returncode: int
    stdout: str
    stderr: str
    outputs: dict[str, str] = field(default_factory=dict)
    summary: str = ""

    @property
    def log(self) -> str:
        return self.stdout + self.stderr


def read_outputs(text: str) -> dict[str, str]:
    return {m.group("name"): m.group("value") for m in _BLOCK.finditer(text)}


@dataclass(frozen=True)
class Prepared:
    """A `docker run` command line for one event, and where its file commands land."""

    argv: list[str]
    outputs: Path
    summary: Path


def prepare(image: str, *, workspace: Path, scratch: Path, event_name: str,
            event: dict[str, Any], inputs: dict[str, str], repository: str, api_url: str,
            env: dict[str, str] | None = None) -> Prepared:
    home, workflow, commands = (scratch / name for name in ("home", "workflow",
                                                            "file_commands"))
    for folder in (home, workflow, commands):
        folder.mkdir(parents=True, exist_ok=True)
    (workflow / "event.json").write_text(json.dumps(event))
    output_name, summary_name = f"set_output_{uuid.uuid4()}", f"step_summary_{uuid.uuid4()}"
    (commands / output_name).write_text("")
    (commands / summary_name).write_text("")
    variables = {
        "HOME": "/github/home", "CI": "true", "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": event_name, "GITHUB_EVENT_PATH": "/github/workflow/event.json",
        "GITHUB_WORKSPACE": "/github/workspace", "GITHUB_REPOSITORY": repository,
        "GITHUB_API_URL": api_url, "GITHUB_SERVER_URL": "https://github.example",
        "GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_ACTOR": "octocat",
        "GITHUB_OUTPUT": f"/github/file_commands/{output_name}",
        "GITHUB_STEP_SUMMARY": f"/github/file_commands/{summary_name}",
        "RUNNER_TEMP": "/github/runner_temp",
        **{f"INPUT_{name.upper()}": value for name, value in inputs.items()},
        **(env or {}),
    }
    argv = ["docker", "run", "--rm", "--network", "host", "--workdir", "/github/workspace",
            "-v", f"{workspace}:/github/workspace", "-v", f"{home}:/github/home",
            "-v", f"{workflow}:/github/workflow", "-v", f"{commands}:/github/file_commands",
            "-v", "/var/run/docker.sock:/var/run/docker.sock"]
    for name, value in variables.items():
        argv += ["-e", f"{name}={value}"]
    return Prepared([*argv, image], commands / output_name, commands / summary_name)


def run_action(image: str, *, workspace: Path, scratch: Path, event_name: str,
               event: dict[str, Any], inputs: dict[str, str], repository: str, api_url: str,
               env: dict[str, str] | None = None, timeout_s: float = 600) -> ActionRun:
    prepared = prepare(image, workspace=workspace, scratch=scratch, event_name=event_name,
                       event=event, inputs=inputs, repository=repository, api_url=api_url,
                       env=env)
    done = subprocess.run(prepared.argv, capture_output=True, text=True, timeout=timeout_s)
    return ActionRun(done.returncode, done.stdout, done.stderr,
                     read_outputs(prepared.outputs.read_text()), prepared.summary.read_text())
