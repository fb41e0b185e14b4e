"""`selfcorrect check`'s decisions (issue 36): a spec's status from its record, the
repository's digests and what changed; a re-verification's verdict; what --update-lock
may accept; the exit code, with and without --strict."""

from __future__ import annotations

import pytest

from selfcorrect_action.contract import ExecutionContract
from selfcorrect_action.verified.changes import Change, What
from selfcorrect_action.verified.check import (
    CheckStatus,
    after_reverify,
    asks_judge,
    exit_code,
    first_look,
    may_update_lock,
)
from selfcorrect_action.verified.fingerprint import Fingerprint
from selfcorrect_action.verified.record import FileDigest, ImageRecord, VerifiedRecord

SHA = "a" * 64
SCRIPT = FileDigest(path="scripts/sales_chart.py", sha256=SHA)
NOW = Fingerprint(prompt_sha256=SHA, fields_sha256=SHA, script=SCRIPT, inputs=(), tests=())
INPUT = Change(What.INPUT, "data/sales.csv", "changed")
PROMPT = Change(What.PROMPT, ".selfcorrect/tasks/sales chart.yml", "changed")


def record() -> VerifiedRecord:
    return VerifiedRecord(
        spec=".selfcorrect/tasks/sales chart.yml", kind="script", prompt_sha256=SHA,
        fields_sha256=SHA, script=SCRIPT, image=ImageRecord(tag="selfcorrect-sandbox:x"),
        selfcorrect_version="0.1.0", run_id="0123abcd",
        verified_at="2026-12-07T19:00:00+00:00", contract=ExecutionContract())


def test_a_repair_spec_is_not_applicable_whatever_else() -> None:
    assert first_look("repair", None, NOW, []) is CheckStatus.NOT_APPLICABLE


def test_no_record_or_no_script_is_missing() -> None:
    assert first_look("script", None, NOW, []) is CheckStatus.MISSING
    gone = Fingerprint(prompt_sha256=SHA, fields_sha256=SHA, script=None, inputs=(), tests=())
    assert first_look("function", record(), gone, [INPUT]) is CheckStatus.MISSING


def test_nothing_changed_is_verified_and_a_change_is_to_reverify() -> None:
    assert first_look("script", record(), NOW, []) is CheckStatus.VERIFIED
    assert first_look("script", record(), NOW, [INPUT]) is CheckStatus.CHANGED
    assert first_look("script", record(), NOW, [PROMPT]) is CheckStatus.CHANGED


@pytest.mark.parametrize(("found", "passed", "status"), [
    ([INPUT], True, CheckStatus.PASSES),
    ([INPUT], False, CheckStatus.FAILS),
    ([PROMPT, INPUT], True, CheckStatus.STALE),
    # A failure is a failure, whatever else changed: the prompt's change does not hide it.
    ([PROMPT], False, CheckStatus.FAILS),
])
def test_a_reverification_passes_fails_or_stays_stale(
        found: list[Change], passed: bool, status: CheckStatus) -> None:
    assert after_reverify(found, passed=passed) is status


def test_judge_is_asked_of_a_stale_spec_only_and_only_with_the_flag() -> None:
    assert asks_judge([PROMPT, INPUT], judge=True)
    assert not asks_judge([INPUT], judge=True)  # the run's judge saw this prompt already
    assert not asks_judge([], judge=True)
    assert not asks_judge([PROMPT], judge=False)


@pytest.mark.parametrize(("found", "passed", "judged", "status"), [
    # The judge passed the script with the new prompt: nothing is stale any more.
    ([PROMPT], True, True, CheckStatus.PASSES),
    ([PROMPT, INPUT], True, True, CheckStatus.PASSES),
    # Asked, but no answer (the budget): still stale.
    ([PROMPT], True, False, CheckStatus.STALE),
    # The judge's fail is the verdict's: failed at layer 3, as a run would fail.
    ([PROMPT], False, False, CheckStatus.FAILS),
])
def test_a_judged_reverification(found: list[Change], passed: bool, judged: bool,
                                 status: CheckStatus) -> None:
    assert after_reverify(found, passed=passed, judged=judged) is status


def test_a_judge_failure_exits_1_with_or_without_strict() -> None:
    # A stale spec the judge failed is `fails`: --strict changes nothing for it, while a
    # stale spec nobody judged fails only under --strict.
    assert exit_code([CheckStatus.FAILS], strict=False) == 1
    assert exit_code([CheckStatus.FAILS], strict=True) == 1
    assert exit_code([CheckStatus.PASSES], strict=True) == 0


def test_update_lock_accepts_only_a_passing_reverification() -> None:
    assert may_update_lock(CheckStatus.PASSES)
    assert not any(may_update_lock(status) for status in CheckStatus
                   if status is not CheckStatus.PASSES)


@pytest.mark.parametrize(("statuses", "plain", "strict"), [
    ([], 0, 0),
    ([CheckStatus.VERIFIED, CheckStatus.PASSES, CheckStatus.NOT_APPLICABLE], 0, 0),
    ([CheckStatus.STALE], 0, 1),
    ([CheckStatus.MISSING], 0, 1),
    ([CheckStatus.ORPHANED], 0, 1),
    ([CheckStatus.CHANGED], 0, 1),  # not re-verified: no Docker engine
    ([CheckStatus.INVALID, CheckStatus.STALE], 2, 2),
    ([CheckStatus.FAILS, CheckStatus.INVALID], 1, 1),  # a failure before bad input
    ([CheckStatus.FAILS, CheckStatus.VERIFIED], 1, 1),
])
def test_exit_codes(statuses: list[CheckStatus], plain: int, strict: int) -> None:
    assert exit_code(statuses, strict=False) == plain
    assert exit_code(statuses, strict=True) == strict
