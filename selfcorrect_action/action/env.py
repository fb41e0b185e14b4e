"""What every handler gets: the runner's context, the inputs, the forge to read from, the
door every write goes through (decided once, here, by the job's mode), the secrets to
redact, a way to say what is happening in the job log, the token a cancelled job sets, and
(in tests) the connections a run uses instead of opening its own."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from selfcorrect_action.action.context import ActionContext
from selfcorrect_action.action.inputs import ActionInputs
from selfcorrect_action.action.workflow_commands import annotate
from selfcorrect_action.action.writes.door import Door, open_door
from selfcorrect_action.github.forge import Forge
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.runs.pipeline import Connections

Say = Callable[[str, str], None]


@dataclass(frozen=True)
class ActionEnv:
    context: ActionContext
    inputs: ActionInputs
    forge: Forge  # reads; every write goes through `door`
    environ: Mapping[str, str]
    secrets: Sequence[str]
    say: Say
    cancel: CancelToken = field(default_factory=CancelToken)
    connections: Connections | None = None
    door: Door = field(kw_only=True)


def open_env(context: ActionContext, inputs: ActionInputs, forge: Forge,
             environ: Mapping[str, str], secrets: Sequence[str], say: Say, *,
             cancel: CancelToken | None = None,
             connections: Connections | None = None) -> ActionEnv:
    """The job's environment, its door chosen by `inputs.mode` (action/writes/door.py)."""
    def warn(message: str) -> None:
        annotate("warning", message, secrets_=secrets)

    door = open_door(inputs.mode, forge, plan_dir=context.workspace / inputs.plan_dir,
                     repository=context.repository, warn=warn, say=say)
    return ActionEnv(context, inputs, forge, environ, secrets, say, cancel or CancelToken(),
                     connections, door=door)
