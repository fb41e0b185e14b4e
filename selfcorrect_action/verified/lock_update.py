"""What `selfcorrect check --update-lock` writes (issue 36): a re-verified change accepted
(a hand edit that still passes) keeps who verified the script first and what a run planned,
with the repository's digests as they are now; a spec that had no record gets its first,
from its own contract and tests. Pure."""

from __future__ import annotations

from selfcorrect_action import __version__
from selfcorrect_action.loop.state import RunState, Status, end_run
from selfcorrect_action.records import evolve
from selfcorrect_action.spec import LoadedSpec
from selfcorrect_action.verified.build import record_for
from selfcorrect_action.verified.fingerprint import Fingerprint
from selfcorrect_action.verified.record import ImageRecord, VerifiedRecord

REVERIFIED = "re-verified by selfcorrect check --update-lock"


def accepted(record: VerifiedRecord, now: Fingerprint, image: ImageRecord, *,
             verified_at: str) -> VerifiedRecord:
    """`record` with today's digests: run_id, models, contract, model_tests and run_record
    stay (the run that made the script), the rest says what was re-verified, when, by which
    selfcorrect and in which image."""
    if now.script is None:
        raise ValueError("a record without its script is not accepted")
    return evolve(record, {
        "prompt_sha256": now.prompt_sha256, "fields_sha256": now.fields_sha256,
        "script": now.script, "inputs": list(now.inputs), "tests": list(now.tests),
        "image": image, "selfcorrect_version": __version__, "verified_at": verified_at})


def first_record(loaded: LoadedSpec, state: RunState, now: Fingerprint, image: ImageRecord,
                 *, verified_at: str) -> VerifiedRecord:
    """The first record of a spec whose script was never recorded (written by hand, or
    before records existed), from a passing re-verification: its contract is the spec's
    own, no model is named (none wrote it), its run is the re-verification."""
    if now.script is None:
        raise ValueError("a spec without its script is not recorded")
    passed = end_run(state, Status.PASSED, REVERIFIED)
    made = record_for(loaded, passed, script="", now=now, image=image,
                      verified_at=verified_at)
    return evolve(made, {"script": now.script, "models": {}, "model_tests": {}})
