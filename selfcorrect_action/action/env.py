"""What every handler gets: the runner's context, the inputs, the forge, the secrets to
redact, a way to say what is happening in the job log, the token a cancelled job sets, and
(in tests) the connections a run uses instead of opening its own."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from selfcorrect_action.action.context import ActionContext
from selfcorrect_action.action.inputs import ActionInputs
from selfcorrect_action.github.forge import Forge
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.runs.pipeline import Connections


@dataclass(frozen=True)
class ActionEnv:
    context: ActionContext
    inputs: ActionInputs
    forge: Forge
    environ: Mapping[str, str]
    secrets: Sequence[str]
    say: Callable[[str, str], None]
    cancel: CancelToken = field(default_factory=CancelToken)
    connections: Connections | None = None
