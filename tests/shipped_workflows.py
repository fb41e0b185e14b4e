"""The workflows selfcorrect ships and the rules they are held to: every third-party action
pinned to the commit in .github/action-pins.yml with its version in a comment, checkouts
that keep no credentials, permissions granted per job. Each check is a function from a
file's text to the problems it finds (empty when none), so the tests run it over the
shipped files and over broken ones alike. zizmor and actionlint run over the same files in
tests/integration/test_workflow_audit.py."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, StringConstraints, ValidationError
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[1]
PIN_TABLE = ROOT / ".github/action-pins.yml"
ZIZMOR_CONFIG = ROOT / ".github/zizmor.yml"
# Markdown whose ```yaml blocks show workflow steps: they are held to the same pins.
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))

# The stand-in for the user's copy of this action (README, "Use it in your repository"):
# the only `uses:` without a commit, at the version pyproject.toml says.
PLACEHOLDER_ACTION = "OWNER/selfcorrect"


def project_version() -> str:
    with (ROOT / "pyproject.toml").open("rb") as file:
        version: str = tomllib.load(file)["project"]["version"]
    return version


def workflow_files() -> list[Path]:
    """The project's own workflows and the examples users copy, .yml and .yaml alike."""
    return sorted(path for folder in (".github/workflows", "examples/workflows")
                  for pattern in ("*.yml", "*.yaml") for path in (ROOT / folder).glob(pattern))


def audited_files() -> list[Path]:
    """What zizmor audits: the workflows and the action's own definition."""
    return [*workflow_files(), ROOT / "action.yml"]


def label(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


Version = Annotated[str, StringConstraints(pattern=r"^v\d+\.\d+\.\d+$")]
Commit = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{40}$")]
ActionRepo = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9-]+/[A-Za-z0-9._-]+$")]


