"""`selfcorrect check`'s decisions (issue 36): what a spec's record, the repository's digests
and what changed since make the spec; what a re-verification's verdict makes it; whether
the record may be rewritten; and the exit code. Pure.

- verified: every digest matches, the image's too: nothing runs.
- changed: something the verdict rested on differs (spec, input, test, script, image), so
  the committed script is re-verified in the sandbox, no model call: passes or fails.
- stale: the prompt changed. The rest is re-verified all the same, but only the judge or a
  regeneration can say whether the script still does what is asked. With --judge, the judge
  is asked once the re-verification passes: its pass makes the spec passes, its fail fails.
- missing: no record (never generated), or the recorded script is gone.
- orphaned: a record whose spec is gone. invalid: the spec or its record does not read.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from selfcorrect_action.spec import TaskKind
from selfcorrect_action.verified.changes import Change, is_stale
from selfcorrect_action.verified.fingerprint import Fingerprint
from selfcorrect_action.verified.record import VerifiedRecord


class CheckStatus(StrEnum):
    VERIFIED = "verified"
    CHANGED = "changed"  # final only when it could not be re-verified (no Docker engine)
    PASSES = "passes"
    FAILS = "fails"
    STALE = "stale"
    MISSING = "missing"
    ORPHANED = "orphaned"
    INVALID = "invalid"
    NOT_APPLICABLE = "not_applicable"  # kind repair: no script to keep verified


# What --strict fails besides `fails`: nothing shows these scripts do what their specs ask.
STRICT_FAILURES = frozenset({CheckStatus.STALE, CheckStatus.MISSING, CheckStatus.ORPHANED,
                             CheckStatus.CHANGED})


def first_look(kind: TaskKind, record: VerifiedRecord | None, now: Fingerprint,
               found: list[Change]) -> CheckStatus:
    """Before anything runs. CHANGED means: re-verify (prompt changes included)."""
    if kind == "repair":
        return CheckStatus.NOT_APPLICABLE
    if record is None or now.script is None:
        return CheckStatus.MISSING
    return CheckStatus.CHANGED if found else CheckStatus.VERIFIED


def asks_judge(found: list[Change], *, judge: bool) -> bool:
    """--judge asks the judge of a stale spec only: for any other change the sandbox's
    verdict is the record's own (a run's judge saw this prompt already), and a spec that
    is not stale costs no tokens."""
    return judge and is_stale(found)


def after_reverify(found: list[Change], *, passed: bool, judged: bool = False) -> CheckStatus:
    """A failing re-verification fails whatever else changed (a judge's fail included: the
    verdict then failed at layer 3); a passing one of a changed prompt stays stale (the
    sandbox cannot say whether the task is still the script's) unless the judge, asked
    with the new prompt, passed it (`judged`)."""
    if not passed:
        return CheckStatus.FAILS
    return CheckStatus.STALE if is_stale(found) and not judged else CheckStatus.PASSES


def may_update_lock(status: CheckStatus) -> bool:
    """--update-lock accepts only what was re-verified and passed: never a failure, and never
    a stale spec, whose new prompt nothing judged (a stale spec the judge passed is
    `passes`: its record then takes the new prompt's digest)."""
    return status is CheckStatus.PASSES


def exit_code(statuses: Iterable[CheckStatus], *, strict: bool) -> int:
    """1 for any failure (the judge's too, with or without --strict: it is the semantic
    failure a run would fail on); else 2 for a spec or record that does not read (bad
    input); else, with --strict, 1 for anything not shown to pass; else 0."""
    seen = set(statuses)
    if CheckStatus.FAILS in seen:
        return 1
    if CheckStatus.INVALID in seen:
        return 2
    if strict and seen & STRICT_FAILURES:
        return 1
    return 0
