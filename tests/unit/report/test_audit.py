"""AUDIT.md rendered from realistic runs: every element the audit trail promises, for every
attempt, in Markdown that stays well-formed whatever the script printed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from selfcorrect_action.loop.state import RunState, Status, Usage
from selfcorrect_action.report import audit_markdown, summary_markdown
from selfcorrect_action.sandbox.models import StreamCapture

from .markdown_checks import assert_well_formed, attempt_sections, split_code
from .runs import (
    PLANTED,
    SECRETS,
    cancelled_run,
    error_run,
    exhausted_run,
    passing_run,
    result,
    stopped_run,
)

REPLAY_FILE = "examples/sales-chart/replay.json"
LAYER_ROW = re.compile(
    r"^\| (execution|contract|tests|judge) \| "
    r"(passed|failed|not reached|not applicable) \|",
    re.MULTILINE,
)


@pytest.fixture(params=["passing", "exhausted", "stopped", "cancelled", "error", "replayed"])
def run(request: pytest.FixtureRequest, tmp_path: Path) -> RunState:
    if request.param == "passing":
        return passing_run(tmp_path)
    if request.param == "replayed":
        return replayed(passing_run(tmp_path))
    return {"exhausted": exhausted_run, "stopped": stopped_run, "cancelled": cancelled_run,
            "error": error_run}[request.param]()


def replayed(state: RunState) -> RunState:
    attempts = [
        a.model_copy(
            update={"llm_calls": [c.model_copy(update={"replayed": True}) for c in a.llm_calls]}
        )
        for a in state.attempts
    ]
    return state.model_copy(
        update={"replayed": True, "replay_file": REPLAY_FILE, "attempts": attempts}
    )


def audit(state: RunState) -> str:
    return audit_markdown(state, secrets=SECRETS)


def test_every_report_is_well_formed_and_redacted(run: RunState) -> None:
    for text in (audit(run), summary_markdown(run, secrets=SECRETS)):
        assert_well_formed(text)
        for secret in PLANTED:
            assert secret not in text
    assert "[REDACTED:" in audit(run)  # the prompt's key, at least, was quoted and redacted


def test_the_summary_table_comes_first(run: RunState) -> None:
    text = audit(run)
    head = text.split("## Task")[0]

    for label in (
        "status",
        "attempts",
        "failures by category",
        "tokens",
        "cost",
        "wall time",
        "models",
        "sandbox runtime",
        "task spec",
    ):
        assert f"| {label} | " in head
    assert f"| attempts | {len(run.attempts)} of {run.max_attempts} " in head
    assert "| wall time | 3 min 05 s |" in head
    assert "| models | cheap openai/gpt-4o-mini, strong openai/gpt-4o, judge openai" in head
    assert "| task spec | .selfcorrect/tasks/sales-chart.yml |" in head


def test_every_attempt_shows_every_element(run: RunState) -> None:
    sections = attempt_sections(audit(run))

    assert len(sections) == len(run.attempts)
    for attempt, section in zip(run.attempts, sections, strict=True):
        assert section.startswith(
            f"{attempt.index} of {run.max_attempts}: {attempt.strategy.value}, "
        )
        assert f"- Model: {attempt.tier} tier, `{attempt.model}`" in section
        assert f"- Why: {attempt.reason}" in section
        lines = len(attempt.code.splitlines())
        assert f"<details><summary>code ({lines} lines)</summary>" in section
        assert "<details><summary>diff from attempt" in section or "\nDiff: " in section
        assert len(LAYER_ROW.findall(section)) == 4
        assert "| model call | model | tokens | cost | latency | replayed |" in section
        if attempt.execution is not None:
            assert "| exit code | timed out | out of memory | signal | duration |" in section
        if attempt.packet is not None:
            assert "<details><summary>repair packet sent for the next attempt" in section
            assert f"## Attempt {attempt.index} of {run.max_attempts} failed" in section
        if attempt.verdict is not None and not attempt.verdict.passed:
            category = attempt.verdict.category
            assert category is not None
            assert f"Category: **{category.value}**. Evidence: " in section


def test_a_passing_run_after_a_contract_repair(tmp_path: Path) -> None:
    text = audit(passing_run(tmp_path))
    first, second = attempt_sections(text)

    assert text.startswith("# selfcorrect audit: `scripts/sales_chart.py`\n")
    assert "**Status: passed.** 2 of 4 attempts" in text
    assert "| failures by category | contract 1 |" in text
    assert "| contract | failed | 1 of 2 checks failed: chart.png: expected the script" in first
    assert "Files written: Chart.png (18,220 bytes)" in first
    assert "<details><summary>diff from attempt 1 (+1 -1 lines)</summary>" in second
    assert '-    plt.savefig("Chart.png")\n+    plt.savefig("chart.png")' in second
    assert "- Why: contract failure: patch" in second
    assert "| judge | passed | the result does what was asked |" in second
    assert "| tests | passed | 1 passed |" in second
    assert "The judge's reasoning:\n\n> One point per month" in second
    assert "**Passed.** The script is `scripts/sales_chart.py`, from attempt 2" in text
    assert "This run was a replay" not in text


def test_the_plan_says_who_set_each_contract_field(tmp_path: Path) -> None:
    text = audit(passing_run(tmp_path))

    assert "> Read the CSV with the csv module" in text
    assert (
        "- Contract fields the planner filled: `stdout_contains`, `success_criteria`, `timeout_s`"
    ) in text
    assert "- Contract fields you wrote (kept as written): `artifacts`" in text
    assert "- Tests: given in the spec" in text
    assert "| timeout | 20 s | planner |" in text
    assert "| artifacts | 1 | you |" in text
    assert "| network | none | default |" in text
    assert "| chart.png | png; not blank |" in text
    assert "<details><summary>test\\_sales.py (6 lines)</summary>" in text


def test_an_exhausted_run_reads_as_a_failure_report() -> None:
    text = audit(exhausted_run())
    outcome = text.split("## Outcome")[1]

    assert "**Status: failed: budget exhausted.**" in text
    assert "Stopped because: retry budget used up: 2/2 patches, 1/1 rethinks" in text
    assert "| failures by category | runtime 2, resource 1 |" in text
    assert "Why it stopped: retry budget used up" in outcome
    assert "Best attempt: attempt 1 (initial, cheap model openai/gpt-4o-mini): did not run" in (
        outcome
    )
    assert "it failed at the execution layer, runtime: KeyError: 'Month'" in outcome
    assert outcome.count("\n- attempt ") == 3
    third = attempt_sections(text)[2]
    assert "| none | yes | no | none | 2.3 s | runc |" in third
    assert "<details><summary>stdout: last 40 of 50 lines, 700 bytes</summary>" in third
    assert "Category: **resource**. Evidence: timed out after 20 s" in third


def test_a_stopped_run_shows_the_cycle() -> None:
    text = audit(stopped_run())
    third = attempt_sections(text)[2]

    assert "| failures by category | runtime 2, repeated code 1 |" in text
    assert "Progress: not run (same code as attempt 2)" in third
    assert "Diff: none, the code is identical to attempt 2's." in third
    assert "Not run: the code is identical to attempt 2's, whose outcome stands." in third
    assert "| execution | not reached | same code as attempt 2: not run again |" in third
    assert "Why it stopped: attempt 3 repeated attempt 2's code, even with the strong model" in (
        text
    )


def test_an_error_run_without_attempts() -> None:
    text = audit(error_run())

    assert "**Status: error: the run could not continue.** 0 of 4 attempts" in text
    assert "No plan was made: the run ended before the plan step." in text
    assert "## Attempts\n\nNo attempt was made.\n" in text
    assert "the model API kept failing: 503 Service Unavailable" in text.split("## Outcome")[1]
    assert "Best attempt" not in text


def test_a_cancelled_run_says_it_was_stopped_not_that_it_failed() -> None:
    """Issue 34: SIGTERM, SIGINT or a caller's cancel is no error of the run's."""
    state = cancelled_run()
    text, summary = audit(state), summary_markdown(state, secrets=SECRETS)

    assert "**Status: cancelled: stopped before it ended.** 1 of 4 attempts" in text
    assert "**Cancelled: stopped before it ended.** Why it stopped: interrupted by SIGTERM" in (
        text)
    assert summary.startswith("**selfcorrect: cancelled: stopped before it ended** for")
    assert "Stopped because: interrupted by SIGTERM" in summary
    assert "could not continue" not in text + summary


def test_a_replayed_run_says_so_first(tmp_path: Path) -> None:
    state = replayed(passing_run(tmp_path))
    text = audit(state)
    line = f"**This run was a replay of recorded model answers (`{REPLAY_FILE}`).**"

    assert text.split("\n\n")[1].startswith(line)
    assert line in summary_markdown(state, secrets=SECRETS)
    assert "| replayed |\n|---|" in text and "| 1.9 s | yes |" in text


def test_replayed_calls_alone_mark_the_run_as_a_replay(tmp_path: Path) -> None:
    state = replayed(passing_run(tmp_path)).model_copy(
        update={"replayed": False, "replay_file": ""}
    )

    assert "**This run was a replay of recorded model answers.**" in audit(state)


def test_an_unknown_cost_says_unknown(tmp_path: Path) -> None:
    state = passing_run(tmp_path)
    state = state.model_copy(update={"usage": Usage(tokens=5, cost_usd=0.0, cost_known=False)})

    assert "| cost | unknown |" in audit(state)


def test_backtick_runs_in_output_cannot_close_the_fence() -> None:
    text = audit(exhausted_run())
    _, blocks = split_code(text)

    assert "loading\n```\nmarkdown fence in output\n`````" in blocks
    assert "\n``````text\nloading\n" in text


def test_a_huge_stdout_is_bounded() -> None:
    state = exhausted_run()
    flood = "".join(f"row {i} {'x' * 150}\n" for i in range(100_000))
    huge = result(exit_code=1, stdout=flood, stderr="Killed\n")
    last = state.attempts[-1].model_copy(update={"execution": huge})
    state = state.model_copy(update={"attempts": [*state.attempts[:-1], last]})

    text = audit(state)

    assert len(text) < 60_000
    assert f"stdout: last 40 of 100,000 lines, {len(flood):,} bytes" in text
    assert "row 99999 " in text and "row 99959 " not in text


def test_truncated_streams_say_so() -> None:
    state = exhausted_run()
    stream = StreamCapture(text="head\n...\ntail\n", total_bytes=9_000_000, truncated=True)
    last = state.attempts[-1].model_copy(
        update={"execution": result(exit_code=1).model_copy(update={"stderr": stream})}
    )
    state = state.model_copy(update={"attempts": [*state.attempts[:-1], last]})

    assert "stderr: 3 lines, 9,000,000 bytes, middle dropped by the sandbox" in audit(state)


def test_html_and_markdown_in_evidence_stay_text() -> None:
    text = audit(exhausted_run())

    assert 'totals\\[row\\["Month"\\]\\]' in text
    assert "sales\\_chart.py:11 in monthly\\_totals" in text


def test_the_summary_is_one_screen(run: RunState) -> None:
    text = summary_markdown(run, secrets=SECRETS)

    assert text.startswith("**selfcorrect: ")
    assert text.count("\n| ") == (len(run.attempts) + 1 if run.attempts else 0)
    assert len(text.splitlines()) < 20
    if run.status.value != "passed":
        assert f"Stopped because: {run.stop_reason}" in text


def test_a_live_summary_shows_the_attempt_in_progress() -> None:
    state = exhausted_run()
    running = state.attempts[-1].model_copy(update={"verdict": None, "execution": None})
    state = state.model_copy(
        update={"status": Status.RUNNING, "stop_reason": "", "finished_at": None,
                "attempts": [*state.attempts[:-1], running]}
    )  # fmt: skip

    text = summary_markdown(state, secrets=SECRETS)

    assert text.startswith("**selfcorrect: unfinished** for `scripts/sales_chart.py`: 3 of 4")
    assert "| 3 | rethink | strong: openai/gpt-4o | in progress | in progress |" in text
    assert "Stopped because" not in text
    assert_well_formed(audit_markdown(state, secrets=SECRETS))


def test_terminal_control_characters_never_reach_the_audit() -> None:
    """`cat AUDIT.md` must not clear the screen or retitle the window with what a script
    printed or a model answered."""
    state = exhausted_run().model_copy(update={
        "guidance": "use \x1b]0;owned\x07 pandas\x1b[2J", "stop_reason": "stop\x1b[31m here"})
    text = audit_markdown(state, secrets=[])
    assert "\x1b" not in text and "\x07" not in text
    assert "pandas" in text


def _with_tests(state: RunState, *, by_plan: bool, isolation: str = "process") -> RunState:
    spec = state.spec.model_copy(update={"isolation": isolation})
    return state.model_copy(update={"spec": spec, "tests_written_by_plan": by_plan,
                                    "tests": {"test_chart.py": "def test_x():\n    pass\n"}})


def test_model_written_tests_are_named_first_in_every_report(tmp_path: Path) -> None:
    state = _with_tests(passing_run(tmp_path), by_plan=True)
    for text in (audit(state), summary_markdown(state, secrets=SECRETS)):
        first = text.split("\n\n")[:4]
        assert any("Read before trusting this result" in part and "written by a model" in part
                   for part in first), first
    assert "1 file, written by a model from the task; run apart from the candidate" in audit(
        state)


def test_tests_from_the_spec_run_apart_carry_no_caution(tmp_path: Path) -> None:
    state = _with_tests(passing_run(tmp_path), by_plan=False)
    assert "Read before trusting" not in audit(state)
    assert "given in the spec; run apart from the candidate, in a process" in audit(state)


def test_a_candidate_that_shared_the_tests_process_is_said_to_have(tmp_path: Path) -> None:
    state = _with_tests(passing_run(tmp_path), by_plan=False, isolation="in-process")
    for text in (audit(state), summary_markdown(state, secrets=SECRETS)):
        assert "shared the tests' process" in text
    assert "imported into pytest's own process (isolation: in-process)" in audit(state)
