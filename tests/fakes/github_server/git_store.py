"""A bare git repository driven with plumbing commands, so every sha the fake returns is a real
git object id and a test can clone, push to, or inspect the repository with the git CLI.

Nothing here knows about HTTP; errors are raised as :class:`GitDataError` with the message GitHub
would answer, and the route layer turns them into 404/409/422 responses.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git knows this one without storing it
_SHA = re.compile(r"[0-9a-f]{40}")
_MODE_TYPES = {"100644": "blob", "100755": "blob", "120000": "blob", "040000": "tree",
               "160000": "commit"}
_STATUS = {"A": "added", "D": "removed", "M": "modified", "R": "renamed", "C": "copied",
           "T": "changed"}


class GitDataError(Exception):
    """A request the git data would refuse; ``status`` is GitHub's answer (404, 409, 422)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class GitCommandFailed(RuntimeError):
    """git itself failed: a bug in the fake or a broken repository, answered as a 500."""

    def __init__(self, cmd: list[str], code: int, stderr: str) -> None:
        super().__init__(f"{' '.join(cmd[3:])} exited {code}: {stderr.strip()}")


@dataclass(frozen=True)
class Ident:
    name: str
    email: str
    date: datetime

    def git_env(self, role: str) -> dict[str, str]:
        offset = self.date.utcoffset() or timedelta(0)
        minutes = int(offset.total_seconds()) // 60
        sign = "-" if minutes < 0 else "+"
        hours, rest = divmod(abs(minutes), 60)
        stamp = f"@{int(self.date.timestamp())} {sign}{hours:02d}{rest:02d}"
        return {f"GIT_{role}_NAME": self.name, f"GIT_{role}_EMAIL": self.email,
                f"GIT_{role}_DATE": stamp}


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    tree: str
    parents: tuple[str, ...]
    author: Ident
    committer: Ident
    message: str


@dataclass(frozen=True)
class TreeEntry:
    mode: str
    type: str
    sha: str
    path: str
    size: int | None  # blobs only, as GitHub reports it


@dataclass(frozen=True)
class TreeEdit:
    """One element of a POST git/trees body: ``sha=None`` and no content deletes ``path``."""

    path: str
    mode: str
    type: str
    sha: str | None = None
    content: bytes | None = None


@dataclass(frozen=True)
class FileChange:
    filename: str
    status: str
    additions: int
    deletions: int
    sha: str | None  # the blob after the change (before it, for a removal)
    previous_filename: str | None
    patch: str | None
    binary: bool


