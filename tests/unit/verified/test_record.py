"""The verification record (issue 36): written and read back, named after its spec, a broken
one located in its file, one of another schema refused with what to do."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from selfcorrect_action.contract import ExecutionContract
from selfcorrect_action.errors import SpecError
from selfcorrect_action.verified.record import (
    FileDigest,
    ImageRecord,
    VerifiedRecord,
    dump_record,
    load_record,
    lock_path,
    save_record,
)

SHA = "a" * 64


def record(**changes: object) -> VerifiedRecord:
    fields: dict[str, object] = dict(
        spec=".selfcorrect/tasks/sales chart.yml", kind="script", prompt_sha256=SHA,
        fields_sha256=SHA, script=FileDigest(path="scripts/sales_chart.py", sha256=SHA),
        inputs=[FileDigest(path="data/sales.csv", sha256=SHA)],
        image=ImageRecord(tag="selfcorrect-sandbox:0.1.0-abc", context_hash="abc",
                          packages_digest=SHA),
        selfcorrect_version="0.1.0", models={"cheap": "m"}, run_id="0123abcd",
        verified_at="2026-12-07T19:00:00+00:00", contract=ExecutionContract(timeout_s=20),
        model_tests={"test_x.py": "def test_x():\n    assert True\n"})
    fields.update(changes)
    return VerifiedRecord.model_validate(fields)


def test_a_record_is_named_after_its_spec_and_reads_back(tmp_path: Path) -> None:
    path = save_record(tmp_path, record())

    assert path == tmp_path / ".selfcorrect/lock/sales-chart.json"
    assert lock_path(".selfcorrect/tasks/sales chart.yml") == ".selfcorrect/lock/sales-chart.json"
    assert load_record(path) == record()
    assert json.loads(path.read_text())["format"] == "selfcorrect.verified"


def test_no_record_is_none(tmp_path: Path) -> None:
    assert load_record(tmp_path / "absent.json") is None


@pytest.mark.parametrize(("text", "said"), [
    ('{"format": "selfcorrect.verified",\n  "schema_version": 1,\n  oops', "x.json:3:3: not JSON"),
    ('["a list"]', "x.json:1:1: not a selfcorrect verification record"),
    ('{"format": "selfcorrect.verified", "schema_version": 2}',
     "schema_version 2 is not one this selfcorrect reads (1)"),
    ('{"format": "selfcorrect.verified", "schema_version": true}', "schema_version True"),
    ('{"format": "selfcorrect.verified", "schema_version": 0}', "--update-lock"),
])
def test_a_broken_record_is_a_located_error(tmp_path: Path, text: str, said: str) -> None:
    (tmp_path / "x.json").write_text(text)

    with pytest.raises(SpecError) as caught:
        load_record(tmp_path / "x.json", shown="x.json")

    assert said in str(caught.value)


def test_a_newer_record_asks_for_a_newer_selfcorrect(tmp_path: Path) -> None:
    data = json.loads(dump_record(record()))
    (tmp_path / "x.json").write_text(json.dumps({**data, "schema_version": 7}))

    with pytest.raises(SpecError, match="a newer selfcorrect wrote it: upgrade selfcorrect"):
        load_record(tmp_path / "x.json")


def test_a_field_that_does_not_fit_is_located_on_its_line(tmp_path: Path) -> None:
    text = dump_record(record()).replace(f'"sha256": "{SHA}"', '"sha256": "nope"', 1)
    (tmp_path / "x.json").write_text(text)
    line = next(number for number, row in enumerate(text.splitlines(), 1) if '"nope"' in row)

    with pytest.raises(SpecError) as caught:
        load_record(tmp_path / "x.json", shown="x.json")

    assert f"x.json:{line}:1: inputs.0.sha256" in str(caught.value)


def test_a_folder_where_the_record_should_be_is_a_located_error(tmp_path: Path) -> None:
    (tmp_path / "x.json").mkdir()

    with pytest.raises(SpecError, match=r"x.json:1:1: "):
        load_record(tmp_path / "x.json", shown="x.json")


def test_two_specs_never_share_a_record_file_in_a_git_merge(tmp_path: Path) -> None:
    """One file per spec: two branches that each record another spec merge cleanly."""
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "0")
    for branch, spec in (("one", "a.yml"), ("two", "b.yml")):
        git("checkout", "-q", "-b", branch, "main")
        save_record(tmp_path, record(spec=spec))
        git("add", ".")
        git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "-m", branch)
    git("checkout", "-q", "one")
    git("-c", "user.email=a@b", "-c", "user.name=a", "merge", "-q", "--no-edit", "two")

    assert {p.name for p in (tmp_path / ".selfcorrect/lock").iterdir()} == {"a.json", "b.json"}
