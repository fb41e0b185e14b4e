"""The live attempt report: one comment on the issue or pull request, created when the run
starts and edited as it goes (without a forge, in `mode: plan`, it only renders the final
text, which the plan carries) (after the plan and every attempt, and while the model API is
slow or retrying), found again by its hidden marker so it is never duplicated.

A failed edit never stops a paid run: it is logged and the next edit tries again. Every
attempt gets its edit; notes about waiting on the model are spaced at least MIN_INTERVAL_S
apart (GitHub's secondary rate limits punish bursts of writes).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence

from selfcorrect_action.action.writes.plan import PR_LINK_SLOT
from selfcorrect_action.github.forge import Comment, Forge, ForgeError
from selfcorrect_action.loop.budget import usd
from selfcorrect_action.loop.state import RunState
from selfcorrect_action.report.audit import summary_markdown
from selfcorrect_action.templating import render

log = logging.getLogger(__name__)
MIN_INTERVAL_S = 3.0


class LiveComment:
    def __init__(self, forge: Forge | None, number: int, marker: str, *, task: str, run_url: str,
                 guidance: str, secrets: Sequence[str], approval: str = "",
                 clock: Callable[[], float] = time.monotonic,
                 min_interval_s: float = MIN_INTERVAL_S) -> None:
        self._forge = forge
        self.number = number
        self.marker = marker
        self._context = {"marker": marker, "task": task, "run_url": run_url,
                         "guidance": guidance, "approval": approval, "intro": "",
                         "checkpoint": ""}
        self._secrets = list(secrets)
        self._clock = clock
        self._interval = min_interval_s
        self._lock = threading.Lock()
        # Held for the whole of one write: a notice from the model-wait thread must not
        # land after (and over) a newer state or the final comment.
        self._writing = threading.Lock()
        self._closed = False
        self._comment: Comment | None = None
        self._state: RunState | None = None
        self._notice = ""
        self._last_edit = -float("inf")

    def start(self) -> None:
        """Find this run's comment (a retried start must not make a second) or create it."""
        if self._forge is None:
            return
        body = self._body(final=False)
        try:
            self._comment = self._forge.find_comment(self.number, self.marker)
            if self._comment is None:
                self._comment = self._forge.create_comment(self.number, body)
            else:
                self._comment = self._forge.edit_comment(self._comment.id, body)
            self._last_edit = self._clock()
        except ForgeError as exc:
            log.warning("could not post the live report on #%s: %s", self.number, exc.message)

    def set_notes(self, *, intro: str | None = None, checkpoint: str | None = None) -> None:
        """What the comment says besides the run (issue 37): `intro` first (a checkpoint a
        fresh run replaces, or the one a resumed run goes on from), `checkpoint` when the
        run stops unfinished (where its checkpoint is kept, and how to go on)."""
        with self._lock:
            if intro is not None:
                self._context["intro"] = intro
            if checkpoint is not None:
                self._context["checkpoint"] = checkpoint

    def on_state(self, state: RunState) -> None:
        with self._lock:
            self._state = state
            self._notice = ""
        self._edit(force=True)

    def on_event(self, step: str, message: str) -> None:
        """Waits and retries of the model API reach the comment; other steps do not (the
        state after each attempt says more)."""
        if step != "llm":
            return
        with self._lock:
            self._notice = message
        self._edit(force=False)

    def cancelled(self, state: RunState) -> None:
        """The run was interrupted (a cancelled job, its time limit): one last edit that
        says so, and no live edit after it. Nothing is published for such a run."""
        with self._writing, self._lock:
            self._state = state
            self._notice = ""
            self._closed = True
        if self._forge is not None:
            self._post(self._body(final=False, cancelled=state.interrupted_by or "a cancel"),
                       "say that the run was cancelled")

    def final_body(self, state: RunState) -> str:
        """The last version of the comment, with the slot for the PR link (the plan). No
        live edit goes out after this: the plan's final edit is the last word."""
        with self._writing, self._lock:
            self._state = state
            self._closed = True
        return self._body(final=True)

    def _edit(self, *, force: bool) -> None:
        if self._forge is None:  # nothing to post: only the final body is rendered
            return
        with self._writing:
            with self._lock:
                if self._closed or (not force
                                    and self._clock() - self._last_edit < self._interval):
                    return
                self._last_edit = self._clock()
            self._post(self._body(final=False), "update the live report")

    def _post(self, body: str, doing: str) -> None:
        """Create the comment, or edit it; a failure is logged, never the run's end."""
        if self._forge is None:
            return
        try:
            if self._comment is None:
                self._comment = self._forge.create_comment(self.number, body)
            else:
                self._forge.edit_comment(self._comment.id, body)
        except ForgeError as exc:
            log.warning("could not %s on #%s: %s", doing, self.number, exc.message)

    def _body(self, *, final: bool, cancelled: str = "") -> str:

        with self._lock:
            state, notice, context = self._state, self._notice, dict(self._context)
        summary = summary_markdown(state, secrets=self._secrets) if state else None
        return render("reports/live_comment.md.j2", summary=summary, notice=notice,
                      final=final, pr_slot=PR_LINK_SLOT, usage=_usage(state),
                      cancelled=cancelled, attempts=len(state.attempts) if state else 0,
                      passed=bool(state and state.status.value == "passed"), **context)


def _usage(state: RunState | None) -> dict[str, str] | None:
    if state is None or not state.usage.llm_calls:
        return None
    usage, budget = state.usage, state.budget
    return {
        "tokens": f"{usage.tokens:,}", "cap": f"{budget.tokens:,}",
        "cost": usd(usage.cost_usd) if usage.cost_known else "unknown (unpriced model)",
        "cost_cap": usd(budget.cost_usd) if budget.cost_usd is not None else "",
    }
