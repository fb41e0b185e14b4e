"""The view-model (AUDIT.md's and the viewer's) bounds every text a run.json may hold at
any length: a hand-made or hostile run.json, not only what the loop keeps within its own
caps (issue 22)."""

from __future__ import annotations

from selfcorrect_action.loop.state import JudgeOutcome, RunState
from selfcorrect_action.report import attempt_view
from selfcorrect_action.report.audit import audit_markdown
from selfcorrect_action.report.view import PROMPT_CHARS, run_view
from selfcorrect_action.taxonomy import Verdict
from tests.unit.report.runs import exhausted_run

MEGABYTE = "x" * 1_000_000


def _long_run() -> RunState:
    state = exhausted_run()
    last = state.attempts[-1]
    assert last.verdict is not None
    long = last.model_copy(update={
        "reason": MEGABYTE,
        "verdict": Verdict(passed=False, failed_layer="contract", category=last.verdict.category,
                           evidence=MEGABYTE),
        "judge": JudgeOutcome(passed=False, reasoning=MEGABYTE,
                              unmet_criteria=["u" * 1_000] * 1_000),
    })
    spec = state.spec.model_copy(update={"prompt": MEGABYTE})
    return state.model_copy(update={"attempts": [*state.attempts[:-1], long], "spec": spec,
                                    "stop_reason": MEGABYTE, "guidance": MEGABYTE})


def test_no_text_in_the_view_grows_with_the_run_json() -> None:
    view = run_view(_long_run())
    last = view.attempts[-1]
    assert len(last.evidence) < attempt_view.EVIDENCE_CHARS + 100
    assert len(last.judge_reasoning) < attempt_view.REASONING_CHARS + 100
    assert len(last.reason) < attempt_view.ITEM_CHARS + 100
    assert len(last.unmet) == attempt_view.MAX_ITEMS + 1 and last.unmet[-1].startswith("and 980")
    assert max(len(item) for item in last.unmet) < attempt_view.ITEM_CHARS + 100
    assert len(view.prompt) < PROMPT_CHARS + 100 and len(view.guidance) < 5_000
    assert len(view.outcome.stop_reason) < 3_000 and len(view.outcome.best_failure) < 3_000
    assert "more characters, in run.json" in last.evidence


def test_the_audit_stays_small_too() -> None:
    assert len(audit_markdown(_long_run(), secrets=[])) < 200_000