class Pin(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    version: Version
    commit: Commit
    # Taken ahead of the workflow that will use it: why, in words.
    pending: str | None = None


class PinTable(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    actions: dict[ActionRepo, Pin]


def load_pins(text: str, where: str = label(PIN_TABLE)) -> dict[str, Pin]:
    try:
        return PinTable.model_validate(YAML(typ="safe").load(text)).actions
    except ValidationError as exc:
        raise AssertionError(f"{where}: {exc}") from None


def shipped_pins() -> dict[str, Pin]:
    return load_pins(PIN_TABLE.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Uses:
    """One `uses:` line: where, what it names, and its trailing comment."""

    where: str
    reference: str
    comment: str | None

    @property
    def action(self) -> str:
        """The repository an action reference names: `actions/upload-artifact/merge@x` is
        `actions/upload-artifact`'s."""
        return "/".join(self.reference.split("@", 1)[0].split("/")[:2])

    @property
    def ref(self) -> str:
        return self.reference.split("@", 1)[1] if "@" in self.reference else ""


_USES = re.compile(
    r"""^\s*(?:-\s+)?uses:\s*(?P<q>["']?)(?P<reference>[^\s"'#]+)(?P=q)(?:\s+\#\s*(?P<comment>.*?))?\s*$""")


def uses_lines(text: str, where: str, first_line: int = 1) -> list[Uses]:
    """The `uses:` lines of a file (or of a block in one that starts at `first_line`)."""
    found = []
    for number, line in enumerate(text.splitlines(), start=first_line):
        if (match := _USES.match(line)) is not None:
            found.append(Uses(f"{where}:{number}", match["reference"], match["comment"]))
    return found


def _steps(workflow: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    jobs = workflow.get("jobs") if isinstance(workflow, dict) else None
    for job_id, job in (jobs or {}).items():
        for step in (job.get("steps") or []) if isinstance(job, dict) else []:
            if isinstance(step, dict):
                yield job_id, step


def _parsed_uses(workflow: Any) -> list[str]:
    """Every `uses:` as YAML reads it: steps' actions and jobs' reusable workflows."""
    jobs = workflow.get("jobs") if isinstance(workflow, dict) else None
    called = [str(job["uses"]) for job in (jobs or {}).values()
              if isinstance(job, dict) and "uses" in job]
    return called + [str(step["uses"]) for _, step in _steps(workflow) if "uses" in step]


def pin_problems(uses: list[Uses], pins: dict[str, Pin], version: str) -> list[str]:
    """Each `uses:` names an action of the table at its commit, `# <its version>` after it;
    or is the placeholder at the project's version; or a local action (`./...`)."""
    problems = []
    for use in uses:
        if use.reference.startswith("./"):
            continue
        if use.action == PLACEHOLDER_ACTION:
            if use.reference != f"{PLACEHOLDER_ACTION}@v{version}":
                problems.append(f"{use.where}: the placeholder for the user's copy of this "
                                f"action is {PLACEHOLDER_ACTION}@v{version} (pyproject.toml's "
                                f"version), not {use.reference}")
            continue
        pin = pins.get(use.action)
        if pin is None:
            problems.append(f"{use.where}: {use.reference} is not in {label(PIN_TABLE)}: add "
                            f"{use.action} there (version and commit, taken from its own "
                            f"repository) and pin to that commit")
            continue
        wanted = f"{use.reference.split('@', 1)[0]}@{pin.commit}"
        if use.reference != wanted or use.comment != pin.version:
            problems.append(f"{use.where}: write `uses: {wanted}  # {pin.version}` "
                            f"(as {label(PIN_TABLE)} pins it), not `uses: {use.reference}"
                            f"{'  # ' + use.comment if use.comment else ''}`")
    return problems


def workflow_problems(text: str, where: str, pins: dict[str, Pin], version: str) -> list[str]:
    """Everything this module holds a workflow to, over one workflow file's text."""
    workflow = YAML(typ="safe").load(text)
    uses = uses_lines(text, where)
    problems = pin_problems(uses, pins, version)
    unseen = sorted(set(_parsed_uses(workflow)) - {use.reference for use in uses})
    if unseen:
        problems.append(f"{where}: {', '.join(unseen)}: write each `uses:` on a line of its "
                        f"own (block style), where its pin and version comment can be checked")
    return (problems + checkout_problems(workflow, where) + permission_problems(workflow, where)
            + ignore_problems(text, where))


def checkout_problems(workflow: Any, where: str) -> list[str]:
    """actions/checkout would leave the job's token in the checkout's git config, for every
    later step (and any artifact of the folder) to read; nothing here pushes with git."""
    problems = []
    for job_id, step in _steps(workflow):
        if not str(step.get("uses", "")).startswith("actions/checkout@"):
            continue
        persist = (step.get("with") or {}).get("persist-credentials")
        if persist is not False and str(persist).lower() != "false":
            problems.append(f"{where}: job {job_id}: a checkout without "
                            f"`with: {{persist-credentials: false}}`")
    return problems


def permission_problems(workflow: Any, where: str) -> list[str]:
    """`permissions: {}` for the workflow, and each job's own scopes by name: a job added
    later starts with nothing instead of inheriting another job's writes."""
    problems = []
    if not isinstance(workflow, dict) or "permissions" not in workflow:
        problems.append(f"{where}: no workflow-level `permissions:` (the token then gets the "
                        f"repository's default, possibly write to everything): set "
                        f"`permissions: {{}}` and give each job what it needs")
    elif workflow["permissions"] != {}:
        problems.append(f"{where}: workflow-level permissions {workflow['permissions']!r}: "
                        f"move them to the jobs that need them and set `permissions: {{}}`")
    jobs = workflow.get("jobs") if isinstance(workflow, dict) else None
    for job_id, job in (jobs or {}).items():
        granted = job.get("permissions") if isinstance(job, dict) else None
        if granted is not None and not isinstance(granted, dict):
            problems.append(f"{where}: job {job_id}: permissions {granted!r}: name each scope "
                            f"the job needs (contents: read, ...)")
    return problems


def ignore_problems(text: str, where: str) -> list[str]:
    """A `# zizmor: ignore[...]` says why on the comment line right above it."""
    lines = text.splitlines()
    return [f"{where}:{number}: a zizmor ignore without its reason in a comment above it"
            for number, line in enumerate(lines, start=1)
            if "zizmor: ignore[" in line
            and (number < 2 or not lines[number - 2].lstrip().startswith("#"))]


def yaml_blocks(markdown: str) -> Iterator[tuple[int, str]]:
    """The ```yaml blocks of a Markdown file (indented ones too, as in a list item), each
    with the line its first line is on."""
    for match in re.finditer(r"^[ \t]*```ya?ml\n(.*?)^[ \t]*```", markdown,
                             re.MULTILINE | re.DOTALL):
        yield markdown.count("\n", 0, match.start(1)) + 1, match[1]
