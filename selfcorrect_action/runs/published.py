"""A passing script published into a repository (issue 36): with its header (the spec it was
generated from and how to check it), run once more through the loop's own execute and
evaluate steps in the run's sandbox, with no model call, and recorded as verified only if
that passes. Every front end that publishes into a repository asks for it (`run --apply`,
the action's pull request); runs/pipeline.py does it after the loop, before the reports,
so run.json says how it went.

The header goes in before this final verification, so the bytes the record names are the
bytes that ran. A script that reads its own source may not pass with a comment it did not
have: the run then ends `stopped`, and nothing is published as verified. A script whose
contract opens the network is not run again (its second run would reach someone's API
again): its passing attempt, the header added, is recorded, the header checked to compile.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from selfcorrect_action.errors import SelfcorrectError
from selfcorrect_action.loop.deps import Executor
from selfcorrect_action.loop.state import FinalCheck, RunState, Status, end_run
from selfcorrect_action.records import evolve
from selfcorrect_action.sandbox.identity import ImageIdentity
from selfcorrect_action.spec import LoadedSpec
from selfcorrect_action.templating import shorten
from selfcorrect_action.verified.build import record_for
from selfcorrect_action.verified.fingerprint import Fingerprint, fields_digest, prompt_digest
from selfcorrect_action.verified.header import with_header
from selfcorrect_action.verified.record import (
    FileDigest,
    ImageRecord,
    VerifiedRecord,
    dump_record,
    lock_path,
)
from selfcorrect_action.verified.reverify import reverify, reverify_state

FINAL_DIR = "final"  # under the session's work root, apart from the attempts' folders


@dataclass(frozen=True)
class RecordTarget:
    """How a published script's header and record name its spec: its path in the
    repository, or `issue #12` for a script born of an issue (no spec file: the record
    points at the committed run.json, `run_record`, which holds the spec)."""

    spec: str
    run_record: str = ""

    @property
    def lock(self) -> str:
        return lock_path(self.spec)


@dataclass(frozen=True)
class VerifiedScript:
    """The script as it goes into the repository and the record of what verified it."""

    script: str  # with its header: the bytes the final check ran
    record: VerifiedRecord
    lock: str  # where the record goes, relative to the repository root

    @property
    def record_text(self) -> str:
        return dump_record(self.record)


def publishes(state: RunState, loaded: LoadedSpec | None) -> bool:
    """Whether the run has a script to publish with a record: a script or a function that
    passed (a repair publishes the files it rewrote, which have no record)."""
    return (loaded is not None and state.status is Status.PASSED and state.last is not None
            and loaded.spec.kind in ("script", "function"))


def verify_published(state: RunState, loaded: LoadedSpec, target: RecordTarget, *,
                     sandbox: Executor, work_root: Path, on_event: Callable[[str, str], None]
                     ) -> tuple[RunState, VerifiedScript | None]:
    """`state` (a passing run: `publishes`) with its final check, and what to publish;
    None when the headed script did not pass (the state then ends `stopped`) or the check
    could not run (`error`, with the exit code of what stopped it). A cancel raises
    Interrupted, as it does in the loop."""
    assert state.last is not None
    script = with_header(state.last.code, spec=target.spec, lock=target.lock)
    record = record_for(loaded, state, script=script, now=_as_read(state, loaded),
                        image=image_record(state.image), run_record=target.run_record,
                        spec=target.spec)
    digest = hashlib.sha256(script.encode("utf-8")).hexdigest()
    if state.contract.network != "none":
        return _not_run_again(state, script, record, target, digest, on_event)
    on_event("verify", "the script with its header, once more (no model call)")

    def said(step: str, message: str) -> None:  # its one attempt is no attempt of the run's
        on_event("verify", message.removeprefix("attempt 1: "))

    try:
        checked = reverify(reverify_state(loaded, record, script, runtime=state.runtime),
                           loaded, sandbox, work_root / FINAL_DIR, on_event=said)
    except SelfcorrectError as exc:
        ended = end_run(state, Status.ERROR, "the final check of the script with its header "
                        f"could not run: {exc.message}")
        return evolve(ended, {"error_exit_code": exc.exit_code}), None
    verdict = checked.last.verdict if checked.last is not None else None
    if verdict is not None and verdict.passed:
        on_event("verify", f"passed with its header; its record: {target.lock}")
        final = FinalCheck(script_sha256=digest, passed=True)
        return evolve(state, {"final_check": final}), VerifiedScript(script, record, target.lock)
    evidence = verdict.evidence if verdict is not None else "it did not run"
    category = f"{verdict.category} failure: " if verdict and verdict.category else ""
    final = FinalCheck(script_sha256=digest, passed=False, evidence=evidence)
    reason = ("the script passed, but not with the header it is published with (a script "
              f"that reads its own source?): {category}{shorten(evidence, 300)}")
    return end_run(evolve(state, {"final_check": final}), Status.STOPPED, reason), None


NOT_RUN_AGAIN = ("not run again: its contract opens the network, and a second run would "
                 "reach the outside again; the header is comment lines only, and the script "
                 "still compiles with it")


def _not_run_again(state: RunState, script: str, record: VerifiedRecord,
                   target: RecordTarget, digest: str, on_event: Callable[[str, str], None]
                   ) -> tuple[RunState, VerifiedScript | None]:
    """A script with network: its passing attempt, the header added, is what is recorded;
    what the header could break without a run (the code's syntax) is checked here."""
    try:
        compile(script, target.spec, "exec")
    except (SyntaxError, ValueError) as exc:
        final = FinalCheck(script_sha256=digest, passed=False, evidence=str(exc))
        return end_run(evolve(state, {"final_check": final}), Status.STOPPED,
                       f"the script does not compile with its header: {exc}"), None
    on_event("verify", f"{NOT_RUN_AGAIN}; its record: {target.lock}")
    final = FinalCheck(script_sha256=digest, passed=True, skipped=NOT_RUN_AGAIN)
    return evolve(state, {"final_check": final}), VerifiedScript(script, record, target.lock)


def image_record(image: ImageIdentity | None) -> ImageRecord:
    """What a record keeps of the image; an image the run could not name is recorded by
    no tag, which a later check reports as a different image."""
    if image is None:
        return ImageRecord(tag="")
    return ImageRecord(tag=image.tag, context_hash=image.context_hash,
                       packages_digest=image.packages_digest)


def _as_read(state: RunState, loaded: LoadedSpec) -> Fingerprint:
    """The spec's files as the run read them when it started (not as they are now)."""
    return Fingerprint(
        prompt_sha256=prompt_digest(loaded.spec), fields_sha256=fields_digest(loaded.spec),
        script=None,
        inputs=tuple(FileDigest(path=item.path, sha256=item.sha256)
                     for item in state.input_digests),
        tests=tuple(FileDigest(path=item.path, sha256=item.sha256)
                    for item in state.test_digests))
