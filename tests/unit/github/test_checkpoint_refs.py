"""A run's checkpoint kept as `refs/selfcorrect/checkpoints/<key>` (issue 37, item 4), read
back from the GitHub stand-in through the real PyGithub forge: the note a later job decides
on, and the download, which refuses whatever is not exactly what the note names."""

from __future__ import annotations

import hashlib
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from selfcorrect_action import __version__
from selfcorrect_action.action.writes.checkpoints import RefCheckpoints
from selfcorrect_action.errors import UsageError
from selfcorrect_action.github.checkpoint_refs import (
    CHECKPOINT_FILE,
    EXCHANGES_FILE,
    MAX_AGE,
    CheckpointNote,
    checkpoint_ref,
    download,
    find_checkpoint,
    issue_key,
    parse_note,
    render_note,
    spec_key,
)
from selfcorrect_action.github.forge import FileChange
from selfcorrect_action.github.pygithub_forge import PyGithubForge
from tests.fakes.github_server import DEFAULT_REPO, FakeGitHub

NOW = datetime(2026, 12, 8, 12, 0, tzinfo=UTC)
FILES = {CHECKPOINT_FILE: b'{"kind": "selfcorrect.checkpoint"}',
         EXCHANGES_FILE: b'{"kind": "selfcorrect.llm-recording"}\n{"index": 0}\n'}


def note(key: str = "12", **changes: object) -> CheckpointNote:
    values: dict[str, object] = {
        "key": key, "label": "issue #12", "run_id": "20261208-abc", "version": __version__,
        "spec_sha256": "a" * 64, "approval_sha256": "b" * 64, "attempts": 2,
        "tokens": 12345, "cost_usd": 0.0125, "llm_calls": 5, "saved_at": NOW, **changes}
    return CheckpointNote.model_validate(values)


def keep(forge: PyGithubForge, key: str = "12", files: dict[str, bytes] = FILES,
         warned: list[str] | None = None) -> RefCheckpoints:
    slot = RefCheckpoints(forge, key, start_from=None, warn=(warned or []).append,
                          version=__version__, clock=lambda: NOW)
    assert slot.save(note(key), files)
    return slot


def test_keys_are_one_valid_ref_component_each(fake_github: FakeGitHub,
                                               forge: PyGithubForge) -> None:
    assert issue_key(12) == "12"
    paths = [".selfcorrect/tasks/sales.yml", ".selfcorrect/tasks-sales.yml", "a..b.lock",
             "tâche étrange/@{x}.yml", "/"]
    keys = [spec_key(path) for path in paths]
    assert len(set(keys)) == len(keys)  # a digest of the path keeps sanitized twins apart
    assert keys[0].startswith("spec-selfcorrect-tasks-sales-yml-")
    for key in keys:  # git itself takes each as a ref name, and so does the stand-in
        subprocess.run(["git", "check-ref-format", checkpoint_ref(key)], check=True)
        keep(forge, key)
    assert sorted(fake_github.refs(DEFAULT_REPO, "refs/selfcorrect/checkpoints/")) == sorted(
        checkpoint_ref(key) for key in keys)


def test_the_note_reads_back_as_it_was_written() -> None:
    written = note(files=())
    message = render_note(written)
    assert message.startswith("selfcorrect: checkpoint of issue #12 after 2 attempt(s)\n")
    assert parse_note(message) == written
    spec_run = note(approval_sha256="", label=".selfcorrect/tasks/a.yml")
    assert parse_note(render_note(spec_run)) == spec_run
    assert "Approval-Sha256: none" in render_note(spec_run)


@pytest.mark.parametrize("message", [
    "Merge branch main", "selfcorrect: lock on main\n\nHolder: x\n",
    "selfcorrect: checkpoint of issue #1 after 1 attempt(s)\n\nKey: 1\n",
    render_note(note()).replace("Saved-At: 2026", "Saved-At: someday"),
    render_note(note(files=())) + "File: checkpoint.json short 12\n",
    render_note(note(files=())) + "File: checkpoint.json " + "0" * 64 + " many\n",
])
def test_a_message_that_is_not_a_whole_note_is_none(message: str) -> None:
    assert parse_note(message) is None


def test_stale_means_another_version_or_older_than_the_limit() -> None:
    fresh = note()
    assert fresh.stale(now=NOW + MAX_AGE - timedelta(hours=1), version=__version__) is None
    assert "more than 30 days ago" in (fresh.stale(now=NOW + MAX_AGE + timedelta(hours=1),
                                                    version=__version__) or "")
    assert "made by selfcorrect 0.0.1" in (note(version="0.0.1").stale(
        now=NOW, version=__version__) or "")
    assert fresh.saved() == "2 attempts, 5 model calls, 12,345 tokens, $0.0125"


