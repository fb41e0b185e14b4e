"""What the steps need from outside, behind small interfaces: the LLM, the sandbox, the
clock, the input files and where artifacts go. Tests pass fakes; the CLI passes the real
ones. The steps never import docker, litellm or the filesystem layout directly."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from selfcorrect_action.llm.base import LLM
from selfcorrect_action.loop.budget import LimitsFn, PriceFn, no_limits
from selfcorrect_action.loop.state import LLMCall, RunState
from selfcorrect_action.repair.repository import Snapshot
from selfcorrect_action.sandbox.models import ExecutionRequest, ExecutionResult, InputFile


class Executor(Protocol):
    def run(self, request: ExecutionRequest, artifact_dir: Path) -> ExecutionResult: ...


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def no_price(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    return None


@dataclass
class Deps:
    llm: LLM
    sandbox: Executor
    work_root: Path  # each attempt's artifacts land under work_root/attempt-N/
    inputs: list[InputFile] = field(default_factory=list)
    price: PriceFn = no_price
    limits: LimitsFn = no_limits  # each model's context window and longest answer, if known
    sees_images: Callable[[str], bool] = lambda model: False  # whether a model takes images
    monotonic: Callable[[], float] = time.monotonic
    now: Callable[[], str] = utc_now
    # (step, message): live progress for the CLI and the issue comment; never decides anything
    on_event: Callable[[str, str], None] = lambda step, message: None
    # The state after the plan and after every attempt: the action's live comment is a view
    # of it. Like on_event, it observes and never decides.
    on_state: Callable[[RunState], None] = lambda state: None
    # The state after every finished step (and the first, before any): the run's checkpoint
    # is saved from it (runs/checkpoint.py), so a run killed in any step goes on from the
    # one before (issue 37). Called before on_state. Observes, never decides.
    on_step: Callable[[RunState], None] = lambda state: None
    # Every model call made in the run, appended the moment it returns: a step that an error
    # or Ctrl-C interrupts has not put its calls into the state yet, and what they cost
    # must not vanish from the reports ("cost $0.0000" after a paid, unpriced call).
    ledger: list[LLMCall] = field(default_factory=list)
    # Raises Interrupted when the run was asked to stop (runs/cancel.py); called between
    # steps, so a cancel from another thread (an API caller) ends the run at the next one.
    check_cancelled: Callable[[], None] = lambda: None
    # kind repair: the repository as read when the run started (every run places it whole),
    # and the sandbox image the runs use when it is not the plain one (requirements).
    repository: Snapshot | None = None
    image: str = ""