class GitStore:
    """One bare repository on disk. Callers serialise access (the fake holds one lock)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def init(cls, path: Path, default_branch: str) -> GitStore:
        path.parent.mkdir(parents=True, exist_ok=True)
        _run(["git", "init", "-q", "--bare", f"--initial-branch={default_branch}", str(path)])
        return cls(path)

    # -- low level -------------------------------------------------------------------------

    def git(self, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None,
            ok: Sequence[int] = (0,)) -> bytes:
        return _run(["git", "-C", str(self.path), *args], stdin=stdin, env=env, ok=ok).stdout

    def git_succeeds(self, *args: str) -> bool:
        """For the commands that answer yes/no with their exit status."""
        return _run(["git", "-C", str(self.path), *args], ok=(0, 1)).returncode == 0

    def object_types(self, shas: Sequence[str]) -> dict[str, str | None]:
        """``{sha: "blob"|"tree"|"commit"|None}`` in one cat-file call."""
        wanted = [s for s in dict.fromkeys(shas) if _SHA.fullmatch(s)]
        found: dict[str, str | None] = {s: None for s in shas}
        if not wanted:
            return found
        out = self.git("cat-file", "--batch-check=%(objectname) %(objecttype)",
                       stdin=("\n".join(wanted) + "\n").encode()).decode()
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1] != "missing":
                found[parts[0]] = parts[1]
        return found

    def object_type(self, sha: str) -> str | None:
        return self.object_types([sha])[sha]

    def is_empty(self) -> bool:
        return not self.refs()

    # -- blobs and trees -------------------------------------------------------------------

    def write_blob(self, data: bytes) -> str:
        return self.git("hash-object", "-w", "--stdin", stdin=data).decode().strip()

    def read_blob(self, sha: str) -> bytes:
        if self.object_type(sha) != "blob":
            raise GitDataError(404, "Not Found")
        return self.git("cat-file", "blob", sha)

    def ls_tree(self, tree: str, *, recursive: bool = False, path: str | None = None
                ) -> list[TreeEntry]:
        args = ["ls-tree", "-z", "-l"]
        if recursive:
            args += ["-r", "-t"]  # -t: list the trees on the way down too, as GitHub does
        args.append(tree)
        if path is not None:
            args += ["--", path]
        entries = []
        for record in self.git(*args).split(b"\0"):
            if not record:
                continue
            meta, name = record.decode().split("\t", 1)
            mode, kind, sha, size = meta.split()
            mode = "040000" if kind == "tree" else mode
            entries.append(TreeEntry(mode, kind, sha, name, None if size == "-" else int(size)))
        return entries

    def build_tree(self, base_tree: str | None, edits: Sequence[TreeEdit]) -> str:
        """GitHub's POST git/trees: apply ``edits`` (nested paths allowed) on ``base_tree``."""
        if base_tree is not None and self.object_type(base_tree) != "tree":
            raise GitDataError(422, "base_tree is not a valid tree oid")
        self._check_edit_objects(edits)
        pending = {}
        for edit in edits:
            path = _clean_path(edit.path)
            if edit.content is not None:
                edit = TreeEdit(path, edit.mode, "blob", self.write_blob(edit.content))
            pending[path] = TreeEdit(path, edit.mode, edit.type, edit.sha, None)
        # Deleting every path leaves the empty tree, which must exist as an object to be used.
        return self._edit_tree(base_tree, pending) or self.git("mktree", stdin=b"").decode().strip()

    def _check_edit_objects(self, edits: Sequence[TreeEdit]) -> None:
        types = self.object_types([e.sha for e in edits if e.sha and e.type != "commit"])
        for edit in edits:
            if edit.mode not in _MODE_TYPES or _MODE_TYPES[edit.mode] != edit.type:
                raise GitDataError(422, f"tree.mode {edit.mode} is not valid for {edit.type}")
            if edit.sha is not None and edit.content is not None:
                raise GitDataError(422, "tree.sha and tree.content cannot both be set")
            if edit.sha is not None and edit.type != "commit" and types[edit.sha] != edit.type:
                raise GitDataError(422, f"tree.sha {edit.sha} is not a valid {edit.type}")

    def _edit_tree(self, tree: str | None, edits: dict[str, TreeEdit]) -> str | None:
        """Rewrite one directory level; untouched subtrees keep their sha. None: now empty."""
        entries = {e.path: e for e in self.ls_tree(tree)} if tree else {}
        nested: dict[str, dict[str, TreeEdit]] = {}
        for path, edit in edits.items():
            head, _, rest = path.partition("/")
            if rest:
                nested.setdefault(head, {})[rest] = edit
            elif edit.sha is None:
                if entries.pop(head, None) is None:
                    # GitHub refuses to delete what is not there.
                    raise GitDataError(422, "GitRPC::BadObjectState")
            else:
                entries[head] = TreeEntry(edit.mode, edit.type, edit.sha, head, None)
        for head, sub_edits in nested.items():
            current = entries.get(head)
            subtree = current.sha if current is not None and current.type == "tree" else None
            if subtree is None and all(e.sha is None for e in sub_edits.values()):
                raise GitDataError(422, "GitRPC::BadObjectState")
            new_sha = self._edit_tree(subtree, sub_edits)
            if new_sha is None:
                entries.pop(head, None)  # git has no empty directories
            else:
                entries[head] = TreeEntry("040000", "tree", new_sha, head, None)
        if not entries:
            return None
        lines = b"".join(f"{e.mode} {e.type} {e.sha}\t{e.path}\0".encode()
                         for e in entries.values())
        return self.git("mktree", "-z", stdin=lines).decode().strip()

    # -- commits ---------------------------------------------------------------------------

    def write_commit(self, tree: str, parents: Sequence[str], message: str, author: Ident,
                     committer: Ident) -> str:
        if self.object_type(tree) != "tree":
            raise GitDataError(422, "Tree SHA does not exist")
        types = self.object_types(list(parents))
        if any(types[p] != "commit" for p in parents):
            raise GitDataError(422, "Parent SHA does not exist or is not a commit object")
        args = ["commit-tree", tree]
        for parent in parents:
            args += ["-p", parent]
        env = {**author.git_env("AUTHOR"), **committer.git_env("COMMITTER")}
        # The message goes through stdin untouched: commit-tree does no whitespace cleanup,
        # which matches the API keeping the message verbatim.
        return self.git(*args, stdin=message.encode(), env=env).decode().strip()

    def read_commit(self, sha: str) -> CommitInfo:
        if self.object_type(sha) != "commit":
            raise GitDataError(404, "Not Found")
        raw = self.git("cat-file", "commit", sha).decode("utf-8", "replace")
        header, _, message = raw.partition("\n\n")
        fields: dict[str, list[str]] = {}
        for line in header.splitlines():
            if line.startswith(" "):  # continuation of a multi-line header (gpgsig)
                continue
            key, _, value = line.partition(" ")
            fields.setdefault(key, []).append(value)
        return CommitInfo(sha, fields["tree"][0], tuple(fields.get("parent", [])),
                          _parse_ident(fields["author"][0]), _parse_ident(fields["committer"][0]),
                          message)

    def resolve_commit(self, rev: str) -> str | None:
        """A sha (full or abbreviated), branch, tag or full ref name → commit sha, or None."""
        if not rev or rev.startswith("-") or ".." in rev:
            return None
        candidates = [rev] if rev.startswith("refs/") else [f"refs/heads/{rev}",
                                                            f"refs/tags/{rev}", rev]
        for candidate in candidates:
            out = self.git("rev-parse", "--verify", "--quiet", "--end-of-options",
                           f"{candidate}^{{commit}}", ok=(0, 1, 128))
            if _SHA.fullmatch(out.decode().strip()):
                return out.decode().strip()
        return None

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        return self.git_succeeds("merge-base", "--is-ancestor", ancestor, descendant)

    def merge_base(self, a: str, b: str) -> str | None:
        out = self.git("merge-base", a, b, ok=(0, 1)).decode().strip()
        return out or None

    def rev_list(self, exclude: str | None, include: str) -> list[str]:
        """Commits reachable from ``include`` but not ``exclude``, oldest first."""
        spec = [include] if exclude is None else [f"^{exclude}", include]
        return self.git("rev-list", "--reverse", *spec, "--").decode().split()

    def mergeable(self, base: str, head: str) -> bool | None:
        """Whether head merges into base without conflicts (None: this git cannot tell)."""
        args = ["git", "-C", str(self.path), "merge-tree", "--write-tree", "--no-messages",
                base, head]
        code = _run(args, ok=(0, 1, 128, 129)).returncode
        return {0: True, 1: False}.get(code)  # git < 2.38 has no --write-tree: unknown

    # -- refs ------------------------------------------------------------------------------

    def refs(self, prefix: str = "refs/") -> dict[str, str]:
        out = self.git("for-each-ref", "--format=%(refname) %(objectname)", prefix).decode()
        refs = {}
        for line in out.splitlines():
            name, _, sha = line.partition(" ")
            refs[name] = sha
        return refs

    def read_ref(self, name: str) -> str | None:
        return self.refs(name).get(name)

    def set_ref(self, name: str, sha: str, old: str | None = None) -> None:
        # The old value makes update-ref a compare-and-swap, so a push that raced in is kept.
        args = ["update-ref", name, sha] + ([old] if old is not None else [])
        self.git(*args)

    def delete_ref(self, name: str) -> None:
        self.git("update-ref", "-d", name)

    def fetch(self, source: Path, src_ref: str, dst_ref: str) -> None:
        """Copy a ref and its objects from another bare repository (a fork's PR head)."""
        self.git("fetch", "-q", "--no-tags", str(source), f"+{src_ref}:{dst_ref}")

    # -- diffs -----------------------------------------------------------------------------

    def diff(self, base: str | None, head: str) -> list[FileChange]:
        """What changed from ``base`` (None: the empty tree) to ``head``, per file."""
        old = base or EMPTY_TREE
        raw = self.git("diff", "--raw", "-z", "-M", "--no-abbrev", old, head).split(b"\0")
        stats = self.git("diff", "--numstat", "-z", "-M", old, head).split(b"\0")
        counts = _parse_numstat([s.decode("utf-8", "replace") for s in stats])
        changes = []
        for meta, src, dst in _parse_raw([r.decode("utf-8", "replace") for r in raw]):
            _, _, old_sha, new_sha, letter = meta.lstrip(":").split()
            status = _STATUS.get(letter[0], "changed")
            name = dst or src
            added, removed, binary = counts.get(name, (0, 0, False))
            blob = old_sha if status == "removed" else new_sha
            patch = None if binary else self._patch(old, head, [p for p in (src, dst) if p])
            changes.append(FileChange(name, status, added, removed, blob,
                                      src if dst else None, patch, binary))
        return changes

    def _patch(self, old: str, head: str, paths: list[str]) -> str | None:
        text = self.git("diff", "-M", old, head, "--", *paths).decode("utf-8", "replace")
        start = text.find("@@")
        return text[start:].rstrip("\n") if start >= 0 else None


