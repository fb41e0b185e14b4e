"""What every handler gets: the runner's context, the inputs, the forge, the secrets to
redact and a way to say what is happening in the job log."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from selfcorrect_action.action.context import ActionContext
from selfcorrect_action.action.inputs import ActionInputs
from selfcorrect_action.github.forge import Forge


@dataclass(frozen=True)
class ActionEnv:
    context: ActionContext
    inputs: ActionInputs
    forge: Forge
    environ: Mapping[str, str]
    secrets: Sequence[str]
    say: Callable[[str, str], None]
