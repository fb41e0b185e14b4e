"""The reaper of orphaned sandbox containers, at the Engine seam: a session filter keeps a
test that moves the clock on away from other runs' containers on a shared engine."""

from __future__ import annotations

from selfcorrect_action.sandbox import engine
from selfcorrect_action.sandbox.config import LABEL, LABEL_EXPIRES, LABEL_SESSION
from tests.fakes.fake_engine import FakeEngine

LONG_AFTER = 100.0 + engine.RUNNING_GRACE_S + 1  # past even a running container's grace


def _started(fake: FakeEngine, session: str) -> str:
    started = fake.start_container({"labels": {LABEL: "1", LABEL_SESSION: session,
                                               LABEL_EXPIRES: "100"}})
    started.socket.close()
    return started.id


def test_only_the_named_sessions_containers_are_reaped() -> None:
    fake = FakeEngine()
    mine, theirs = _started(fake, "mine"), _started(fake, "theirs")
    assert engine.reap_orphans(fake, now=LONG_AFTER, session="mine") == 1
    assert set(fake.containers) == {theirs} and mine in fake.removed
    assert engine.reap_orphans(fake, now=LONG_AFTER) == 1  # every session's, by default
    assert fake.containers == {}
