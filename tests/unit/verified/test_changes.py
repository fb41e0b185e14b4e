"""What changed since a record (issue 36): the spec's prompt (stale) and its other fields,
each input, test and the script, the image; formatting and budget edits change nothing."""

from __future__ import annotations

from pathlib import Path

from selfcorrect_action.spec import load_spec
from selfcorrect_action.verified.changes import Change, What, changes, image_difference, is_stale
from selfcorrect_action.verified.fingerprint import fingerprint
from selfcorrect_action.verified.record import FileDigest, ImageRecord, VerifiedRecord
from tests.unit.verified.test_record import record

SPEC = """\
prompt: Read sales.csv and chart the total per region.
output: scripts/chart.py
inputs: [data/sales.csv]
tests: [tests/test_chart.py]
"""
IMAGE = ImageRecord(tag="selfcorrect-sandbox:0.1.0-abc", context_hash="abc",
                    packages_digest="b" * 64)


def repo(tmp_path: Path, spec: str = SPEC) -> Path:
    (tmp_path / ".git").mkdir(exist_ok=True)
    for path, text in {"data/sales.csv": "region,total\nn,1\n", "scripts/chart.py": "print(1)\n",
                       "tests/test_chart.py": "def test_x():\n    pass\n",
                       "task.yml": spec}.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    return tmp_path


def recorded(root: Path) -> VerifiedRecord:
    now = fingerprint(load_spec(root / "task.yml", root=root))
    assert now.script is not None
    return record(spec="task.yml", prompt_sha256=now.prompt_sha256,
                  fields_sha256=now.fields_sha256, script=now.script,
                  inputs=list(now.inputs), tests=list(now.tests), image=IMAGE)


def current(root: Path) -> list[Change]:
    return changes(recorded_at[root], fingerprint(load_spec(root / "task.yml", root=root)),
                   IMAGE)


recorded_at: dict[Path, VerifiedRecord] = {}


def test_nothing_changed_is_no_change(tmp_path: Path) -> None:
    root = repo(tmp_path)
    recorded_at[root] = recorded(root)

    assert current(root) == []


def test_a_comment_a_reformatting_or_a_budget_changes_nothing(tmp_path: Path) -> None:
    root = repo(tmp_path)
    recorded_at[root] = recorded(root)
    (root / "task.yml").write_text("# a comment\n" + SPEC.replace("inputs: [data/sales.csv]",
                                   "inputs:\n  - data/sales.csv") + "budget: {tokens: 9000}\n")

    assert current(root) == []


def test_each_file_change_is_named(tmp_path: Path) -> None:
    root = repo(tmp_path)
    recorded_at[root] = recorded(root)
    (root / "data/sales.csv").write_text("region\nn\n")
    (root / "tests/test_chart.py").write_text("def test_y():\n    pass\n")
    (root / "scripts/chart.py").write_text("print(2)\n")

    assert [str(change) for change in current(root)] == [
        "input data/sales.csv (changed)", "test tests/test_chart.py (changed)",
        "script scripts/chart.py (changed)"]
    assert not is_stale(current(root))


def test_a_new_prompt_is_stale_and_a_new_contract_a_spec_change(tmp_path: Path) -> None:
    root = repo(tmp_path)
    recorded_at[root] = recorded(root)
    (root / "task.yml").write_text(SPEC.replace("total per region", "mean per region")
                                   + "contract: {timeout_s: 5}\n")

    found = current(root)
    assert [change.what for change in found] == [What.PROMPT, What.SPEC]
    assert is_stale(found)


def test_an_input_added_or_removed_and_a_missing_script(tmp_path: Path) -> None:
    root = repo(tmp_path)
    recorded_at[root] = recorded(root)
    (root / "data/more.csv").write_text("a\n1\n")
    (root / "task.yml").write_text(SPEC.replace("[data/sales.csv]", "[data/more.csv]"))
    (root / "scripts/chart.py").unlink()

    assert [str(change) for change in current(root)] == [
        "spec task.yml (its fields changed)", "input data/more.csv (added)",
        "input data/sales.csv (removed)", "script scripts/chart.py (removed)"]


def test_the_image_counts_by_its_packages_when_both_know_them() -> None:
    other = ImageRecord(tag="selfcorrect-sandbox:0.1.0-abc", context_hash="abc",
                        packages_digest="c" * 64)
    rebuilt_same = ImageRecord(tag="selfcorrect-sandbox:0.1.0-def", context_hash="def",
                               packages_digest="b" * 64)
    unknown = ImageRecord(tag="selfcorrect-sandbox:0.1.0-abc", context_hash="abc")

    assert "installed packages differ: bbbbbbbbbbbb recorded" in image_difference(IMAGE, other)
    assert image_difference(IMAGE, rebuilt_same) == ""
    assert image_difference(IMAGE, unknown) == ""
    assert image_difference(unknown, ImageRecord(tag="t2", context_hash="zz")) == (
        "selfcorrect-sandbox:0.1.0-abc recorded, t2 now")


def test_without_an_image_the_image_is_not_compared(tmp_path: Path) -> None:
    root = repo(tmp_path)
    before = recorded(root)
    now = fingerprint(load_spec(root / "task.yml", root=root))

    assert changes(before, now, None) == []
    assert changes(before, now, ImageRecord(tag="x", packages_digest="d" * 64))[0].what is (
        What.IMAGE)
    assert FileDigest(path="a", sha256="e" * 64).path == "a"
