"""`/selfcorrect fix` on a pull request: repair mode on the pull request's head, the fix
pushed as a new commit on its branch (action/writes/apply.py), as pre-commit.ci pushes its autofix
commits. Only for a pull request from this repository: a fork's branch is not ours to push
to (and its token is read-only), so a fork gets a comment with the command to run locally.

The workflow checks out the pull request's head (examples/workflows/selfcorrect-fix.yml);
the run refuses any other checkout, since its baseline must be the commit it fixes. The
spec is the repository's `.selfcorrect/repair.yml` when there is one (its files, test
command, requirements and budget), else the Python files the pull request changes, with
the default test command. The comment's text after the command is guidance for the model.
"""

from __future__ import annotations

import re
from pathlib import Path

from selfcorrect_action.action import reporting
from selfcorrect_action.action.env import ActionEnv
from selfcorrect_action.action.specs import replay_for
from selfcorrect_action.action.task import Task
from selfcorrect_action.errors import SpecError
from selfcorrect_action.github.events import FixComment
from selfcorrect_action.github.forge import PullRequest
from selfcorrect_action.repair.files import writable
from selfcorrect_action.spec import LoadedSpec, dump_spec, load_repo_spec, load_spec_text
from selfcorrect_action.spec import TaskSpec as Spec
from selfcorrect_action.templating import render

REPAIR_SPEC = ".selfcorrect/repair.yml"
FIX_WORKFLOW = "examples/workflows/selfcorrect-fix.yml"
_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


def _refuse(env: ActionEnv, number: int, reason: str, fix: str) -> None:
    """Said on the pull request, and as the step's `status` output (what a workflow's later
    steps, e.g. an artifact upload, decide on)."""
    reporting.refuse(env, number, "fix", reason, fix)
    reporting.outputs(env, status="refused")


def fix_task(trigger: FixComment, env: ActionEnv) -> Task | None:
    """The repair task for the pull request, or None once the refusal is commented."""
    number = trigger.number
    if not trigger.on_pull_request:
        _refuse(env, number, "`/selfcorrect fix` repairs a pull request's "
                         "code, and this is an issue", "Comment it on a pull request, or "
                         "open the issue with the repair form and label it.")
        return None
    pull = env.forge.pull_request(number)
    if pull.head_repository.lower() != env.context.repository.lower():
        _fork(env, pull)
        return None
    shared = shared_branch(env, pull)
    if shared is not None:
        # A pull request from main (or develop, release/*) into another branch: its "own
        # branch" is everyone's.
        _refuse(env, number, (
            f"the pull request's head is {pull.head_branch}, {shared}: selfcorrect "
            "pushes a fix only to a pull request's own branch"),
            "Open the pull request from a branch of its own, then comment "
            "`/selfcorrect fix` on it.")
        return None
    head = workspace_head(env.context.workspace)
    if head != pull.head_sha:
        _refuse(env, number, (
            f"the workflow checked out {head[:7] if head else 'no commit'}, not the pull "
            f"request's head {pull.head_sha[:7]}: the fix must be tested on the commit it "
            "fixes"), f"Check out `refs/pull/{number}/head` before the action, as "
            f"{FIX_WORKFLOW} does.")
        return None
    loaded = _spec(env, pull)
    if loaded is None:
        return None
    return Task(loaded, origin=f"pull {number}", label=f"pull request #{number}",
                title=pull.title or f"pull request #{number}", branch=pull.head_branch,
                comment_on=number, guidance=trigger.guidance,
                replay=replay_for(env.context.workspace, env.inputs.replay,
                                  f"pull-{number}", count=1),
                base_branch=pull.base_branch, pull_number=number, expected_head=pull.head_sha)


def shared_branch(env: ActionEnv, pull: PullRequest) -> str | None:
    """What the pull request's head branch is when it is not the pull request's own (the
    default branch, a protected one): nothing is pushed there."""
    return ("this repository's default branch"
            if pull.head_branch == env.forge.default_branch() else
            "a protected branch" if env.forge.branch_protected(pull.head_branch) else None)


def _spec(env: ActionEnv, pull: PullRequest) -> LoadedSpec | None:
    workspace = env.context.workspace
    try:
        if (workspace / REPAIR_SPEC).is_file():
            loaded = load_repo_spec(workspace, REPAIR_SPEC)
            if loaded.spec.kind != "repair":
                raise SpecError([f"{REPAIR_SPEC}:1:1: kind: `/selfcorrect fix` runs a repair "
                                 f"spec; this one is kind {loaded.spec.kind}\n  hint: set "
                                 "`kind: repair`"])
            return loaded
        return _default_spec(env, pull)
    except SpecError as exc:
        reporting.spec_problems(env, pull.number, exc.problems)
        reporting.outputs(env, status="invalid-spec")
        return None


def _default_spec(env: ActionEnv, pull: PullRequest) -> LoadedSpec | None:
    workspace = env.context.workspace
    changed = [path for path in env.forge.pull_request_files(pull.number)
               if (workspace / path).is_file()]
    files = writable(["**/*.py"], changed)
    if not files:
        reporting.refuse(env, pull.number, "fix", "this pull request changes no Python source "
                         "file a repair may rewrite (tests, conftest.py and configuration "
                         "stay as they are)", f"Add a repair spec at {REPAIR_SPEC} naming the "
                         "files to fix (`files:`), then comment `/selfcorrect fix` again.")
        return None
    spec = Spec(prompt=f"Make the failing tests of pull request #{pull.number} pass.",
                kind="repair", files=files)
    return load_spec_text(dump_spec(spec), f"pull request #{pull.number}", root=workspace,
                          name=f"pull-{pull.number}")


def _fork(env: ActionEnv, pull: PullRequest) -> None:
    """A fork's branch cannot be pushed to: say how to run the same repair locally."""
    marker = f"<!-- selfcorrect:fix-fork #{pull.number} -->"
    body = render("reports/fix_fork.md.j2", marker=marker, number=pull.number,
                  head_repository=pull.head_repository, head_branch=pull.head_branch,
                  repair_spec=REPAIR_SPEC)
    reporting.comment(env, pull.number, marker, body)
    reporting.outputs(env, status="refused")


def workspace_head(workspace: Path) -> str | None:
    """The commit the checkout holds, read from .git without git (the action's image has
    none): a detached HEAD's sha, or the sha its branch ref names."""
    git = workspace / ".git"
    if git.is_file():  # a worktree or submodule: `gitdir: <path>`
        text = git.read_text(encoding="utf-8", errors="replace").strip()
        git = (workspace / text.removeprefix("gitdir:").strip()).resolve()
    try:
        head = (git / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if _SHA.fullmatch(head):
        return head
    ref = head.removeprefix("ref:").strip()
    return _ref_sha(git, ref) if ref.startswith("refs/") else None


def _ref_sha(git: Path, ref: str) -> str | None:
    loose = git / ref
    if loose.is_file():
        sha = loose.read_text(encoding="utf-8", errors="replace").strip()
        return sha if _SHA.fullmatch(sha) else None
    packed = git / "packed-refs"
    if packed.is_file():
        for line in packed.read_text(encoding="utf-8", errors="replace").splitlines():
            sha, _, name = line.partition(" ")
            if name == ref and _SHA.fullmatch(sha):
                return sha
    return None
