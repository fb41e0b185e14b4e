"""The example workflows upload the attempt viewer (issue 22): a Docker action cannot upload
artifacts, so it writes each run's page into the workspace and names it in its
`viewer-path` output, and a later step of the same job uploads it with
actions/upload-artifact (pinned, as test_action_pins.py holds every `uses:`). Every job
that runs tasks has such a step, run whether the action passed or not (a failed run's page
is the one worth looking at), uploading the `viewer-path` output of the action's step or the
runs folder the pages are written in. The rule is also run over workflows that break it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from selfcorrect_action.github import events
from selfcorrect_action.report.run_json import RUNS_DIR
from tests.shipped_workflows import PLACEHOLDER_ACTION, ROOT, label

EXAMPLES = sorted((ROOT / "examples/workflows").glob("*.y*ml"))
UPLOAD = "actions/upload-artifact@"
# The events on which the action runs tasks (on a schedule: the update's regenerations); on
# pull_request it only validates specs and re-verifies scripts.
RUNNING_EVENTS = frozenset({"issues", "issue_comment", "workflow_dispatch", "schedule"})


def _events(workflow: dict[str, Any]) -> set[str]:
    on = workflow.get("on")
    return {on} if isinstance(on, str) else set(on or ())


def _runs_tasks(step: dict[str, Any]) -> bool:
    """A step of the action that runs tasks: any mode but publish (which applies plans)."""
    mode = str((step.get("with") or {}).get("mode", "run"))
    return str(step.get("uses", "")).startswith(f"{PLACEHOLDER_ACTION}@") and mode != "publish"


def _uploads_pages(step: dict[str, Any], action_id: str | None) -> bool:
    if not str(step.get("uses", "")).startswith(UPLOAD) or "always()" not in str(step.get("if")):
        return False
    path = str((step.get("with") or {}).get("path", ""))
    named = action_id is not None and f"steps.{action_id}.outputs.viewer-path" in path
    return named or any(line.strip().rstrip("/") == RUNS_DIR for line in path.splitlines())


def viewer_problems(text: str, where: str) -> list[str]:
    return workflow_viewer_problems(YAML(typ="safe").load(text), where)


def workflow_viewer_problems(workflow: dict[str, Any], where: str) -> list[str]:
    """Each job whose action step runs tasks uploads the pages after that step."""
    if not _events(workflow) & RUNNING_EVENTS:
        return []
    problems = []
    for job_id, job in (workflow.get("jobs") or {}).items():
        steps = job.get("steps") or []
        for index, step in enumerate(steps):
            if not _runs_tasks(step):
                continue
            if not any(_uploads_pages(later, step.get("id")) for later in steps[index + 1:]):
                problems.append(
                    f"{where}: job {job_id}: no step after the action's uploads its attempt "
                    f"viewer: add `- uses: {UPLOAD}<pinned commit>` with `if: always() && "
                    f"steps.<the action's id>.outputs.viewer-path != ''` and `path: ${{{{ "
                    f"steps.<the action's id>.outputs.viewer-path }}}}` (or `path: "
                    f"{RUNS_DIR}/`, the folder the pages are in)")
    return problems


def test_the_running_events_are_the_ones_the_action_handles_besides_validation() -> None:
    assert RUNNING_EVENTS | {"pull_request", "push"} == set(events._HANDLERS)


def test_the_examples_are_found_and_most_run_tasks() -> None:
    running = [path.name for path in EXAMPLES
               if _events(YAML(typ="safe").load(path.read_text(encoding="utf-8")))
               & RUNNING_EVENTS]
    assert {"selfcorrect-issues.yml", "selfcorrect-dispatch.yml", "selfcorrect-matrix.yml",
            "selfcorrect-split.yml", "selfcorrect-fix.yml",
            "selfcorrect-autoupdate.yml"} <= set(running)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda path: label(path))
def test_an_example_workflow_uploads_the_attempt_viewer(path: Path) -> None:
    assert viewer_problems(path.read_text(encoding="utf-8"), label(path)) == []


# The workflows that run one task a job upload its page alone (docs/viewer.md): unzipped,
# an artifact of its own that opens from the run's page; dispatch (several specs in one
# job) and fix keep theirs in the runs folder's artifact.
ALONE = ("selfcorrect-issues.yml", "selfcorrect-matrix.yml", "selfcorrect-split.yml")


@pytest.mark.parametrize("name", ALONE)
def test_a_one_task_example_uploads_the_viewer_path_output_alone(name: str) -> None:
    workflow = YAML(typ="safe").load((ROOT / "examples/workflows" / name)
                                     .read_text(encoding="utf-8"))
    found = []
    for job in workflow["jobs"].values():
        steps = job.get("steps") or []
        for index, step in enumerate(steps):
            if not _runs_tasks(step):
                continue
            output = f"steps.{step.get('id')}.outputs.viewer-path"
            found += [later for later in steps[index + 1:]
                      if str(later.get("uses", "")).startswith(UPLOAD)
                      and (later.get("with") or {}).get("path") == f"${{{{ {output} }}}}"]
            assert step.get("id") is not None, "the action's step needs an id for its output"
    (upload,) = found
    assert upload["if"] == f"always() && {output} != ''"  # a page even when the run failed
    assert upload["with"]["archive"] is False


@pytest.mark.parametrize("path", [path for path in EXAMPLES if "validate" not in path.name],
                         ids=lambda path: label(path))
def test_an_example_without_its_upload_steps_is_caught(path: Path) -> None:
    workflow = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    for job in workflow["jobs"].values():
        job["steps"] = [step for step in job.get("steps") or []
                        if not str(step.get("uses", "")).startswith(UPLOAD)]
    assert workflow_viewer_problems(workflow, label(path)) != []


ACTION = "      - uses: OWNER/selfcorrect@v0.1.0\n        id: sc\n"
PIN = "bbbca2ddaa5d8feaa63e36b76fdaad77386f024f  # v7.0.0"


def _upload(condition: str = "always() && steps.sc.outputs.viewer-path != ''",
            path: str = "${{ steps.sc.outputs.viewer-path }}") -> str:
    return (f"      - uses: {UPLOAD}{PIN}\n        if: {condition}\n        with:\n"
            f"          path: {path}\n          archive: false\n")


def _workflow(steps: str, on: str = "workflow_dispatch") -> str:
    return f"on: {on}\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n{steps}"


@pytest.mark.parametrize("steps", [
    ACTION + _upload(),
    ACTION + _upload(condition="always()", path=f"{RUNS_DIR}/"),
], ids=["viewer-path", "runs-folder"])
def test_an_upload_of_the_pages_after_the_action_is_enough(steps: str) -> None:
    assert viewer_problems(_workflow(steps), "w.yml") == []


@pytest.mark.parametrize("steps", [
    ACTION,
    _upload() + ACTION,
    ACTION + _upload(condition="steps.sc.outputs.viewer-path != ''"),
    ACTION + _upload(path="${{ steps.other.outputs.viewer-path }}"),
    ACTION + _upload(condition="always()", path="out/"),
], ids=["none", "before-the-action", "not-always", "another-steps-output", "another-folder"])
def test_a_job_that_does_not_upload_its_pages_is_named(steps: str) -> None:
    (problem,) = viewer_problems(_workflow(steps), "w.yml")
    assert problem.startswith("w.yml: job a: no step after the action's uploads its attempt "
                              "viewer")


@pytest.mark.parametrize(("steps", "on"), [
    (ACTION, "pull_request"),  # validation: no run, no page
    ("      - uses: OWNER/selfcorrect@v0.1.0\n        with:\n          mode: publish\n",
     "workflow_dispatch"),
], ids=["validate", "publish"])
def test_a_job_that_runs_no_task_needs_no_upload(steps: str, on: str) -> None:
    assert viewer_problems(_workflow(steps, on), "w.yml") == []
