"""The scheduled update (issue 36, item 5), pre-commit.ci's autoupdate for generated code: on a
`schedule` event (examples/workflows/selfcorrect-autoupdate.yml), or a workflow_dispatch with
the `update` input, every generated script of the checked-out branch is re-verified against
the sandbox image as it is today (`selfcorrect check`: a newer image's library drift shows as
a changed image, then a re-verification), and **one** pull request on one branch
(`selfcorrect/autoupdate`) is opened, or updated on a later run, for what broke:

- `update: regenerate`: each script that fails or is stale is regenerated from its committed
  version (loop/given.py), and the passing ones are committed with their records and audit
  trails, one commit per update, each spec with its check run on it;
- `update: check` (the default on a schedule): no model is asked; the pull request's body
  lists what broke, on an empty commit that carries each broken spec's red check run.

Nothing broken: nothing is written. A record whose spec is gone, or a spec that no longer
validates, is listed for a person; neither is regenerated."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from selfcorrect_action.action import reporting
from selfcorrect_action.action.batch_run import BatchRun, publish_batch, run_members
from selfcorrect_action.action.env import ActionEnv
from selfcorrect_action.action.fix import workspace_head
from selfcorrect_action.action.pull_check import check_output
from selfcorrect_action.action.specs import replay_for, spec_paths
from selfcorrect_action.action.task import Task
from selfcorrect_action.action.workflow_commands import append_summary
from selfcorrect_action.action.writes.batch import batch_plan, planned_runs
from selfcorrect_action.action.writes.plan import PlannedCheckRun, PlannedRun
from selfcorrect_action.action.writes.update import UPDATE_ORIGIN, update_pull_request
from selfcorrect_action.errors import SpecError, UsageError
from selfcorrect_action.github.events import Scheduled
from selfcorrect_action.github.naming import UPDATE_BRANCH
from selfcorrect_action.spec import LoadedSpec, load_repo_spec
from selfcorrect_action.templating import render, shorten
from selfcorrect_action.verified.check import CheckStatus
from selfcorrect_action.verified.checker import all_records, check_specs
from selfcorrect_action.verified.record import load_record
from selfcorrect_action.verified.results import CheckResult

BROKE = frozenset({CheckStatus.FAILS, CheckStatus.STALE})
FOR_A_PERSON = frozenset({CheckStatus.INVALID, CheckStatus.ORPHANED})
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def on_update(trigger: Scheduled, env: ActionEnv) -> int:
    regenerate = env.inputs.update == "regenerate"
    root = env.context.workspace
    base = env.inputs.base_branch or env.forge.default_branch()
    if (problem := _not_on_base(env, base)) is not None:
        reporting.annotate_error(env, problem, title="selfcorrect update")
        reporting.outputs(env, status="refused")
        return EXIT_USAGE
    specs = spec_paths(root, env.inputs.tasks)
    env.say("update", f"re-verifying {len(specs)} spec(s) and every record against today's "
            f"sandbox image ({'regenerating' if regenerate else 'listing'} what broke)")
    # The checked-out branch is the repository's own (a schedule runs on the default
    # branch): its specs' credentials are resolved as a run's are.
    results = check_specs(root, specs, records=_records(root, specs),
                          runtime=env.inputs.sandbox_runtime or "runc",
                          sandbox_image=env.inputs.sandbox_image, environ=env.environ,
                          on_progress=lambda line: env.say("check", line),
                          engine=env.connections.engine if env.connections else None)  # type: ignore[arg-type]
    broke = [result for result in results if result.status in BROKE]
    person = [result for result in results if result.status in FOR_A_PERSON]
    if not broke and not person:
        env.say("update", f"every generated script verifies ({len(results)} checked): "
                "nothing to update")
        _summary(env, results, [], [], regenerate=regenerate)
        reporting.outputs(env, status="valid")
        return EXIT_OK
    tasks = [task for result in broke if regenerate and result.spec in specs
             and (task := _task(result, env, count=len(broke))) is not None]
    # One commit holds one version of a script: of specs that write the same one, the
    # first is regenerated, the others listed.
    tasks = [task for index, task in enumerate(tasks) if str(task.loaded.spec.output) not in
             {str(earlier.loaded.spec.output) for earlier in tasks[:index]}]
    regenerated = {task.label for task in tasks}
    batch = run_members(tasks, env, step="update") if tasks else BatchRun()
    listed = [result for result in [*broke, *person] if result.spec not in regenerated
              or result.spec in batch.failed]
    checked = [PlannedRun(task=result.spec, run_id="", status=result.status.value,
                          note=_broke(result)) for result in listed]
    plan = batch_plan(
        batch.members, label="update of the generated scripts",
        repository=env.context.repository, base_branch=base,
        server_url=env.context.server_url, run_url=env.context.run_url,
        comment_number=None, comment_marker=None, comment_body=None, secrets=env.secrets,
        pull_request=update_pull_request([*planned_runs(batch.members), *checked],
                                         run_url=env.context.run_url, secrets=env.secrets),
        checked=checked,
        checked_runs=[check for result in listed if (check := _check(env, result))])

    # The job's outputs are the update's, not one run's.
    applied = publish_batch(plan, batch, env, step="update", finish=lambda outcomes: None)
    if batch.outcomes:
        reporting.finish(env, batch.outcomes, failed_tasks=len(batch.failed))
    _summary(env, results, broke, person, regenerate=regenerate)
    pull = applied.pull_request if applied is not None else None
    reporting.outputs(env, status="updated", pr_url=pull.html_url if pull else "")
    if applied is not None and applied.held_back:
        return EXIT_FAILED  # a person's commit on the update branch: nothing was written
    # A regeneration that did not pass is in the pull request; an error of the sandbox or
    # the model API (3) or a bad input (2) is the job's.
    return batch.code if batch.code >= 2 else EXIT_OK


def _not_on_base(env: ActionEnv, base: str) -> str | None:
    """The update's commit goes on top of the base branch's head: it must be what the job
    checked out, or its scripts and records would not match what they replace."""
    head = workspace_head(env.context.workspace)
    at = env.forge.branch_head(base)
    if at is not None and head == at.sha:
        return None
    return (f"the update checked out {head[:7] if head else 'no commit'}, not the head of "
            f"{base} ({at.sha[:7] if at else 'no such branch'}), which its pull request "
            f"goes into: run it on {base} (a schedule does), or set base-branch")


def _records(root: Path, specs: Sequence[str]) -> list[str]:
    """The records checked beside the specs: an issue's script's, one whose spec is gone,
    one that does not load (said as invalid). A record of a spec file outside the tasks
    glob is that spec's to check: the jobs of a matrix each get one spec, and would
    otherwise each check every other one."""
    owned = set(specs)
    kept = []
    for path in all_records(root):
        try:
            record = load_record(root / path, shown=path)
        except SpecError:
            kept.append(path)
            continue
        if record is None or record.spec in owned:
            continue
        if record.spec.startswith("issue #") or not (root / record.spec).is_file():
            kept.append(path)
    return kept


def _task(result: CheckResult, env: ActionEnv, *, count: int) -> Task | None:
    root = env.context.workspace
    try:
        loaded = load_repo_spec(root, result.spec)
        if loaded.spec.kind not in ("script", "function"):
            return None
        replay = replay_for(root, env.inputs.replay, result.spec, count=count)
    except (SpecError, UsageError) as exc:
        reporting.annotate_error(env, f"{result.spec}: not regenerated: {exc}",
                                 file=result.spec)
        return None
    return Task(loaded, origin=UPDATE_ORIGIN, label=result.spec, title=result.spec,
                branch=UPDATE_BRANCH, base_branch=env.inputs.base_branch, replay=replay,
                given_code=_committed(loaded))


def _committed(loaded: LoadedSpec) -> str | None:
    path = loaded.output_path
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None


def _check(env: ActionEnv, result: CheckResult) -> PlannedCheckRun | None:
    output = check_output(env, result)
    if output is None:
        return None
    return PlannedCheckRun(branch=UPDATE_BRANCH, output=output)


def _broke(result: CheckResult) -> str:
    """One line of what broke, for the pull request's body."""
    return shorten(render("reports/update_broke.txt.j2", result=result), 1500)


def _summary(env: ActionEnv, results: Sequence[CheckResult], broke: Sequence[CheckResult],
             person: Sequence[CheckResult], *, regenerate: bool) -> None:
    append_summary(env.context.summary_file, render(
        "reports/update_summary.md.j2", results=list(results), broke=list(broke),
        person=list(person), regenerate=regenerate), secrets_=env.secrets)
