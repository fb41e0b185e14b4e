"""The door's checkpoint writes (issue 37, item 4) against the GitHub stand-in: a run's saves
chained on one ref (each a fast-forward), nothing new when nothing changed, the cap, another
run's checkpoint replaced by a fresh run but never overwritten mid-run, removal, the sweep
of stale ones, and mode plan keeping none."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from selfcorrect_action import __version__
from selfcorrect_action.action.writes.checkpoints import SWEEP_LIMIT, RefCheckpoints
from selfcorrect_action.action.writes.door import open_door
from selfcorrect_action.github.checkpoint_refs import (
    EXCHANGES_FILE,
    MAX_AGE,
    MAX_CHECKPOINT_BYTES,
    checkpoint_ref,
    find_checkpoint,
    render_note,
)
from selfcorrect_action.github.forge import FileChange
from selfcorrect_action.github.pygithub_forge import PyGithubForge
from tests.fakes.github_server import DEFAULT_REPO, FakeGitHub
from tests.unit.github.conftest import MakeForge
from tests.unit.github.test_checkpoint_refs import FILES, NOW, note

REF = checkpoint_ref("12")


def slot(forge: PyGithubForge, warned: list[str], *, key: str = "12",
         start_from: str | None = None) -> RefCheckpoints:
    return RefCheckpoints(forge, key, start_from=start_from, warn=warned.append,
                          version=__version__, clock=lambda: NOW)


def parents(fake_github: FakeGitHub, sha: str) -> list[str]:
    return fake_github.git(DEFAULT_REPO, "rev-list", "--parents", "-n", "1", sha).split()[1:]


def test_a_runs_saves_are_one_chain_and_an_unchanged_save_writes_nothing(
        fake_github: FakeGitHub, forge: PyGithubForge) -> None:
    warned: list[str] = []
    keeper = slot(forge, warned)
    assert keeper.save(note(attempts=0), FILES)
    first = fake_github.refs(DEFAULT_REPO)[REF]
    assert parents(fake_github, first) == []  # a run's chain starts with no parent
    more = {**FILES, EXCHANGES_FILE: FILES[EXCHANGES_FILE] + b'{"index": 1}\n'}
    assert keeper.save(note(attempts=1), more)
    second = fake_github.refs(DEFAULT_REPO)[REF]
    assert parents(fake_github, second) == [first]
    requests = len(fake_github.requests)
    assert keeper.save(note(attempts=1), more)  # the run's end, after its last step
    assert len(fake_github.requests) == requests
    found = find_checkpoint(forge, "12")
    assert found is not None and found.note is not None and found.note.attempts == 1
    assert fake_github.git(DEFAULT_REPO, "show", f"{second}:{EXCHANGES_FILE}").encode() == \
        more[EXCHANGES_FILE]
    assert warned == []


def test_over_the_cap_the_earlier_checkpoint_stays_and_it_is_said_once(
        fake_github: FakeGitHub, forge: PyGithubForge) -> None:
    warned: list[str] = []
    keeper = slot(forge, warned)
    assert keeper.save(note(attempts=1), FILES)
    kept = fake_github.refs(DEFAULT_REPO)[REF]
    big = {**FILES, EXCHANGES_FILE: b"x" * MAX_CHECKPOINT_BYTES}
    assert not keeper.save(note(attempts=2), big)
    assert not keeper.save(note(attempts=3), big)
    assert fake_github.refs(DEFAULT_REPO)[REF] == kept
    (warning,) = warned
    assert "after attempt 2 is not saved" in warning and "over the cap of 8 MiB" in warning
    assert "the one kept is from an earlier step" in warning
    first_too_big: list[str] = []
    assert not slot(forge, first_too_big, key="13").save(note("13"), big)
    assert "none is kept for this run" in first_too_big[0]
    assert checkpoint_ref("13") not in fake_github.refs(DEFAULT_REPO)


def test_a_fresh_run_replaces_an_earlier_runs_checkpoint_but_never_one_written_meanwhile(
        fake_github: FakeGitHub, make_forge: MakeForge) -> None:
    warned: list[str] = []
    slot(make_forge(), warned).save(note(run_id="earlier"), FILES)
    earlier = fake_github.refs(DEFAULT_REPO)[REF]
    fresh = slot(make_forge(), warned)
    assert fresh.save(note(run_id="fresh"), FILES)
    mine = fake_github.refs(DEFAULT_REPO)[REF]
    assert mine != earlier and parents(fake_github, mine) == []
    # Another job (a retry on the pull request) starts over the same key meanwhile.
    assert slot(make_forge(), warned).save(note(run_id="other"), FILES)
    theirs = fake_github.refs(DEFAULT_REPO)[REF]
    assert not fresh.save(note(run_id="fresh", attempts=3), {**FILES, EXCHANGES_FILE: b"{}"})
    assert not fresh.save(note(run_id="fresh", attempts=4), {**FILES, EXCHANGES_FILE: b"[]"})
    assert fake_github.refs(DEFAULT_REPO)[REF] == theirs
    (warning,) = warned
    assert "written by another run meanwhile" in warning


def test_a_resumed_run_chains_on_the_commit_it_came_from_or_keeps_nothing(
        fake_github: FakeGitHub, forge: PyGithubForge) -> None:
    warned: list[str] = []
    slot(forge, warned).save(note(), FILES)
    came_from = fake_github.refs(DEFAULT_REPO)[REF]
    resumed = slot(forge, warned, start_from=came_from)
    assert resumed.save(note(attempts=3), {**FILES, EXCHANGES_FILE: b"{}\n"})
    assert parents(fake_github, fake_github.refs(DEFAULT_REPO)[REF]) == [came_from]
    # Resumed from a commit the ref no longer names: its checkpoint is someone else's now.
    late = slot(forge, warned, start_from=came_from)
    assert not late.save(note(attempts=4), {**FILES, EXCHANGES_FILE: b"{}\n{}\n"})
    assert "moved since this run was resumed" in warned[-1]
    assert "keeps no checkpoint from now on" in warned[-1]
    # Resumed, and the ref was removed meanwhile (a stale sweep): made again, on the chain.
    forge.delete_ref(REF, fake_github.refs(DEFAULT_REPO)[REF])
    again = slot(forge, warned, start_from=came_from)
    assert again.save(note(attempts=4), {**FILES, EXCHANGES_FILE: b"[]\n"})
    assert parents(fake_github, fake_github.refs(DEFAULT_REPO)[REF]) == [came_from]


def test_a_passed_run_drops_the_keys_checkpoint_and_a_failed_request_only_warns(
        fake_github: FakeGitHub, forge: PyGithubForge) -> None:
    warned: list[str] = []
    keeper = slot(forge, warned)
    keeper.save(note(), FILES)
    keeper.drop()
    assert REF not in fake_github.refs(DEFAULT_REPO)
    keeper.drop()  # nothing left: nothing to do
    fake_github.fail("POST", f"/repos/{DEFAULT_REPO}/git/trees", 422)
    assert not slot(forge, warned).save(note(), FILES)
    assert "could not save the checkpoint of issue #12" in warned[-1]
    assert "the next step tries again" in warned[-1]
    fake_github.fail("GET", f"/repos/{DEFAULT_REPO}/git/ref/selfcorrect/checkpoints/12", 422)
    keeper.drop()
    assert "could not remove the checkpoint" in warned[-1]


def _plant(forge: PyGithubForge, key: str, message: str) -> str:
    tree = forge.write_tree(None, [FileChange(path=n, content=c.decode())
                                   for n, c in FILES.items()])
    commit = forge.write_commit(None, tree, message)
    assert forge.create_ref(checkpoint_ref(key), commit)
    return commit


def test_the_first_save_sweeps_stale_checkpoints_of_other_keys(
        fake_github: FakeGitHub, forge: PyGithubForge) -> None:
    _plant(forge, "1", render_note(note("1", version="0.0.1")))
    _plant(forge, "2", render_note(note("2", saved_at=NOW - MAX_AGE - timedelta(days=1))))
    _plant(forge, "3", "not a note at all")
    _plant(forge, "4", render_note(note("4", saved_at=NOW - timedelta(days=1))))
    warned: list[str] = []
    assert slot(forge, warned, key="12").save(note(), FILES)
    left = sorted(fake_github.refs(DEFAULT_REPO, "refs/selfcorrect/checkpoints/"))
    assert left == [checkpoint_ref("12"), checkpoint_ref("4")]
    assert warned == [] and SWEEP_LIMIT >= 4


def test_mode_plan_keeps_no_checkpoint_and_says_so_once(
        tmp_path: Path, fake_github: FakeGitHub, make_forge: MakeForge) -> None:
    said: list[tuple[str, str]] = []
    door = open_door("plan", make_forge(), plan_dir=tmp_path / "plans",
                     repository=DEFAULT_REPO, warn=lambda message: None,
                     say=lambda step, message: said.append((step, message)))
    kept = door.checkpoints("12")
    assert not kept.keeps
    assert not kept.save(note(), FILES) and not kept.save(note(), FILES)
    kept.drop()
    _plant(make_forge(), "9", "stale")
    found = find_checkpoint(make_forge(), "9")
    assert found is not None
    kept.remove_stale(found, "unreadable")
    assert said == [("checkpoint", "mode plan keeps no checkpoint (its token is read-only): "
                     "an interrupted run of this job cannot be resumed")]
    assert sorted(fake_github.refs(DEFAULT_REPO, "refs/selfcorrect/")) == [checkpoint_ref("9")]
    assert not (tmp_path / "plans").exists()