def test_what_was_kept_downloads_byte_for_byte(forge: PyGithubForge, tmp_path: Path) -> None:
    keep(forge)
    found = find_checkpoint(forge, "12")
    assert found is not None and found.note is not None
    assert found.stale(now=NOW, version=__version__) is None
    assert (found.note.attempts, found.note.approval_sha256) == (2, "b" * 64)
    folder = download(forge, found, tmp_path / "got")
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == FILES
    assert find_checkpoint(forge, "13") is None


def _forge_commit(fake_github: FakeGitHub, forge: PyGithubForge, files: dict[str, str],
                  message: str, key: str = "12") -> None:
    """Someone with push access points the ref at a commit of their own making."""
    tree = forge.write_tree(None, [FileChange(path=n, content=c) for n, c in files.items()])
    commit = forge.write_commit(None, tree, message)
    ref = checkpoint_ref(key)
    current = forge.read_ref(ref)
    if current is not None:
        forge.delete_ref(ref, current.sha)
    assert forge.create_ref(ref, commit)


def _declared(files: dict[str, str], key: str = "12") -> str:
    described = tuple({"name": n, "sha256": hashlib.sha256(c.encode()).hexdigest(),
                       "size": len(c.encode())} for n, c in sorted(files.items()))
    return render_note(note(key, files=described))


TEXT = {name: data.decode() for name, data in FILES.items()}


@pytest.mark.parametrize(("files", "declared", "refusal"), [
    # The recording edited after it was saved (a model answer swapped): same size, new bytes.
    ({**TEXT, EXCHANGES_FILE: TEXT[EXCHANGES_FILE].replace("0", "1")}, TEXT,
     "exchanges.jsonl is not the file its note names"),
    # Cut short (a torn upload, or an edit).
    ({**TEXT, EXCHANGES_FILE: TEXT[EXCHANGES_FILE][:-3]}, TEXT,
     "exchanges.jsonl is 48 bytes, its note says 51"),
    # A third file slipped into the tree.
    ({**TEXT, "run.py": "import os"}, TEXT, "its tree holds"),
    # The note names other files.
    ({CHECKPOINT_FILE: TEXT[CHECKPOINT_FILE]}, {CHECKPOINT_FILE: TEXT[CHECKPOINT_FILE]},
     "its note names ['checkpoint.json'], not"),
])
def test_a_forged_or_edited_checkpoint_is_refused_before_anything_runs(
        fake_github: FakeGitHub, forge: PyGithubForge, tmp_path: Path,
        files: dict[str, str], declared: dict[str, str], refusal: str) -> None:
    _forge_commit(fake_github, forge, files, _declared(declared))
    found = find_checkpoint(forge, "12")
    assert found is not None
    with pytest.raises(UsageError) as refused:
        download(forge, found, tmp_path / "got")
    assert refusal in str(refused.value)
    assert "cannot be resumed" in str(refused.value) and "/selfcorrect retry" in str(
        refused.value.hint)
    assert not (tmp_path / "got").exists()  # nothing of it is written


def test_a_note_over_the_cap_or_a_commit_that_is_no_note_is_refused(
        fake_github: FakeGitHub, forge: PyGithubForge, tmp_path: Path) -> None:
    huge = ({"name": CHECKPOINT_FILE, "sha256": "0" * 64, "size": 9 * 2**20},
            {"name": EXCHANGES_FILE, "sha256": "0" * 64, "size": 1})
    _forge_commit(fake_github, forge, TEXT, render_note(note(files=huge)))
    found = find_checkpoint(forge, "12")
    assert found is not None
    with pytest.raises(UsageError, match="larger than 8 MiB"):
        download(forge, found, tmp_path / "a")
    _forge_commit(fake_github, forge, TEXT, "just a commit")
    found = find_checkpoint(forge, "12")
    assert found is not None and found.note is None
    assert "not a checkpoint" in (found.stale(now=NOW, version=__version__) or "")
    with pytest.raises(UsageError, match="not a checkpoint"):
        download(forge, found, tmp_path / "b")
    _forge_commit(fake_github, forge, TEXT, _declared(TEXT, key="13"))
    found = find_checkpoint(forge, "12")
    assert found is not None
    assert "its note is of '13'" in (found.stale(now=NOW, version=__version__) or "")
