"""Names the action gives things on GitHub: branches, hidden markers, labels. Pure."""

from __future__ import annotations

import hashlib
import re

from selfcorrect_action.github.events import MARKER_PREFIX

BRANCH_PREFIX = "selfcorrect/"
# The scheduled update's one branch (action/autoupdate.py).
UPDATE_BRANCH = f"{BRANCH_PREFIX}autoupdate"
LABEL_RUNNING = "selfcorrect:running"
LABEL_PASSED = "selfcorrect:passed"
LABEL_FAILED = "selfcorrect:failed"
STATUS_LABELS = {
    LABEL_RUNNING: ("fbca04", "selfcorrect is working on this"),
    LABEL_PASSED: ("0e8a16", "selfcorrect found a script that passed every check"),
    LABEL_FAILED: ("d93f0b", "selfcorrect did not find a passing script within budget"),
}
# Every check run the action writes is named so: `selfcorrect / <task>`.
CHECK_NAME_PREFIX = "selfcorrect / "
# GitHub takes a check run's name up to this long.
MAX_CHECK_NAME_CHARS = 200


def check_name(label: str) -> str:
    """The check run of a task or spec (`selfcorrect / <label>`), cut to GitHub's limit: one
    name for the run's check, the pull request's and a batch's, so each finds the other."""
    return f"{CHECK_NAME_PREFIX}{label}"[:MAX_CHECK_NAME_CHARS]
VALIDATE_CHECK = f"{CHECK_NAME_PREFIX}validate"
RUN_TRAILER = "Selfcorrect-Run"
ORIGIN_TRAILER = "Selfcorrect-Origin"
TREE_TRAILER = "Selfcorrect-Tree"
_SEAL = re.compile(rf"^{TREE_TRAILER}: (?P<tree>[0-9a-f]{{40}}|[0-9a-f]{{64}})$", re.MULTILINE)
_UNSAFE = re.compile(r"[^a-z0-9._-]+")


def issue_branch(number: int) -> str:
    return f"{BRANCH_PREFIX}issue-{number}"


def task_branch(spec_path: str) -> str:
    """`.selfcorrect/tasks/Sales Chart.yml` → `selfcorrect/task-sales-chart`: a valid ref
    name whatever the file is called (no spaces, `..`, `~^:?*[`, or a trailing `.lock`)."""
    return f"{BRANCH_PREFIX}task-{task_slug(spec_path)}"


def task_slug(spec_path: str) -> str:
    """`.selfcorrect/tasks/Sales Chart.yml` → `sales-chart`: what a spec's branch and its
    verification record are named after."""
    stem = spec_path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
    slug = _UNSAFE.sub("-", stem).strip(".-")
    return (re.sub(r"\.{2,}", ".", slug).removesuffix(".lock") or "task")[:80]


def is_ours(branch: str) -> bool:
    return branch.startswith(BRANCH_PREFIX)


def report_marker(key: str) -> str:
    """Hidden in a run's live comment; `key` names the run (workflow run and attempt)."""
    return f"{MARKER_PREFIX}report {key} -->"


def origin_marker(origin: str) -> str:
    """Hidden in the PR body: what a `/selfcorrect retry` on the PR re-runs."""
    return f"{MARKER_PREFIX}origin {origin} -->"


VALIDATE_MARKER = f"{MARKER_PREFIX}validate -->"
APPROVAL_PREFIX = f"{MARKER_PREFIX}approved sha256="
_APPROVAL = re.compile(re.escape(APPROVAL_PREFIX) + r"(?P<digest>[0-9a-f]{64}) -->")


def body_digest(body: str) -> str:
    """What an approval is of: the issue body, line endings and outer space aside."""
    return hashlib.sha256(body.replace("\r\n", "\n").strip().encode()).hexdigest()


def approval_marker(digest: str) -> str:
    """Hidden in the bot's comment when someone with write access starts a run on an
    issue (the label): the body they approved. A later retry runs only that text."""
    return f"{APPROVAL_PREFIX}{digest} -->"


_REPORT = re.compile(re.escape(MARKER_PREFIX) + r"report [^\n]{1,300} -->")


def approved_digest(comment_body: str) -> str | None:
    """The approved digest of one of our run comments: its first line is the run's report
    marker and its second the approval, each the whole line. Anywhere else it is text
    quoted in the comment (a red team put a marker in an output path, which a later run's
    comment showed), or another workflow's comment under the same bot account."""
    lines = (comment_body or "").replace("\r\n", "\n").split("\n")
    if len(lines) < 2 or not _REPORT.fullmatch(lines[0]):
        return None
    match = _APPROVAL.fullmatch(lines[1])
    return match.group("digest") if match else None


def with_approval(comment_body: str, marker: str, digest: str) -> str:
    """`comment_body` (one of our run comments, found by `marker`) with the approval where
    approved_digest reads it: its first line the marker, its second the approval."""
    first, _, rest = comment_body.partition("\n")
    if first != marker:
        rest = comment_body
    return f"{marker}\n{approval_marker(digest)}\n{rest}"
_ORIGIN = re.compile(re.escape(MARKER_PREFIX) + r"origin (?P<origin>[^\n>]{1,300}) -->")


def origin_in(body: str) -> str | None:
    """The origin a PR body records (`issue 12` or `spec .selfcorrect/tasks/x.yml`)."""
    match = _ORIGIN.search(body or "")
    return match.group("origin").strip() if match else None


def sealed(message: str, tree_sha: str) -> str:
    """The commit message with a trailer naming the tree the commit holds: the commit is
    ours exactly as long as a commit still holds the tree it names (see `seal_holds`)."""
    return f"{message.rstrip()}\n{TREE_TRAILER}: {tree_sha}\n"


def seal_holds(message: str, tree_sha: str) -> bool:
    """Whether a commit's content is the content selfcorrect committed: its last tree
    trailer names its own tree. Who committed it does not matter (an App's commits may be
    recorded under another account), and an amend, rebase or merge by a person that changes
    any file changes the tree."""
    found = _SEAL.findall(message or "")
    return bool(found) and found[-1] == tree_sha
