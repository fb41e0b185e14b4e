"""`run --apply` for a script or a function (issue 36): the passing script, its header in,
written into the repository at the spec's `output:` path, and its verification record at
`.selfcorrect/lock/<spec>.json`, as a repair's `--apply` writes the files it changed.

Like a repair's, it never overwrites work: a script that changed in the working tree while
the run went on, or that git reports with uncommitted changes, is refused (unless it is
the very script the spec's record says selfcorrect wrote there: a second `--apply` before a
commit), and the script and its record then go to the output folder instead, so nothing
the run found is lost.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from selfcorrect_action.errors import SpecError, UsageError
from selfcorrect_action.fileio import write_atomically
from selfcorrect_action.report.writer import destination
from selfcorrect_action.runs.published import RecordTarget, VerifiedScript
from selfcorrect_action.runs.repair_output import current_bytes, uncommitted
from selfcorrect_action.spec import LoadedSpec
from selfcorrect_action.verified.record import load_record, relative


@dataclass(frozen=True)
class AppliedScript:
    script: Path
    record: Path
    refused: str = ""  # why they went to the output folder instead of the repository


def apply_target(loaded: LoadedSpec) -> RecordTarget:
    """How the header and record name the spec: its path in the repository. A task with no
    spec file in the repository (a --prompt) has nothing to name."""
    if loaded.path is None:
        raise UsageError("apply writes a script into the repository beside its spec file, "
                         f"and {loaded.source} has none",
                         hint="write the task as a spec file in the repository, or drop "
                         "--apply: the script is written to --out")
    try:
        return RecordTarget(spec=relative(loaded.root, loaded.path))
    except ValueError:
        raise UsageError(f"--apply: the spec {loaded.path} is outside the repository "
                         f"{loaded.root}", hint="run it from inside its repository") from None


def output_now(loaded: LoadedSpec) -> bytes | None:
    """The script at the spec's output as it is (None: no file): what --apply compares with
    once the run is done."""
    return current_bytes(loaded.output_path)


def apply_script(verified: VerifiedScript, loaded: LoadedSpec, out_dir: Path, *,
                 before: bytes | None) -> AppliedScript:
    output = str(loaded.spec.output)
    refused = apply_refusal(loaded, verified.lock, before=before)
    root = out_dir if refused else loaded.root
    script = destination(root, output)
    write_atomically(script, verified.script)
    record = destination(root, verified.lock)
    write_atomically(record, verified.record_text)
    return AppliedScript(script, record, refused)


def apply_refusal(loaded: LoadedSpec, lock: str, *, before: bytes | None) -> str:
    """Why the script may not be written into the working tree ("" when it may)."""
    output = str(loaded.spec.output)
    now = current_bytes(loaded.output_path)
    if now != before:
        return (f"{output} changed in the working tree while the run went on: applying "
                "would overwrite that work")
    if now is None or _recorded(loaded.root, lock, now):
        return ""
    if uncommitted(loaded.root, [output]):
        return (f"{output} has uncommitted changes: commit or stash them, then run again "
                "with --apply")
    return ""


def _recorded(root: Path, lock: str, script: bytes) -> bool:
    """Whether `script` is the one the spec's record says selfcorrect verified there."""
    try:
        record = load_record(root / lock)
    except SpecError:
        return False
    return record is not None and record.script.sha256 == hashlib.sha256(script).hexdigest()
