"""The repository's state for one spec, as the digests a verification record holds: what
`selfcorrect check` compares with the record, and what a publishing run records."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from selfcorrect_action.fileio import FileMissing, read_bounded
from selfcorrect_action.spec import LoadedSpec, TaskSpec
from selfcorrect_action.verified.record import FileDigest, relative

MAX_FILE_BYTES = 64 * 1024 * 1024
# Fields that cannot change a verdict reached with no model call: what a run may spend and
# which models it asks. Everything else of the spec (its contract, tests, inputs, output,
# isolation, tests_runner, signature, judge) is in the digest.
NOT_VERDICT_FIELDS = frozenset({"prompt", "budget", "models", "generation", "review"})


@dataclass(frozen=True)
class Fingerprint:
    prompt_sha256: str
    fields_sha256: str
    script: FileDigest | None  # None: the script is not in the repository
    inputs: tuple[FileDigest, ...]
    tests: tuple[FileDigest, ...]


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def prompt_digest(spec: TaskSpec) -> str:
    return sha256_bytes(spec.prompt.strip().encode("utf-8"))


def fields_digest(spec: TaskSpec) -> str:
    fields = spec.model_dump(mode="json", exclude=set(NOT_VERDICT_FIELDS))
    return sha256_bytes(json.dumps(fields, sort_keys=True, separators=(",", ":")).encode())


def fingerprint(loaded: LoadedSpec) -> Fingerprint:
    """Reads the spec's script, inputs and tests (FileProblem when one cannot be read;
    a script that is not there is None, which check reports as never generated)."""
    root = loaded.root
    return Fingerprint(
        prompt_sha256=prompt_digest(loaded.spec),
        fields_sha256=fields_digest(loaded.spec),
        script=_digest(root, loaded.output_path, missing_ok=True),
        inputs=tuple(_required(root, path) for path in loaded.input_paths),
        tests=tuple(_required(root, path) for path in loaded.test_paths),
    )


def file_digest(root: Path, path: Path) -> FileDigest:
    return _required(root, path)


def _required(root: Path, path: Path) -> FileDigest:
    found = _digest(root, path, missing_ok=False)
    assert found is not None
    return found


def _digest(root: Path, path: Path, *, missing_ok: bool) -> FileDigest | None:
    try:
        data = read_bounded(path, MAX_FILE_BYTES)
    except FileMissing:
        if missing_ok:
            return None
        raise
    return FileDigest(path=relative(root, path), sha256=sha256_bytes(data))
