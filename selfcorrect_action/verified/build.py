"""The verification record of a passing run, for the spec it ran: built from the run's
state and the repository as it stands (the inputs and tests the run read, the script as it
will be committed). Pure, given the digests."""

from __future__ import annotations

from datetime import UTC, datetime

from selfcorrect_action import __version__
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.spec import LoadedSpec
from selfcorrect_action.verified.fingerprint import (
    Fingerprint,
    fields_digest,
    prompt_digest,
    sha256_bytes,
)
from selfcorrect_action.verified.record import FileDigest, ImageRecord, VerifiedRecord, relative


def record_for(loaded: LoadedSpec, state: RunState, *, script: str, now: Fingerprint,
               image: ImageRecord, run_record: str = "",
               verified_at: str | None = None, spec: str | None = None) -> VerifiedRecord:
    """`script`: the text committed at the spec's output (its header included), which the
    run's final verification ran; `now`: the repository's digests (fingerprint.py);
    `spec`: how the record names the spec, by default its file's path in the repository
    (`issue #12` for a script born of an issue, which has no spec file: its `run_record`
    holds the spec)."""
    if spec is None and loaded.path is not None:
        spec = relative(loaded.root, loaded.path)
    if state.status is not Status.PASSED or not spec:
        raise ValueError("only a passing run of a spec file or an issue is recorded as "
                         "verified")
    if loaded.spec.kind not in ("script", "function"):
        raise ValueError(f"a {loaded.spec.kind} spec has no script to record")
    return VerifiedRecord(
        spec=spec, kind=loaded.spec.kind,
        prompt_sha256=prompt_digest(loaded.spec), fields_sha256=fields_digest(loaded.spec),
        script=FileDigest(path=relative(loaded.root, loaded.output_path),
                          sha256=sha256_bytes(script.encode("utf-8"))),
        inputs=list(now.inputs), tests=list(now.tests), image=image,
        selfcorrect_version=__version__,
        models={tier: name for tier, name in state.models.model_dump().items()
                if isinstance(name, str)},
        run_id=state.run_id,
        verified_at=verified_at or datetime.now(UTC).isoformat(timespec="seconds"),
        contract=state.contract,
        model_tests=dict(state.tests) if state.tests_written_by_plan else {},
        run_record=run_record)
