"""AUDIT.md and the one-screen summary, rendered from the run state.

Redaction happens twice: on the state before anything is quoted (the Markdown filters escape
`_` and friends, and an escaped `ghp\\_…` no longer looks like a token), and on the final
text, in case a template ever adds text of its own that holds a secret.
"""

from __future__ import annotations

from collections.abc import Sequence

from selfcorrect_action.loop.state import RunState
from selfcorrect_action.redact import redact
from selfcorrect_action.report.run_json import redacted_state
from selfcorrect_action.report.view import run_view
from selfcorrect_action.templating import render, terminal_safe

AUDIT_TEMPLATE = "reports/audit.md.j2"
SUMMARY_TEMPLATE = "reports/summary.md.j2"
CHECK_TEMPLATE = "reports/check_run.md.j2"
CHECK_TITLE_TEMPLATE = "reports/check_run_title.txt.j2"


def audit_markdown(state: RunState, *, secrets: Sequence[str]) -> str:
    """AUDIT.md: the summary, the plan and contract, every attempt, and the outcome."""
    return _render(AUDIT_TEMPLATE, state, secrets)


def summary_markdown(state: RunState, *, secrets: Sequence[str]) -> str:
    """The status line and one row per attempt: fits a comment or a job summary."""
    return _render(SUMMARY_TEMPLATE, state, secrets)


def check_run_markdown(state: RunState, *, secrets: Sequence[str], conclusion: str,
                       audit_slot: str) -> str:
    """A check run's summary: the job summary's view, with the categories, tokens and cost
    spelled out, why the check is (not) green, and `audit_slot` where AUDIT.md's link goes."""
    return _render(CHECK_TEMPLATE, state, secrets, conclusion=conclusion,
                   has_tests=bool(state.tests), judged=state.spec.judge, audit_slot=audit_slot)


def check_run_title(state: RunState, *, secrets: Sequence[str]) -> str:
    return _render(CHECK_TITLE_TEMPLATE, state, secrets).strip()


def _render(template: str, state: RunState, secrets: Sequence[str], **context: object) -> str:
    view = run_view(redacted_state(state, secrets=secrets))
    # terminal_safe: `cat AUDIT.md` must not replay the escape sequences a script printed.
    return terminal_safe(redact(render(template, view=view, **context), secrets=secrets))
