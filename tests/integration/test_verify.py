"""`selfcorrect verify` in the real sandbox (issue 36, item 6): a replayed `selfcorrect run`,
then its run.json, its folder and its run id verified; an input edited so the verdict holds
(exit 0, the digest listed) and so it does not (exit 1, the category, the evidence and the
input named); a verification record made by `record_for` verified, and the same record
claiming other installed packages said to be of another image."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfcorrect_action.cli import main
from selfcorrect_action.report.run_json import load_run_json
from selfcorrect_action.sandbox.identity import image_identity
from selfcorrect_action.spec import load_spec
from selfcorrect_action.verified.build import record_for
from selfcorrect_action.verified.fingerprint import fingerprint
from selfcorrect_action.verified.record import ImageRecord, save_record
from tests.fakes.replays import fenced, write_replay

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("sandbox_image")]

PROMPT = "Sum sales.csv's amount per region into totals.csv."
SCRIPT = """\
import csv

with open("sales.csv", newline="") as handle:
    rows = list(csv.DictReader(handle))
totals = {}
for row in rows:
    totals[row["region"]] = totals.get(row["region"], 0) + int(row["amount"])
with open("totals.csv", "w", newline="") as out:
    writer = csv.writer(out)
    writer.writerow(["region", "total"])
    for region, total in sorted(totals.items()):
        writer.writerow([region, total])
"""
SPEC = f"""\
prompt: {PROMPT}
output: scripts/totals.py
inputs: [data/sales.csv]
tests: [tests/test_totals.py]
judge: false
budget: {{patch_attempts: 0, rethink_attempts: 0}}
contract:
  artifacts:
    - {{path: totals.csv, kind: csv, columns: [region, total]}}
"""
TESTS = """\
import csv


def test_the_totals():
    with open("totals.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows == [{"region": "north", "total": "5"}, {"region": "south", "total": "2"}]
"""
SALES = "region,amount\nnorth,2\nsouth,2\nnorth,3\n"


@pytest.fixture
def ran(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository whose spec `selfcorrect run` passed (replayed); the current folder."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    for path, text in {"task.yml": SPEC, "data/sales.csv": SALES,
                       "tests/test_totals.py": TESTS}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    replay = write_replay(tmp_path / "replay.jsonl", PROMPT, [
        ("plan", '{"approach": "sum per region"}'), ("generate", fenced(SCRIPT))])
    monkeypatch.chdir(root)
    assert main(["run", "task.yml", "--replay", str(replay), "--out", "out"]) == 0
    return root


def verify(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["verify", *args])
    return code, capsys.readouterr().out


def test_a_run_s_verdict_is_reproduced_from_its_run_json_folder_and_id(
        ran: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, shown = verify(capsys, "out/run.json")
    assert code == 0, shown
    assert shown.splitlines()[0] == "reproduced: passed"
    assert "differ" not in shown and "not compared: the inputs" not in shown

    run_id = load_run_json((ran / "out/run.json").read_text()).run_id
    for ref in ("out", run_id[:8]):
        code, shown = verify(capsys, ref, "--json")
        result = json.loads(shown)
        assert (code, result["reproduced"], result["identical"]) == (0, True, True), shown
        assert result["recorded"]["run_id"] == run_id
        assert [t["outcome"] for t in result["tests"]] == ["passed"]


def test_an_edited_input_is_named_and_a_verdict_that_no_longer_holds_fails(
        ran: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sales = ran / "data/sales.csv"
    sales.write_text("region,amount\nnorth,3\nnorth,2\nsouth,2\n")  # the same totals
    code, shown = verify(capsys, "out/run.json")
    assert code == 0, shown
    assert shown.splitlines()[:2] == [
        "reproduced: passed, but 1 thing differs from the record:",
        shown.splitlines()[1]]
    assert shown.splitlines()[1].startswith("  input data/sales.csv: its digest differs (")

    sales.write_text("region\nnorth\nsouth\n")  # the amount column dropped
    code, shown = verify(capsys, "out/run.json")
    assert code == 1, shown
    assert shown.splitlines()[0] == ("not reproduced: passed when recorded, now failed at "
                                     "the execution layer (runtime)")
    assert "KeyError: 'amount'" in shown
    assert "  input data/sales.csv: its digest differs (" in shown


def test_a_record_made_by_record_for_is_reproduced_and_another_image_is_said(
        ran: Path, capsys: pytest.CaptureFixture[str], docker_engine: object,
        sandbox_image: str) -> None:
    state = load_run_json((ran / "out/run.json").read_text())
    (ran / "scripts").mkdir()
    (ran / "scripts/totals.py").write_text(SCRIPT)
    loaded = load_spec(ran / "task.yml", root=ran)
    identity = image_identity(docker_engine, sandbox_image)  # type: ignore[arg-type]
    image = ImageRecord(tag=identity.tag, context_hash=identity.context_hash,
                        packages_digest=identity.packages_digest)
    lock = save_record(ran, record_for(loaded, state, script=SCRIPT, now=fingerprint(loaded),
                                       image=image))

    for ref in (str(lock.relative_to(ran)), "task.yml"):
        code, shown = verify(capsys, ref)
        assert (code, shown.splitlines()[0]) == (0, "reproduced: passed"), shown

    other = image.model_copy(update={"packages_digest": "0" * 64})
    save_record(ran, record_for(loaded, state, script=SCRIPT, now=fingerprint(loaded),
                                image=other))
    code, shown = verify(capsys, "task.yml")
    assert code == 0, shown
    assert (f"  the image differs: its installed packages differ: 000000000000 recorded, "
            f"{identity.packages_digest[:12]} now") in shown.splitlines()
