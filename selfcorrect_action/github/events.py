"""The event that started the workflow, as a typed trigger: a pure function of the event's
name and payload (the JSON in $GITHUB_EVENT_PATH) and the action's inputs.

Everything in a payload written by a person (issue bodies, comments, titles) is untrusted
data: it is carried here as text and only ever validated (the spec) or quoted (reports).
Anything that is not for us becomes `Ignored` with a one-line reason, never an error:
a workflow wired to more events than we handle must not turn red.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

RETRY_COMMAND = "/selfcorrect retry"
FIX_COMMAND = "/selfcorrect fix"
REGENERATE_COMMAND = "/selfcorrect regenerate"
RESUME_COMMAND = "/selfcorrect resume"
# What one `/selfcorrect resume more ...` may add: enough to finish a run that ran out one
# or two attempts short, not a typo's thousand (the budget inputs cap a fresh run instead).
MAX_MORE = {"attempts": 20, "tokens": 10_000_000, "usd": 100.0}
MAX_NAMED_SPECS = 50
# Our own comments carry this, so even a comment a person copied from ours never triggers.
MARKER_PREFIX = "<!-- selfcorrect:"
MAX_GUIDANCE_CHARS = 4000
_PULL_REQUEST_ACTIONS = frozenset({"opened", "synchronize", "reopened", "edited"})


class _Trigger(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    repository: str  # owner/name
    actor: str  # who caused the event: the labeler, the commenter, the dispatcher


class IssueLabeled(_Trigger):
    kind: Literal["issue"] = "issue"
    number: int
    title: str
    body: str


class Dispatch(_Trigger):
    kind: Literal["dispatch"] = "dispatch"
    ref: str
    tasks: str | None = None  # a glob from the dispatch form's `tasks` input, if any


class RetryComment(_Trigger):
    kind: Literal["retry"] = "retry"
    number: int  # the issue or pull request commented on
    on_pull_request: bool
    comment_id: int
    guidance: str


class FixComment(_Trigger):
    """`/selfcorrect fix [guidance]`: repair mode on a pull request's head (docs/repair.md),
    the fix pushed as a new commit on its branch."""

    kind: Literal["fix"] = "fix"
    number: int
    on_pull_request: bool
    comment_id: int
    guidance: str


class RegenerateComment(_Trigger):
    """`/selfcorrect regenerate [SPEC...]` (issue 36, item 4): the failing or stale scripts of
    a pull request (or the named specs') regenerated from the committed script, pushed as
    one commit on its branch. Lines after the command are guidance for the model."""

    kind: Literal["regenerate"] = "regenerate"
    number: int
    on_pull_request: bool
    comment_id: int
    specs: tuple[str, ...] = ()
    guidance: str = ""


class ResumeComment(_Trigger):
    """`/selfcorrect resume [more attempts N] [more tokens N] [more usd X]` (issue 37): the
    run of the issue (or of the pull request's task) that was interrupted or ran out goes
    on from its checkpoint, paying only for the calls it had not made. `problem`: the line
    asked for something this cannot do (said to the commenter, nothing runs)."""

    kind: Literal["resume"] = "resume"
    number: int
    on_pull_request: bool
    comment_id: int
    more_attempts: int = 0
    more_tokens: int = 0
    more_usd: float = 0.0
    problem: str = ""


class Pushed(_Trigger):
    """A push (issue 36, item 3): on the default branch, the generated scripts the pushed
    commits touch are re-verified against the records as they were before the push. The
    payload Actions gets lists no files: they come from GitHub's compare of `before` and
    `after`, unless that says nothing (`fresh`: a new branch or a forced push)."""

    kind: Literal["push"] = "push"
    ref: str
    before: str
    after: str
    fresh: bool = False


class Scheduled(_Trigger):
    """A `schedule` event, or a workflow_dispatch the `update` input turns into one: the
    scheduled update (action/autoupdate.py)."""

    kind: Literal["schedule"] = "schedule"
    cron: str = ""


class SpecsChanged(_Trigger):
    kind: Literal["validate"] = "validate"
    number: int
    head_repository: str
    head_sha: str
    # The base branch's commit the pull request is compared with: the records of what was
    # verified are read there, never from the pull request (issue 36).
    base_sha: str = ""

    @property
    def from_fork(self) -> bool:
        return self.head_repository.lower() != self.repository.lower()


class Ignored(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["ignored"] = "ignored"
    reason: str


Trigger = (IssueLabeled | Dispatch | RetryComment | FixComment | RegenerateComment
           | ResumeComment | SpecsChanged | Scheduled | Pushed | Ignored)


def trigger_for(event_name: str, payload: Mapping[str, Any], *, trigger_label: str) -> Trigger:
    handler = _HANDLERS.get(event_name)
    if event_name == "pull_request_target":
        # Its checkout is the base branch, not the pull request's files: validating there
        # would check the wrong versions. Use the pull_request event (a fork's token can
        # still annotate).
        return Ignored(reason="pull_request_target checks out the base branch, not the pull "
                       "request's specs: validate on the pull_request event instead")
    if handler is None:
        return Ignored(reason=f"the {event_name or 'unknown'} event is not one selfcorrect "
                       "handles (issues, issue_comment, workflow_dispatch, pull_request, "
                       "push, schedule)")
    return handler(payload, trigger_label)


def _issues(payload: Mapping[str, Any], trigger_label: str) -> Trigger:
    action = _text(payload, "action")
    label = _text(payload.get("label"), "name")
    if action != "labeled":
        return Ignored(reason=f"issues/{action}: only adding the {trigger_label!r} label starts "
                       "a run")
    if label.casefold() != trigger_label.casefold():  # GitHub's own label names are
        return Ignored(reason=f"the label {label!r} was added, not {trigger_label!r}")
    issue = _mapping(payload, "issue")
    if "pull_request" in issue:
        return Ignored(reason="the label was added to a pull request, not an issue")
    return IssueLabeled(repository=_repository(payload), actor=_sender(payload),
                        number=_number(issue), title=_text(issue, "title"),
                        body=_text(issue, "body"))


def _dispatch(payload: Mapping[str, Any], trigger_label: str) -> Trigger:
    inputs = payload.get("inputs")
    tasks = inputs.get("tasks") if isinstance(inputs, Mapping) else None
    return Dispatch(repository=_repository(payload), actor=_sender(payload),
                    ref=_text(payload, "ref"),
                    tasks=tasks.strip() or None if isinstance(tasks, str) else None)


def _issue_comment(payload: Mapping[str, Any], trigger_label: str) -> Trigger:
    if _text(payload, "action") != "created":
        return Ignored(reason="only a new comment can ask for a retry (not an edit or a "
                       "deletion)")
    comment = _mapping(payload, "comment")
    author = _mapping(comment, "user")
    body = _text(comment, "body")
    if _text(author, "type") == "Bot" or _text(author, "login").endswith("[bot]"):
        return Ignored(reason="the comment is a bot's (selfcorrect never answers bots, itself "
                       "included)")
    if MARKER_PREFIX in body:
        return Ignored(reason="the comment carries selfcorrect's own marker")
    issue = _mapping(payload, "issue")
    regenerate = regenerate_request(body)
    if regenerate is not None:
        return RegenerateComment(repository=_repository(payload), actor=_text(author, "login"),
                                 number=_number(issue), on_pull_request="pull_request" in issue,
                                 comment_id=_int(comment, "id"), specs=regenerate[0],
                                 guidance=regenerate[1])
    resume = resume_request(body)
    if resume is not None:
        return ResumeComment(repository=_repository(payload), actor=_text(author, "login"),
                             number=_number(issue), on_pull_request="pull_request" in issue,
                             comment_id=_int(comment, "id"), **resume)
    fix = command_guidance(body, "fix")
    if fix is not None:
        return FixComment(repository=_repository(payload), actor=_text(author, "login"),
                          number=_number(issue), on_pull_request="pull_request" in issue,
                          comment_id=_int(comment, "id"), guidance=fix)
    guidance = retry_guidance(body)
    if guidance is None:
        return Ignored(reason=f"the comment is not a {RETRY_COMMAND}, {RESUME_COMMAND}, "
                       f"{FIX_COMMAND} or {REGENERATE_COMMAND} command")
    return RetryComment(repository=_repository(payload), actor=_text(author, "login"),
                        number=_number(issue), on_pull_request="pull_request" in issue,
                        comment_id=_int(comment, "id"), guidance=guidance)


def _pull_request(payload: Mapping[str, Any], trigger_label: str) -> Trigger:
    action = _text(payload, "action")
    if action not in _PULL_REQUEST_ACTIONS:
        return Ignored(reason=f"pull_request/{action}: specs are checked when a pull request "
                       "is opened, reopened or pushed to")
    pull = _mapping(payload, "pull_request")
    head = _mapping(pull, "head")
    head_repo = head.get("repo")
    return SpecsChanged(
        repository=_repository(payload), actor=_sender(payload), number=_number(pull),
        # A fork that was deleted leaves `repo: null`: it is certainly not ours.
        head_repository=_text(head_repo, "full_name") or "(deleted fork)",
        head_sha=_text(head, "sha"),
        base_sha=_text(_mapping(pull, "base"), "sha"),
    )


def _push(payload: Mapping[str, Any], trigger_label: str) -> Trigger:
    after, before = _text(payload, "after"), _text(payload, "before")
    if payload.get("deleted") is True or after.strip("0") == "":
        return Ignored(reason="the push deleted a branch: nothing to re-verify")
    return Pushed(repository=_repository(payload), actor=_sender(payload),
                  ref=_text(payload, "ref"), before=before, after=after,
                  fresh=payload.get("forced") is True or before.strip("0") == "")


def _schedule(payload: Mapping[str, Any], trigger_label: str) -> Trigger:
    # GitHub's schedule payload holds the cron line and the workflow, and no sender.
    return Scheduled(repository=_repository(payload), actor=_sender(payload) or "(schedule)",
                     cron=_text(payload, "schedule"))


_HANDLERS = {
    "issues": _issues,
    "workflow_dispatch": _dispatch,
    "issue_comment": _issue_comment,
    "pull_request": _pull_request,
    "schedule": _schedule,
    "push": _push,
}

_COMMAND_LINE = {verb: re.compile(rf"/selfcorrect[ \t]+{verb}\b[ \t]*(?P<rest>[^\n]*)")
                 for verb in ("retry", "fix", "regenerate", "resume")}
_MORE = re.compile(r"more[ \t]+(?P<what>\S+)[ \t]+(?P<amount>\S+)", re.IGNORECASE)


def retry_guidance(body: str) -> str | None:
    """The guidance of a `/selfcorrect retry <guidance>` comment (lines after the command
    included), or None when the comment does not start with the command. Quoted lines
    (`> /selfcorrect retry`, a reply quoting someone) do not count."""
    return command_guidance(body, "retry")


def command_guidance(body: str, verb: str) -> str | None:
    """What follows `/selfcorrect <verb>` at the start of a comment, or None."""
    text = body.replace("\r\n", "\n").lstrip()
    match = _COMMAND_LINE[verb].match(text)
    if match is None:
        return None
    rest = match.group("rest") + text[match.end():]
    return rest.strip()[:MAX_GUIDANCE_CHARS]


def regenerate_request(body: str) -> tuple[tuple[str, ...], str] | None:
    """The specs named on a `/selfcorrect regenerate` line (none: the failing and stale
    ones) and the guidance on the lines after it; None when the comment does not start
    with the command. Names may be quoted in backticks or quotes, as people paste paths."""
    text = body.replace("\r\n", "\n").lstrip()
    match = _COMMAND_LINE["regenerate"].match(text)
    if match is None:
        return None
    names = tuple(dict.fromkeys(
        name for word in match.group("rest").split()
        if (name := word.strip("`'\"").removeprefix("./"))))[:MAX_NAMED_SPECS]
    return names, text[match.end():].strip()[:MAX_GUIDANCE_CHARS]


def resume_request(body: str) -> dict[str, Any] | None:
    """The budget a `/selfcorrect resume` line adds (`more attempts 2 more usd 0.5`), as
    ResumeComment's fields, or None when the comment does not start with the command.
    Lines after it are not read (guidance changes the prompts: that is a retry)."""
    text = body.replace("\r\n", "\n").lstrip()
    match = _COMMAND_LINE["resume"].match(text)
    if match is None:
        return None
    rest = match.group("rest").strip()
    more: dict[str, Any] = {}
    while rest:
        found = _MORE.match(rest)
        what = found.group("what").casefold() if found else ""
        if found is None or what not in MAX_MORE:
            return {"problem": f"`{rest[:80]}` is not something resume takes: write "
                    "`/selfcorrect resume`, or add `more attempts N`, `more tokens N` or "
                    "`more usd X`"}
        amount = _amount(found.group("amount"), MAX_MORE[what], whole=what != "usd")
        if amount is None:
            return {"problem": f"`more {what} {found.group('amount')[:20]}`: give a number "
                    f"above 0 and at most {MAX_MORE[what]:g}"}
        more[f"more_{what}"] = amount if what == "usd" else int(amount)
        rest = rest[found.end():].strip()
    return more


def _amount(raw: str, cap: float, *, whole: bool) -> float | None:
    try:
        value = float(raw.removeprefix("$"))
    except ValueError:
        return None
    fits = 0 < value <= cap and (not whole or value.is_integer())
    return value if fits else None


def _mapping(data: Any, key: str) -> Mapping[str, Any]:
    value = data.get(key) if isinstance(data, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def _text(data: Any, key: str) -> str:
    value = data.get(key) if isinstance(data, Mapping) else None
    return value if isinstance(value, str) else ""


def _int(data: Any, key: str) -> int:
    value = data.get(key) if isinstance(data, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _number(data: Mapping[str, Any]) -> int:
    return _int(data, "number")


def _repository(payload: Mapping[str, Any]) -> str:
    return _text(_mapping(payload, "repository"), "full_name")


def _sender(payload: Mapping[str, Any]) -> str:
    return _text(_mapping(payload, "sender"), "login")
