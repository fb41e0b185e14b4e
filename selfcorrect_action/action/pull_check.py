"""Scripts kept verified on every pull request (issue 36, item 3), pre-commit.ci style: the
specs whose spec, inputs, tests, script or record the pull request touches are re-verified
in the sandbox on its head, with no model call.

A record the pull request changes is never trusted: each spec is compared with its record on
the base branch (read through the forge), and every touched spec is re-verified whatever the
digests say. No credential is resolved, and a spec gets no more network than its base
record allowed. A pull request from this repository gets one check run per spec, its
failures marked on the script's lines, and one comment only when something fails (edited on
later pushes, and to say so once all pass again); a fork's (read-only token) gets the same
as annotations and in the job summary."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from selfcorrect_action.action import reporting
from selfcorrect_action.action.env import ActionEnv
from selfcorrect_action.action.specs import spec_paths
from selfcorrect_action.action.workflow_commands import append_summary
from selfcorrect_action.github.events import MARKER_PREFIX, Pushed, SpecsChanged
from selfcorrect_action.github.forge import CheckAnnotation, CheckRunOutput, Conclusion
from selfcorrect_action.github.naming import check_name
from selfcorrect_action.redact import redact
from selfcorrect_action.templating import render
from selfcorrect_action.verified.check import CheckStatus
from selfcorrect_action.verified.checker import BaseRecords, all_records, check_specs, touched
from selfcorrect_action.verified.record import VerifiedRecord, lock_path, parse_record
from selfcorrect_action.verified.reproduce import verify_command
from selfcorrect_action.verified.results import CheckResult

CHECK_MARKER = f"{MARKER_PREFIX}check -->"
MAX_TITLE_CHARS = 200
CONCLUSIONS: dict[CheckStatus, Conclusion] = {
    CheckStatus.VERIFIED: "success", CheckStatus.PASSES: "success",
    CheckStatus.FAILS: "failure", CheckStatus.INVALID: "failure",
    CheckStatus.STALE: "failure", CheckStatus.ORPHANED: "failure",
}
FAILING = frozenset(status for status, conclusion in CONCLUSIONS.items()
                    if conclusion == "failure")


@dataclass(frozen=True)
class Reverification:
    """What a re-verification is about: the commit its check runs go on, where the records
    it trusts are read, and the pull request it answers on (None: a push)."""

    head_sha: str
    base_ref: str
    what: str  # for the log: "#12", "the push to main"
    number: int | None = None
    from_fork: bool = False


def reverify_pull_request(env: ActionEnv, trigger: SpecsChanged, changed: Sequence[str]
                          ) -> list[CheckResult]:
    """Re-verify what the pull request touches; every result reported where its author
    looks. The results, for the step's status."""
    return reverify(env, Reverification(
        head_sha=trigger.head_sha, base_ref=trigger.base_sha or env.forge.default_branch(),
        what=f"#{trigger.number}", number=trigger.number, from_fork=trigger.from_fork),
        changed)


def reverify_push(env: ActionEnv, trigger: Pushed) -> list[CheckResult]:
    """A push to the default branch: what its commits touch (everything when GitHub cannot
    say), against the records as they were before it; a check run per spec on the pushed
    commit."""
    files = None if trigger.fresh else env.forge.changed_files(trigger.before, trigger.after)
    if files is None:
        env.say("check", "the push's changes are not all known (a new branch, a forced push, "
                "or more files than GitHub lists): every spec and record is re-verified")
    return reverify(env, Reverification(
        head_sha=trigger.after, base_ref=trigger.before,
        what=f"the push to {trigger.ref.removeprefix('refs/heads/')}"), files)


def reverify(env: ActionEnv, about: Reverification, changed: Sequence[str] | None
             ) -> list[CheckResult]:
    """`changed`: the files touched; None: every spec and record is re-verified."""
    root = env.context.workspace
    specs = spec_paths(root, env.inputs.tasks)
    if changed is None:
        records = [path for path in all_records(root)
                   if path not in {lock_path(spec) for spec in specs}]
    else:
        specs, records = touched(root, specs, list(changed))
    if not specs and not records:
        env.say("check", f"{about.what} touches no generated script, spec or record")
        return []
    results = [result for result in check_specs(
        root, specs, records=records, runtime=env.inputs.sandbox_runtime or "runc",
        sandbox_image=env.inputs.sandbox_image, environ={},  # no credential is resolved
        on_progress=lambda line: env.say("check", line),
        engine=env.connections.engine if env.connections else None,  # type: ignore[arg-type]
        base_records=base_records(env, about.base_ref), own_records=about.number is not None)
        if not _validates_alone(result)]
    for result in results:
        _annotate(env, result)
        if not about.from_fork:
            _check_run(env, about, result)
    if about.number is not None:
        _comment(env, about, results)
    append_summary(env.context.summary_file, render(
        "reports/pull_check.md.j2", results=results, fork=about.from_fork),
        secrets_=env.secrets)
    return results


