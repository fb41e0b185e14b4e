"""The record of what was verified for one spec: `.selfcorrect/lock/<task>.json`, one file
per spec so that two pull requests never conflict on one file.

It holds digests of everything the verdict depended on (the spec's prompt and its other
fields, each input, each test file, the script as committed), the sandbox image's identity,
who verified it (selfcorrect's version, the models, the run), and what a re-verification
with no model call needs that the spec does not hold: the contract as planned and the
tests a model wrote. A record is anyone's text once committed: it is read capped, parsed
strictly, and a broken one is an error located in its file; a record of another schema
version is read when this selfcorrect knows it, and refused with what to do otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from selfcorrect_action.contract import ExecutionContract
from selfcorrect_action.errors import SpecError
from selfcorrect_action.fileio import FileMissing, FileProblem, read_bounded, write_atomically
from selfcorrect_action.github.naming import task_slug

LOCK_DIR = ".selfcorrect/lock"
RECORD_FORMAT: Literal["selfcorrect.verified"] = "selfcorrect.verified"
RECORD_VERSION = 1
READABLE_VERSIONS = frozenset({1})
MAX_RECORD_BYTES = 4 * 1024 * 1024
_SHA256 = r"^[0-9a-f]{64}$"


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FileDigest(_Record):
    path: str = Field(min_length=1)  # relative to the repository root, / separated
    sha256: str = Field(pattern=_SHA256)


class ImageRecord(_Record):
    """The sandbox image the verdict was reached in (sandbox/identity.py)."""

    tag: str
    context_hash: str = ""
    packages_digest: str = ""  # "" when it could not be read: then only the tag counts


class VerifiedRecord(_Record):
    format: Literal["selfcorrect.verified"] = RECORD_FORMAT
    schema_version: int = RECORD_VERSION
    spec: str = Field(min_length=1)  # the spec file, relative to the repository root
    kind: Literal["script", "function"]
    prompt_sha256: str = Field(pattern=_SHA256)
    # Every field but the prompt, as the spec's schema reads them: a comment or a
    # reformatting changes nothing, an edited contract or test list does.
    fields_sha256: str = Field(pattern=_SHA256)
    script: FileDigest
    inputs: list[FileDigest] = Field(default_factory=list)
    tests: list[FileDigest] = Field(default_factory=list)
    image: ImageRecord
    selfcorrect_version: str
    models: dict[str, str] = Field(default_factory=dict)
    run_id: str = Field(pattern=r"^[0-9a-zA-Z_-]{1,64}$")
    status: Literal["passed"] = "passed"
    verified_at: str  # ISO 8601, UTC
    # What a zero-token re-verification needs beyond the spec: the contract the plan step
    # completed, and tests the plan step wrote (name -> text), frozen like the user's own.
    contract: ExecutionContract
    model_tests: dict[str, str] = Field(default_factory=dict)
    run_record: str = ""  # the committed run.json of the run that verified it, if any


def lock_path(spec: str) -> str:
    """`.selfcorrect/tasks/Sales Chart.yml` -> `.selfcorrect/lock/sales-chart.json`: named as
    the spec's task branch is, so one spec has one record."""
    return f"{LOCK_DIR}/{task_slug(spec)}.json"


def dump_record(record: VerifiedRecord) -> str:
    return json.dumps(record.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"


def save_record(root: Path, record: VerifiedRecord) -> Path:
    path = root / lock_path(record.spec)
    write_atomically(path, dump_record(record))
    return path


def load_record(path: Path, *, shown: str | None = None) -> VerifiedRecord | None:
    """The record at `path`, None when there is none; SpecError located in the file for a
    broken one or one of a schema this selfcorrect does not read."""
    where = shown or path.as_posix()
    try:
        data = read_bounded(path, MAX_RECORD_BYTES)
    except FileMissing:
        return None
    except FileProblem as exc:
        raise SpecError([f"{where}:1:1: {exc.problem}\n  hint: {exc.hint}"]) from exc
    return parse_record(data.decode("utf-8", errors="replace"), where)


def parse_record(text: str, where: str) -> VerifiedRecord:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecError([f"{where}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}\n  hint: "
                         "a record is written by selfcorrect; restore it from git, or "
                         "run `selfcorrect check --update-lock` on its spec"]) from exc
    if not isinstance(raw, dict) or raw.get("format") != RECORD_FORMAT:
        raise SpecError([f"{where}:1:1: not a selfcorrect verification record (its `format` "
                         f"is not {RECORD_FORMAT!r})\n  hint: {LOCK_DIR}/ holds only the "
                         "records selfcorrect writes"])
    version = raw.get("schema_version")
    if type(version) is not int or version not in READABLE_VERSIONS:
        newer = type(version) is int and version > RECORD_VERSION
        raise SpecError([f"{where}:1:1: schema_version {version!r} is not one this "
                         f"selfcorrect reads ({', '.join(map(str, sorted(READABLE_VERSIONS)))})"
                         "\n  hint: " + ("a newer selfcorrect wrote it: upgrade selfcorrect"
                                        if newer else "write it again with "
                                        "`selfcorrect check --update-lock`")])
    try:
        return VerifiedRecord.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(top)"
        raise SpecError([f"{where}:{_line_of(text, first['loc'])}:1: {field}: {first['msg']}"
                         "\n  hint: restore the record from git, or write it again with "
                         "`selfcorrect check --update-lock`"]) from exc


def _line_of(text: str, loc: tuple[int | str, ...]) -> int:
    """The line of the field at `loc` in the pretty-printed JSON: each key searched for from
    the line of the one before it (1 when not found)."""
    lines = text.splitlines()
    found = 0
    for part in loc:
        if not isinstance(part, str):
            continue
        needle = json.dumps(part) + ":"
        found = next((number for number in range(found, len(lines))
                      if lines[number].strip().startswith(needle)), found)
    return found + 1


def relative(root: Path, path: Path) -> str:
    """`path` as a record names it: relative to the repository root, / separated."""
    return PurePosixPath(path.resolve().relative_to(root.resolve())).as_posix()
