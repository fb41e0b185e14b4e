"""Layer 2 for one artifact: it was written, copied out safely, has the right size, and its
bytes are what the contract's `kind` says (with the kind's own options).

Works on files already copied to the host. The sandbox client refuses links, oversized files
and unsafe paths while copying (ArtifactRecord.rejected); a refused file fails here with that
reason, and the host copy is opened only if it is a regular file.
"""

from __future__ import annotations

import difflib
import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

from selfcorrect_action.contract import ArtifactSpec
from selfcorrect_action.evaluation import checks
from selfcorrect_action.evaluation.documents import check_json, check_svg, check_txt
from selfcorrect_action.evaluation.images import check_image
from selfcorrect_action.evaluation.sniff import detect_kind
from selfcorrect_action.evaluation.tabular import check_csv
from selfcorrect_action.sandbox.models import WORK_DIR, ArtifactRecord
from selfcorrect_action.taxonomy import Check

__all__ = ["check_artifact", "detect_kind", "find_record"]

_KindChecker = Callable[[ArtifactSpec, Path], list[Check]]
_CHECKERS: dict[str, _KindChecker] = {
    "png": check_image,
    "jpeg": check_image,
    "svg": check_svg,
    "csv": check_csv,
    "json": check_json,
    "txt": check_txt,
}


def find_record(records: Sequence[ArtifactRecord], path: str) -> ArtifactRecord | None:
    """The record for the contract path `path`; records may name it relative or under /work."""
    wanted = _normalise(path)
    for record in records:
        if _normalise(record.path) == wanted:
            return record
    return None


def check_artifact(
    spec: ArtifactSpec, record: ArtifactRecord | None, *, written: Sequence[str] = (),
    unchanged: Sequence[str] = (),
) -> list[Check]:
    """Every check for one artifact, in order; stops after a failed existence check.

    `written` lists the paths the script did write, to point at a near miss ("chart.PNG");
    `unchanged` the inputs that came back as they went in (so they are no artifacts).
    """
    exists = _exists(spec, record, written, unchanged)
    if not exists.passed or record is None or record.host_path is None:
        return [exists]
    file = record.host_path
    results = [exists]
    size = file.lstat().st_size
    if spec.min_bytes is not None or spec.max_bytes is not None:
        results.append(_size(spec, size))
    checker = _CHECKERS.get(spec.kind)
    if checker is not None:
        results.extend(checker(spec, file))
    return results


def _exists(spec: ArtifactSpec, record: ArtifactRecord | None, written: Sequence[str],
            unchanged: Sequence[str]) -> Check:
    if record is None and _normalise(spec.path) in {_normalise(n) for n in unchanged}:
        return checks.failed(spec.path, "exists", (
            "this is an input, and the script left it as it was: an input counts as output "
            "only once the script rewrites it"))
    if record is None:
        return checks.failed(spec.path, "exists", _not_written(spec.path, written))
    if record.rejected is not None:
        reason = f"the script wrote it ({record.size:,} bytes) but it was not copied out"
        return checks.failed(spec.path, "exists", f"{reason}: {record.rejected}")
    problem = _host_copy_problem(record.host_path)
    if problem:
        return checks.failed(spec.path, "exists", problem)
    return checks.passed(spec.path, "exists", f"written, {record.size:,} bytes")


def _not_written(path: str, written: Sequence[str]) -> str:
    detail = "expected the script to write this file, found no such file in the work dir"
    names = [_normalise(name) for name in written]
    by_folded = {name.casefold(): name for name in names}  # "Chart.PNG" is a near miss too
    near = difflib.get_close_matches(_normalise(path).casefold(), list(by_folded), cutoff=0.6)
    if near:
        return f"{detail}; similar names written: {checks.listing([by_folded[n] for n in near])}"
    return f"{detail}; files written: {checks.listing(names, limit=8)}"


def _host_copy_problem(host_path: Path | None) -> str | None:
    if host_path is None:
        return "the script wrote it but no copy reached the host (no reason recorded)"
    try:
        mode = host_path.lstat().st_mode
    except OSError as exc:
        return f"the host copy {host_path} cannot be read: {os.strerror(exc.errno or 0)}"
    if not stat.S_ISREG(mode):
        # Never follow a link or open a device, even one our own copy step let through.
        return f"the host copy {host_path} is not a regular file"
    return None


def _size(spec: ArtifactSpec, size: int) -> Check:
    low, high = spec.min_bytes, spec.max_bytes
    if (low is None or size >= low) and (high is None or size <= high):
        return checks.passed(spec.path, "size", f"{size:,} bytes")
    bounds = [f"at least {low:,}"] if low is not None else []
    bounds += [f"at most {high:,}"] if high is not None else []
    expected = " and ".join(bounds)
    return checks.failed(spec.path, "size", f"expected {expected} bytes, found {size:,} bytes")


def _normalise(path: str) -> str:
    pure = PurePosixPath(path)
    if pure.is_relative_to(WORK_DIR):
        pure = pure.relative_to(WORK_DIR)
    return str(pure)
