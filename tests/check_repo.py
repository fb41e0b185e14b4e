"""A real git repository for `selfcorrect check`'s tests (issue 36): a script that totals
sales.csv per region into totals.csv, a spec whose contract wants the `region` and `total`
columns, and a frozen test that reads the totals; `check` run in-process on it as the CLI
runs it, its --json list read back."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from selfcorrect_action.choices import Runtime
from selfcorrect_action.commands.check_cmd import check
from selfcorrect_action.contract import ExecutionContract
from selfcorrect_action.spec import load_spec
from selfcorrect_action.verified.fingerprint import fingerprint
from selfcorrect_action.verified.record import (
    ImageRecord,
    VerifiedRecord,
    lock_path,
    save_record,
)

SPEC = ".selfcorrect/tasks/sales.yml"
SPEC_TEXT = """\
prompt: Read sales.csv and write totals.csv with the total amount per region.
output: scripts/sales.py
inputs: [data/sales.csv]
tests: [tests/test_sales.py]
contract:
  artifacts:
    - path: totals.csv
      kind: csv
      columns: [region, total]
"""
SALES = "region,amount\nnorth,1\nsouth,2\nnorth,3\n"
# The first column is the key: a sales.csv without `region` gives totals.csv without it.
SCRIPT = """\
import csv

totals = {}
with open("sales.csv", newline="") as f:
    reader = csv.DictReader(f)
    key = reader.fieldnames[0]
    for row in reader:
        totals[row[key]] = totals.get(row[key], 0) + float(row["amount"])
with open("totals.csv", "w", newline="") as out:
    writer = csv.writer(out)
    writer.writerow([key, "total"])
    for name, total in totals.items():
        writer.writerow([name, total])
print("done")
"""
TEST = """\
import csv


def test_totals():
    with open("totals.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert {row[next(iter(row))] for row in rows} >= {"north", "south"}
"""
NO_DOCKER = "unix:///nonexistent/selfcorrect-check-test.sock"
IMAGE = ImageRecord(tag="selfcorrect-sandbox:0.1.0-abc", context_hash="abc",
                    packages_digest="b" * 64)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                   cwd=repo, check=True, capture_output=True)


def make_repo(root: Path, files: Mapping[str, str] | None = None) -> Path:
    """A committed repository holding the sales spec, its input, test and script (or
    `files` instead)."""
    root.mkdir(parents=True, exist_ok=True)
    wanted = files if files is not None else {
        SPEC: SPEC_TEXT, "data/sales.csv": SALES, "scripts/sales.py": SCRIPT,
        "tests/test_sales.py": TEST}
    for path, text in wanted.items():
        write(root, path, text)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "specs")
    return root


def write(root: Path, path: str, text: str) -> None:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text)


def record_as_is(root: Path, spec: str = SPEC, image: ImageRecord = IMAGE) -> VerifiedRecord:
    """A record of the repository as it stands (what a passing run would have written),
    made without a run: for the tests that need no sandbox."""
    now = fingerprint(load_spec(root / spec, root=root))
    assert now.script is not None
    record = VerifiedRecord(
        spec=spec, kind="script", prompt_sha256=now.prompt_sha256,
        fields_sha256=now.fields_sha256, script=now.script, inputs=list(now.inputs),
        tests=list(now.tests), image=image, selfcorrect_version="0.1.0",
        models={"cheap": "m"}, run_id="0123abcd", verified_at="2026-12-07T19:00:00+00:00",
        contract=ExecutionContract())
    save_record(root, record)
    assert (root / lock_path(spec)).is_file()
    return record


def run_check(root: Path, capsys: pytest.CaptureFixture[str], *paths: str,
              environ: Mapping[str, str] | None = None, strict: bool = False,
              update_lock: bool = False, touched_files: bool = False,
              runtime: Runtime | None = None) -> tuple[int, list[dict[str, object]]]:
    """`selfcorrect check --json [PATH...]` in `root`: the exit code and the results."""
    capsys.readouterr()
    code = check([Path(path) for path in paths], as_json=True, cwd=root,
                 environ=os.environ if environ is None else environ, strict=strict,
                 update_lock=update_lock, touched_files=touched_files, runtime=runtime)
    return code, json.loads(capsys.readouterr().out)


def no_docker() -> dict[str, str]:
    """The environment with DOCKER_HOST naming a socket nothing listens on."""
    return {**os.environ, "DOCKER_HOST": NO_DOCKER}


def by_spec(results: list[dict[str, object]]) -> dict[str, dict[str, object]]:
    return {str(result["spec"]): result for result in results}
