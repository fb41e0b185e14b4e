"""Pull-request rules shared by the routes and the seeding helpers: where a head lives, which
shas a PR shows, and GitHub's 422s on creation (duplicate, no commits, unknown branches)."""

from __future__ import annotations

from .model import Issue, PullInfo, Repo, State
from .routing import ApiError, validation_failed

DOC_CREATE = "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"
DRAFTS_REFUSED = "Draft pull requests are not supported in this repository."


def pull_ref(number: int) -> str:
    return f"refs/pull/{number}/head"  # where GitHub keeps every PR's head, forks included


def resolve_head(state: State, repo: Repo, head: str, head_repo: str | None = None
                 ) -> tuple[Repo, str]:
    """``owner:branch`` or ``branch`` → (repository holding the branch, branch)."""
    owner, colon, branch = head.partition(":")
    if not colon:
        owner, branch = repo.owner, head
    if head_repo:
        source = state.repo(head_repo if "/" in head_repo else f"{owner}/{head_repo}")
    elif owner.lower() == repo.owner.lower():
        source = repo
    else:
        source = next((r for r in state.repos.values()
                       if r.owner.lower() == owner.lower() and r.fork_of
                       and r.fork_of.lower() == repo.full_name.lower()), None)
    if source is None or source.git.read_ref(f"refs/heads/{branch}") is None:
        raise validation_failed("PullRequest", "invalid", "head", doc=DOC_CREATE)
    return source, branch


def head_sha(state: State, repo: Repo, issue: Issue) -> str:
    """The PR's head commit. An open PR follows its branch (syncing refs/pull/N/head, with
    the objects fetched from a fork); a closed one, or one whose branch is gone, keeps the last."""
    pull = _pull(issue)
    if issue.state == "closed" and pull.frozen_head_sha:
        return pull.frozen_head_sha
    source = state.repo(pull.head_repo) or repo
    current = source.git.read_ref(f"refs/heads/{pull.head_ref}")
    kept = repo.git.read_ref(pull_ref(issue.number))
    if current is not None and current != kept:
        if source is repo:
            repo.git.set_ref(pull_ref(issue.number), current)
        else:
            repo.git.fetch(source.git.path, f"refs/heads/{pull.head_ref}",
                           pull_ref(issue.number))
        kept = current
    if kept is None:
        raise ApiError(500, "Server Error")  # cannot happen: creation checked the head
    return kept


def base_sha(repo: Repo, issue: Issue) -> str:
    pull = _pull(issue)
    if issue.state == "closed" and pull.frozen_base_sha:
        return pull.frozen_base_sha
    return repo.git.read_ref(f"refs/heads/{pull.base_ref}") or pull.frozen_base_sha or ""


def freeze(state: State, repo: Repo, issue: Issue) -> None:
    pull = _pull(issue)
    pull.frozen_head_sha = head_sha(state, repo, issue)
    pull.frozen_base_sha = base_sha(repo, issue)


def reopen(state: State, repo: Repo, issue: Issue) -> None:
    pull = _pull(issue)
    if pull.merged:
        raise validation_failed("PullRequest", "custom", "state",
                                message="state cannot be changed. The pull request has been "
                                        "merged.")
    _refuse_duplicate(state, repo, pull.head_repo, pull.head_ref, pull.base_ref)
    pull.frozen_head_sha = pull.frozen_base_sha = None


def _refuse_duplicate(state: State, repo: Repo, head_repo: str, head_ref: str,
                      base_ref: str) -> None:
    for other in repo.issues.values():
        pull = other.pull
        if (pull is not None and other.state == "open" and pull.head_ref == head_ref
                and pull.head_repo.lower() == head_repo.lower() and pull.base_ref == base_ref):
            owner = head_repo.split("/", 1)[0]
            raise validation_failed("PullRequest", "custom", message="A pull request already "
                                    f"exists for {owner}:{head_ref}.", doc=DOC_CREATE)


def open_pull(state: State, repo: Repo, user: str, *, head: str, base: str, title: str | None,
              body: str | None, draft: bool = False, maintainer_can_modify: bool = False,
              head_repo: str | None = None) -> Issue:
    """Create a PR with GitHub's checks, in GitHub's order."""
    if not title:
        raise validation_failed("PullRequest", "missing_field", "title", doc=DOC_CREATE)
    base_commit = repo.git.read_ref(f"refs/heads/{base}")
    if base_commit is None:
        raise validation_failed("PullRequest", "invalid", "base", doc=DOC_CREATE)
    source, branch = resolve_head(state, repo, head, head_repo)
    _refuse_duplicate(state, repo, source.full_name, branch, base)
    head_commit = source.git.read_ref(f"refs/heads/{branch}") or ""
    if source is not repo:
        repo.git.fetch(source.git.path, f"refs/heads/{branch}", "refs/fake/incoming")
    ahead = repo.git.rev_list(base_commit, head_commit)
    if source is not repo:
        repo.git.delete_ref("refs/fake/incoming")
    if not ahead:
        raise validation_failed("PullRequest", "custom",
                                message=f"No commits between {base} and {head}", doc=DOC_CREATE)
    if draft and not repo.drafts_supported:
        # GitHub Free and Pro: drafts in public repositories only. GitHub says so only
        # here, after the branch exists: no API tells a client beforehand.
        raise ApiError(422, DRAFTS_REFUSED, doc=DOC_CREATE)
    issue = state.open_issue(repo, title, body, user)
    issue.pull = PullInfo(state.next_id(), source.full_name, branch, base, draft,
                          maintainer_can_modify)
    head_sha(state, repo, issue)  # writes refs/pull/N/head, as GitHub does
    return issue


def _pull(issue: Issue) -> PullInfo:
    if issue.pull is None:
        raise ApiError(404, "Not Found")
    return issue.pull