def _validates_alone(result: CheckResult) -> bool:
    """A spec that does not validate keeps validate's comment and check run, which say its
    problems already; a broken record is check's to say."""
    return result.status is CheckStatus.INVALID and bool(result.problems) and all(
        problem.startswith(f"{result.spec}:") for problem in result.problems)


def base_records(env: ActionEnv, ref: str) -> BaseRecords:
    """Record path -> the record as `ref` (the base branch's commit) holds it (None: none
    there)."""

    def read(path: str) -> VerifiedRecord | None:
        text = env.forge.read_file(path, ref)
        if text is None:
            return None
        # A broken base record is a located SpecError: check reports the spec invalid.
        return parse_record(text, f"{path} (base branch)")
    return read


def conclusion(result: CheckResult) -> Conclusion | None:
    """None: nothing to mark (a spec never generated, a repair spec)."""
    return CONCLUSIONS.get(result.status)


def check_output(env: ActionEnv, result: CheckResult) -> CheckRunOutput | None:
    verdict = conclusion(result)
    if verdict is None:
        return None
    annotations = [CheckAnnotation(path=result.script, start_line=line.line,
                                   end_line=line.line, title="selfcorrect check",
                                   message=redact(line.message, secrets=env.secrets))
                   for line in result.locations if result.script]
    return CheckRunOutput(
        name=check_name(result.spec), conclusion=verdict,
        title=redact(title(result), secrets=env.secrets)[:MAX_TITLE_CHARS],
        summary=redact(render("reports/pull_check_run.md.j2", result=result,
                              verify=verify_line(result)), secrets=env.secrets),
        details_url=env.context.run_url,
        external_id=f"selfcorrect check {env.context.run_key} {result.spec}"[:200],
        annotations=annotations)


def verify_line(result: CheckResult) -> str | None:
    """The one line that reproduces the recorded verdict (issue 36, item 6). None without a
    record, or with one verify cannot read against a spec (orphaned, invalid)."""
    if result.record is None or result.status in (CheckStatus.ORPHANED, CheckStatus.INVALID):
        return None
    return verify_command(result.record)


def title(result: CheckResult) -> str:
    took = f" in {result.took_ms / 1000:.1f} s" if result.took_ms is not None else ""
    if result.status is CheckStatus.VERIFIED:
        return f"{result.spec}: verified, nothing changed (0 tokens)"
    if result.status is CheckStatus.PASSES:
        return f"{result.spec}: re-verified{took}, 0 tokens"
    if result.status is CheckStatus.FAILS:
        return f"{result.spec}: fails ({result.category}){took}: {result.evidence}"
    if result.status is CheckStatus.STALE:
        return f"{result.spec}: stale, its prompt changed"
    return f"{result.spec}: {result.status.value.replace('_', ' ')}"


def _check_run(env: ActionEnv, about: Reverification, result: CheckResult) -> None:
    output = check_output(env, result)
    if output is None or not about.head_sha:
        return
    written = env.door.check_run(about.head_sha, output)
    if written.problem:
        reporting.check_warning(env, result.spec, written.problem)


def _annotate(env: ActionEnv, result: CheckResult) -> None:
    if result.status not in FAILING:
        return
    for line in result.locations:
        reporting.annotate(env, "error", line.message, file=result.script, line=line.line,
                           title=f"selfcorrect check: {result.spec}")
    if not result.locations:
        reporting.annotate(env, "error", title(result), file=result.script or result.spec,
                           title="selfcorrect check")


def _comment(env: ActionEnv, about: Reverification, results: list[CheckResult]) -> None:
    """One comment, made only when something fails; edited (never made) once all pass."""
    if about.from_fork or about.number is None:
        return
    failing = [result for result in results if result.status in FAILING]
    body = render("reports/pull_check_comment.md.j2", marker=CHECK_MARKER, failing=failing,
                  results=results)
    env.door.comment(about.number, CHECK_MARKER, redact(body, secrets=env.secrets),
                     create=bool(failing), plannable=False)
