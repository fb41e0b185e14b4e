"""`selfcorrect action`: the entry point of the GitHub Action's container.

It reads the runner's GITHUB_* variables, the INPUT_* inputs and the event file, turns the
event into a trigger and hands it to its handler (action/handlers.py); `mode: publish`
applies the write plans a read-only job saved instead (action/writes/publish.py). The GitHub
token is taken out of the process environment once read: nothing started from here (least
of all a sandbox) can find it there.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, MutableMapping

from selfcorrect_action.action import handlers, reporting
from selfcorrect_action.action.context import read_context
from selfcorrect_action.action.env import open_env
from selfcorrect_action.action.inputs import read_inputs
from selfcorrect_action.action.writes.door import applies_saved_plans
from selfcorrect_action.action.writes.publish import publish_saved
from selfcorrect_action.github.events import Ignored, trigger_for
from selfcorrect_action.redact import redact, secrets_from_env
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.templating import one_line

TOKEN_VARIABLES = ("INPUT_GITHUB-TOKEN", "GITHUB_TOKEN")
LEGACY_DEFUSED = "#\u2060#["  # "##[" with a word joiner: no longer a runner command


def run_action(environ: MutableMapping[str, str], *, cancel: CancelToken | None = None) -> int:
    context = read_context(environ)
    inputs = read_inputs(environ)
    secrets = sorted({inputs.github_token, *secrets_from_env(environ)}, key=len, reverse=True)
    for name in TOKEN_VARIABLES:
        environ.pop(name, None)
    say = log_printer(secrets)
    from selfcorrect_action.github.pygithub_forge import PyGithubForge  # PyGithub on use only

    forge = PyGithubForge(context.repository, token=inputs.github_token,
                          api_url=context.api_url, bot_login=inputs.bot_login)
    env = open_env(context, inputs, forge, environ, secrets, say, cancel=cancel)
    trigger = trigger_for(context.event_name, context.event, trigger_label=inputs.trigger_label)
    if applies_saved_plans(inputs.mode):
        return publish_saved(env, trigger)
    if isinstance(trigger, Ignored):
        print(f"::notice title=selfcorrect::nothing to do: {one_line(trigger.reason)}",
              flush=True)
        reporting.outputs(env, status="ignored", has_plan="false")
        return 0
    code = handlers.dispatch(trigger, env)
    if outputs := env.door.outputs():
        reporting.outputs(env, **outputs)
    return code


def log_printer(secrets: list[str]) -> Callable[[str, str], None]:
    """Progress as plain lines in the job log: redacted, one line each, never wrapped."""
    def say(step: str, message: str) -> None:
        # "##[command]" is the runner's older command syntax: a script's own error message
        # quoted here must not add masks or annotations of its own.
        text = one_line(redact(message, secrets=secrets)).replace("##[", LEGACY_DEFUSED)
        print(f"[selfcorrect] {step}: {text}", file=sys.stdout, flush=True)
    return say

