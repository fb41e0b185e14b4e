"""Writing a check run: GitHub's batches of 50 annotations, a run found again instead of made
twice, and a token that may not write checks turned into advice instead of a failed run.

A check run is a report of a verdict that the comment, the labels and the job summary also
carry, so GitHub refusing it (a token without `checks: write`, a fork's read-only token, a
personal access token, which the Checks API never takes) never fails the run: the caller
gets the reason, with how to fix it, to say in the log, the comment and the summary.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from selfcorrect_action.github.forge import (
    MAX_ANNOTATIONS_PER_REQUEST,
    CheckAnnotation,
    CheckRun,
    CheckRunOutput,
    Forge,
    ForgeError,
)
from selfcorrect_action.records import evolve

NO_CHECKS_PERMISSION = "not accessible by integration"
APP_ONLY = "authenticate via a github app"


@dataclass(frozen=True)
class CheckResult:
    """What became of a planned check run: the run written, or why there is none."""

    check: CheckRun | None = None
    # Why no check run was written although one was planned (nothing went wrong).
    note: str = ""
    # GitHub refused or failed it: what to do about it, for a warning.
    problem: str = ""


def write_check_run(forge: Forge, head_sha: str, output: CheckRunOutput) -> CheckRun:
    """The completed check run on `head_sha`, every annotation in it. One this output made
    before (same name and external_id: a publish job run again, a create GitHub applied but
    answered with an error) is updated instead, and the annotations it already shows are
    not sent again."""
    existing = forge.find_check_run(head_sha, output.name, external_id=output.external_id)
    left = output.annotations[existing.annotations_count:] if existing else output.annotations
    batch, left = _split(left)
    # An update sets the verdict and summary again, even with no annotation left to send.
    check = (forge.create_check_run(head_sha, _with(output, batch)) if existing is None
             else forge.update_check_run(existing, _with(output, batch)))
    while left:
        batch, left = _split(left)
        check = forge.update_check_run(check, _with(output, batch))
    return check


def guarded(write: Callable[[], CheckResult]) -> CheckResult:
    """`write()`, with a ForgeError turned into the result's problem."""
    try:
        return write()
    except ForgeError as exc:
        return CheckResult(problem=check_problem(exc))


def check_problem(exc: ForgeError) -> str:
    """Why a check run could not be written, and what fixes it."""
    text = exc.message.lower()
    if exc.status == 403 and NO_CHECKS_PERMISSION in text:
        return ("no check run: the token may not write checks (GitHub answered 403: Resource "
                "not accessible by integration). Add `checks: write` to the workflow's "
                "`permissions:`; a pull request from a fork gets a read-only token, which "
                "never can")
    if exc.status == 403 and APP_ONLY in text:
        return ("no check run: GitHub takes check runs only from a GitHub App's token or the "
                "workflow's own GITHUB_TOKEN, not from a personal access token (GitHub "
                "answered 403: You must authenticate via a GitHub App)")
    return f"no check run: {exc.message}" + (f" ({exc.hint})" if exc.hint else "")


def _with(output: CheckRunOutput, batch: list[CheckAnnotation]) -> CheckRunOutput:
    return evolve(output, {"annotations": batch})


def _split(annotations: list[CheckAnnotation]
           ) -> tuple[list[CheckAnnotation], list[CheckAnnotation]]:
    return (annotations[:MAX_ANNOTATIONS_PER_REQUEST],
            annotations[MAX_ANNOTATIONS_PER_REQUEST:])
