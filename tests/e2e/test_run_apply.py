"""`selfcorrect run SPEC --apply` for a script (issue 36): in a real git repository, with a
replayed model, the real loop and sandbox, the passing script goes into the repository at
its `output:` path with its header (after its shebang), checked once more so, and its
verification record beside it at `.selfcorrect/lock/<spec>.json`; the record names the
bytes on disk and reads back with no change to report. A script that reads its own source
and fails with the header is not published; work in the way is never overwritten."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.cli import main
from selfcorrect_action.report.run_json import load_run_json
from selfcorrect_action.spec import load_spec
from selfcorrect_action.verified.changes import changes
from selfcorrect_action.verified.fingerprint import fingerprint
from selfcorrect_action.verified.header import MARK
from selfcorrect_action.verified.record import load_record
from tests.fakes.replays import fenced, write_replay

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("sandbox_image")]

PROMPT = "Sum data/sales.csv's amount per region and print each region's total."
SPEC = ".selfcorrect/tasks/totals.yml"
OUTPUT = "scripts/totals.py"
LOCK = ".selfcorrect/lock/totals.json"
SCRIPT = """\
#!/usr/bin/env python3
import csv

totals = {}
with open("sales.csv", newline="") as handle:
    for row in csv.DictReader(handle):
        totals[row["region"]] = totals.get(row["region"], 0) + int(row["amount"])
with open("totals.csv", "w", newline="") as out:
    csv.writer(out).writerows([["region", "total"], *sorted(totals.items())])
for region, total in sorted(totals.items()):
    print(f"{region}: {total}")
"""
# Passes as the model wrote it, fails once a comment names selfcorrect in its source.
READS_ITSELF = """\
with open(__file__) as handle:
    source = handle.read()
with open("totals.csv", "w") as out:
    out.write("region,total\\nnorth,5\\nsouth,2\\n")
print("north: 5" if "# self" + "correct:" not in source else "a header")
"""
TESTS = """\
import csv


def test_the_totals():
    with open("totals.csv", newline="") as handle:
        assert list(csv.reader(handle))[1:] == [["north", "5"], ["south", "2"]]
"""


def _repo(root: Path) -> Path:
    files = {
        SPEC: json.dumps({
            "prompt": PROMPT, "output": OUTPUT, "inputs": ["data/sales.csv"],
            "tests": ["tests/test_totals.py"], "judge": False,
            "budget": {"patch_attempts": 0, "rethink_attempts": 0},
            "contract": {"artifacts": [], "stdout_contains": ["north: 5"], "timeout_s": 30,
                         "memory_mb": 512, "success_criteria": ["the totals are printed"]}}),
        "data/sales.csv": "region,amount\nnorth,2\nsouth,2\nnorth,3\n",
        "tests/test_totals.py": TESTS,
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@invalid", "commit", "-qm", "start"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)
    return root


def _apply(root: Path, tmp_path: Path, code: str, name: str) -> tuple[int, dict[str, Any]]:
    replay = write_replay(tmp_path / f"{name}.jsonl", PROMPT, [("generate", fenced(code))])
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exit_code = main(["run", str(root / SPEC), "--replay", str(replay), "--out",
                          str(tmp_path / name), "--apply", "--json"])
    return exit_code, json.loads(printed.getvalue())


@pytest.fixture(autouse=True)
def _no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SELFCORRECT_MODEL"):
        monkeypatch.delenv(name, raising=False)


def test_apply_writes_the_script_with_its_header_and_its_record(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")

    code, printed = _apply(root, tmp_path, SCRIPT, "first")

    assert (code, printed["status"], printed["applied"]) == (0, "passed", True), printed
    assert printed["output"] == str(root / OUTPUT) and printed["record"] == str(root / LOCK)
    written = (root / OUTPUT).read_bytes()
    lines = written.decode().splitlines()
    assert lines[0] == "#!/usr/bin/env python3", "the shebang stays first"
    assert lines[1] == f"{MARK} generated from {SPEC}; what was verified is in {LOCK}"
    assert lines[2] == f"{MARK} check it with `selfcorrect check {SPEC}` (no model call)"
    assert "\n".join(lines[3:]) + "\n" == SCRIPT.split("\n", 1)[1]

    record = load_record(root / LOCK)
    assert record is not None and record.spec == SPEC and record.script.path == OUTPUT
    assert record.script.sha256 == hashlib.sha256(written).hexdigest()
    sales = hashlib.sha256((root / "data/sales.csv").read_bytes()).hexdigest()
    assert [(item.path, item.sha256) for item in record.inputs] == [("data/sales.csv", sales)]
    assert [item.path for item in record.tests] == ["tests/test_totals.py"]
    assert record.image.tag and record.image.packages_digest, record.image
    # What `selfcorrect check` will compare: nothing differs from the repository.
    assert changes(record, fingerprint(load_spec(root / SPEC, root=root)), None) == []

    state = load_run_json(Path(printed["run_json"]).read_text())
    assert state.final_check is not None and state.final_check.passed
    assert state.final_check.script_sha256 == record.script.sha256
    assert state.input_digests[0].sha256 == sales and state.selfcorrect_version
    assert state.image is not None and state.image.packages_digest == (
        record.image.packages_digest)
    assert state.run_id == record.run_id
    assert (len(state.attempts), state.usage.llm_calls) == (1, 1), "the final check asked none"
    assert not (tmp_path / "first" / OUTPUT).exists(), "the script went to the repository"

    # A second --apply replaces selfcorrect's own uncommitted script: its record names it.
    again, printed = _apply(root, tmp_path, SCRIPT, "second")
    assert (again, printed["applied"]) == (0, True), printed
    assert (root / OUTPUT).read_bytes() == written


def test_a_script_that_fails_with_its_header_publishes_nothing(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")

    code, printed = _apply(root, tmp_path, READS_ITSELF, "out")

    assert (code, printed["status"], printed["applied"]) == (1, "stopped", False), printed
    assert "not with the header it is published with" in printed["stop_reason"]
    assert not (root / OUTPUT).exists() and not (root / LOCK).exists()
    state = load_run_json(Path(printed["run_json"]).read_text())
    assert state.attempts[-1].verdict is not None and state.attempts[-1].verdict.passed
    assert state.final_check is not None and not state.final_check.passed
    assert "a header" in state.final_check.evidence or "north: 5" in (
        state.final_check.evidence)


def test_apply_never_overwrites_a_hand_edited_script(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    mine = "print('my own')\n"
    (root / OUTPUT).parent.mkdir(parents=True)
    (root / OUTPUT).write_text(mine)

    code, printed = _apply(root, tmp_path, SCRIPT, "out")

    assert (code, printed["status"], printed["applied"]) == (1, "passed", False), printed
    assert f"{OUTPUT} has uncommitted changes" in printed["not_applied"]
    assert (root / OUTPUT).read_text() == mine and not (root / LOCK).exists()
    assert printed["output"] == str(tmp_path / "out" / OUTPUT)
    record = load_record(tmp_path / "out" / LOCK)
    assert record is not None and record.script.sha256 == hashlib.sha256(
        (tmp_path / "out" / OUTPUT).read_bytes()).hexdigest()
