"""One container's life over a fake engine: its configuration, its removal, its verdicts."""

from __future__ import annotations

import time

from selfcorrect_action.sandbox import lifecycle
from selfcorrect_action.sandbox.config import LABEL_EXPIRES, LABEL_OWNER, PoolKey
from selfcorrect_action.sandbox.models import Limits
from tests.fakes.fake_engine import FakeEngine

KEY = PoolKey(image="img", runtime="runc", limits=Limits())


def test_prepare_starts_a_hardened_container_that_expires() -> None:
    engine = FakeEngine()
    prepared = lifecycle.prepare(engine, KEY, session="s", owner="host:1", idle_timeout_s=60)
    config = engine.containers[prepared.container_id].config
    assert config["cap_drop"] == ["ALL"] and config["network_mode"] == "none"
    assert config["labels"][LABEL_OWNER] == "host:1"
    assert time.time() + 60 < float(config["labels"][LABEL_EXPIRES]) < time.time() + 400
    lifecycle.destroy(prepared)
    assert engine.containers == {} and engine.removed == [prepared.container_id]


def test_oom_verdict_comes_from_the_engine_after_a_kill() -> None:
    engine = FakeEngine()
    prepared = lifecycle.prepare(engine, KEY, session="s", owner="o", idle_timeout_s=60)
    engine.state = {"OOMKilled": True}
    assert lifecycle.oom_killed(prepared)
    assert engine.containers[prepared.container_id].killed
    engine.state = {}
    assert not lifecycle.oom_killed(prepared)  # unknown is not an OOM kill
    lifecycle.destroy(prepared)


def test_a_pooled_container_expires_before_its_runner_gives_up() -> None:
    engine = FakeEngine()
    prepared = lifecycle.prepare(engine, KEY, session="s", owner="o", idle_timeout_s=100)
    assert not prepared.expired(now=prepared.created_at + 79)
    assert prepared.expired(now=prepared.created_at + 81)
    lifecycle.destroy(prepared)