def valid_ref_name(name: str) -> bool:
    return _run(["git", "check-ref-format", name], ok=(0, 1)).returncode == 0


def _run(cmd: list[str], *, stdin: bytes | None = None, env: Mapping[str, str] | None = None,
         ok: Sequence[int] = (0,)) -> subprocess.CompletedProcess[bytes]:
    # No prompts and no system config: a test machine's git setup must not change the shas.
    full_env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1",
                "LC_ALL": "C", **(env or {})}
    done = subprocess.run(cmd, input=stdin, capture_output=True, env=full_env, check=False)
    if done.returncode not in ok:
        raise GitCommandFailed(cmd, done.returncode, done.stderr.decode("utf-8", "replace"))
    return done


def _clean_path(path: str) -> str:
    parts = path.split("/")
    if not path or any(p in ("", ".", "..", ".git") for p in parts):
        raise GitDataError(422, "tree.path contains a malformed path component")
    return path


def _parse_ident(value: str) -> Ident:
    match = re.fullmatch(r"(.*) <(.*)> (\d+) ([+-])(\d\d)(\d\d)", value)
    if match is None:
        return Ident(value, "", datetime.fromtimestamp(0, UTC))
    name, email, stamp, sign, hours, minutes = match.groups()
    offset = timedelta(hours=int(hours), minutes=int(minutes)) * (-1 if sign == "-" else 1)
    return Ident(name, email, datetime.fromtimestamp(int(stamp), timezone(offset)))


def _parse_raw(records: list[str]) -> list[tuple[str, str, str | None]]:
    """``git diff --raw -z`` records → (meta, path, new path for renames/copies or None)."""
    out: list[tuple[str, str, str | None]] = []
    i = 0
    while i < len(records) and records[i]:
        meta = records[i]
        if meta.split()[-1][0] in "RC":
            out.append((meta, records[i + 1], records[i + 2]))
            i += 3
        else:
            out.append((meta, records[i + 1], None))
            i += 2
    return out


def _parse_numstat(records: list[str]) -> dict[str, tuple[int, int, bool]]:
    """``git diff --numstat -z`` → {new path: (additions, deletions, binary)}."""
    out: dict[str, tuple[int, int, bool]] = {}
    i = 0
    while i < len(records) and records[i]:
        added, removed, path = records[i].split("\t", 2)
        if not path:  # a rename: the two paths follow as their own records
            path = records[i + 2]
            i += 3
        else:
            i += 1
        binary = added == "-"
        out[path] = (0 if binary else int(added), 0 if binary else int(removed), binary)
    return out
