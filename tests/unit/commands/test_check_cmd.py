"""`selfcorrect check` with no Docker engine (DOCKER_HOST names a socket nothing listens
on), on real git repositories: digests compared and specs validated, every status that
needs no sandbox, the exit codes, which specs and records are checked, and the table.
The re-verifications themselves: tests/integration/test_check_reverify.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfcorrect_action.commands.check_cmd import check
from selfcorrect_action.verified.record import lock_path
from tests.check_repo import (
    SPEC,
    by_spec,
    make_repo,
    no_docker,
    record_as_is,
    run_check,
    write,
)

REPAIR = ".selfcorrect/tasks/fix.yml"
HOOKS_FILE = Path(__file__).resolve().parents[3] / ".pre-commit-hooks.yaml"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


def test_a_spec_never_generated_is_missing_and_fails_only_strict(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, results = run_check(repo, capsys, environ=no_docker())
    assert code == 0
    assert results == [{"spec": SPEC, "status": "missing", "record": None,
                        "script": "scripts/sales.py", "changes": [], "reverified": None,
                        "failed_layer": None, "category": None, "evidence": "",
                        "took_ms": None, "sandbox_ms": None, "no_docker": False,
                        "lock": None, "problems": [], "locations": [],
                        "judge": None}]
    assert run_check(repo, capsys, environ=no_docker(), strict=True)[0] == 1


def test_matching_digests_without_docker_are_verified_the_image_not_compared(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record_as_is(repo)
    code, [result] = run_check(repo, capsys, environ=no_docker(), strict=True)
    assert (code, result["status"], result["no_docker"]) == (0, "verified", True)
    assert result["record"] == ".selfcorrect/lock/sales.json"


def test_a_change_without_docker_is_named_and_not_reverified(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record_as_is(repo)
    write(repo, "data/sales.csv", "amount\n1\n")
    write(repo, "tests/test_sales.py", "def test_nothing():\n    pass\n")
    code, [result] = run_check(repo, capsys, environ=no_docker())
    assert code == 0
    assert result["status"] == "changed" and result["no_docker"] is True
    assert result["reverified"] is None
    assert result["changes"] == ["input data/sales.csv (changed)",
                                 "test tests/test_sales.py (changed)"]
    assert run_check(repo, capsys, environ=no_docker(), strict=True)[0] == 1


def test_the_table_says_what_changed_and_that_reverification_needs_docker(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record_as_is(repo)
    write(repo, "scripts/sales.py", "print('edited by hand')\n")
    assert check([], cwd=repo, environ=no_docker()) == 0
    out, err = capsys.readouterr()
    assert (f"{SPEC}  changed         script scripts/sales.py (changed); not re-verified: "
            "no Docker engine") in out
    assert "re-verifying a\nchange, and comparing the sandbox image, needs Docker" in out
    assert "1 spec checked: 1 changed (exit 0)" in out
    assert f"{SPEC}: changed (not re-verified: no Docker engine)" in err


def test_a_repair_spec_is_not_applicable(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(repo, REPAIR, "prompt: fix the parser\nkind: repair\nfiles: [scripts/*.py]\n")
    _, results = run_check(repo, capsys, environ=no_docker())
    assert by_spec(results)[REPAIR]["status"] == "not_applicable"


def test_a_spec_that_does_not_validate_is_invalid_with_its_located_problems(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(repo, ".selfcorrect/tasks/bad.yml", "prompt: Chart the sales\nkind: scrpt\n")
    code, results = run_check(repo, capsys, environ=no_docker())
    bad = by_spec(results)[".selfcorrect/tasks/bad.yml"]
    assert code == 2 and bad["status"] == "invalid"
    assert bad["problems"] == [
        ".selfcorrect/tasks/bad.yml:2:1: kind: Input should be 'script', 'function' or "
        "'repair'; got 'scrpt'\n  hint: use one of the listed values"]


def test_a_broken_record_is_a_located_error(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record_as_is(repo)
    path = repo / lock_path(SPEC)
    path.write_text(path.read_text().replace('"run_id": "0123abcd"', '"run_id": "no way"'))
    code, [result] = run_check(repo, capsys, environ=no_docker())
    assert (code, result["status"]) == (2, "invalid")
    problems = result["problems"]
    assert isinstance(problems, list) and len(problems) == 1
    problem = str(problems[0])
    line = next(number for number, text in enumerate(path.read_text().splitlines(), 1)
                if '"run_id"' in text)
    assert problem.startswith(f".selfcorrect/lock/sales.json:{line}:1: run_id: String should "
                              "match pattern")


def test_a_record_of_a_newer_schema_is_refused_clearly(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record_as_is(repo)
    path = repo / lock_path(SPEC)
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "schema_version": 99}))
    code, [result] = run_check(repo, capsys, environ=no_docker())
    assert (code, result["status"]) == (2, "invalid")
    assert result["problems"] == [
        ".selfcorrect/lock/sales.json:1:1: schema_version 99 is not one this selfcorrect "
        "reads (1)\n  hint: a newer selfcorrect wrote it: upgrade selfcorrect"]


def test_a_record_whose_spec_is_gone_is_orphaned(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record_as_is(repo)
    (repo / SPEC).unlink()
    code, [result] = run_check(repo, capsys, environ=no_docker())
    assert (code, result["status"], result["record"]) == (0, "orphaned",
                                                         ".selfcorrect/lock/sales.json")
    assert run_check(repo, capsys, environ=no_docker(), strict=True)[0] == 1


def test_a_record_of_a_spec_outside_the_tasks_glob_checks_that_spec(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "specs").mkdir()
    (repo / SPEC).rename(repo / "specs/sales.yml")
    record_as_is(repo, "specs/sales.yml")
    _, [result] = run_check(repo, capsys, environ=no_docker())
    assert (result["spec"], result["status"]) == ("specs/sales.yml", "verified")


def test_two_specs_of_one_name_sharing_a_record_is_bad_input(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record_as_is(repo)
    write(repo, "other/sales.yml", (repo / SPEC).read_text())
    code, [result] = run_check(repo, capsys, "other/sales.yml", environ=no_docker())
    assert (code, result["status"]) == (2, "invalid")
    assert "this record is for .selfcorrect/tasks/sales.yml, not other/sales.yml" in str(
        result["problems"])


def test_named_specs_and_records_are_checked_alone(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(repo, ".selfcorrect/tasks/other.yml", "prompt: Print hi\n")
    record_as_is(repo)
    _, results = run_check(repo / ".selfcorrect", capsys, "tasks/other.yml",
                           environ=no_docker())
    assert [r["spec"] for r in results] == [".selfcorrect/tasks/other.yml"]
    _, results = run_check(repo, capsys, ".selfcorrect/lock/sales.json", environ=no_docker())
    assert [(r["spec"], r["status"]) for r in results] == [(SPEC, "verified")]


def test_touched_files_pick_the_specs_they_belong_to(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(repo, ".selfcorrect/tasks/other.yml", "prompt: Print hi\n")
    for touched, checked in [("data/sales.csv", [SPEC]), ("tests/test_sales.py", [SPEC]),
                             ("scripts/sales.py", [SPEC]), ("README.md", []),
                             (".selfcorrect/tasks/other.yml", [".selfcorrect/tasks/other.yml"]),
                             (lock_path(SPEC), [SPEC])]:
        _, results = run_check(repo, capsys, touched, environ=no_docker(),
                               touched_files=True)
        assert [r["spec"] for r in results] == checked, touched


def test_a_named_path_outside_the_repository_is_bad_usage(
        repo: Path, tmp_path: Path) -> None:
    from selfcorrect_action.errors import UsageError

    with pytest.raises(UsageError, match="is not inside the repository"):
        check([tmp_path / "elsewhere.yml"], cwd=repo, environ=no_docker())


def test_a_removed_script_is_missing_and_bad_input_beside_it_exits_2(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Two kinds of result in one check; the exit code's order is check.py's (unit-tested
    # there), this shows the command hands it every result.
    write(repo, ".selfcorrect/tasks/bad.yml", "prompt: x\nkind: scrpt\n")
    record_as_is(repo)
    (repo / "scripts/sales.py").unlink()
    code, results = run_check(repo, capsys, environ=no_docker())
    assert code == 2
    assert by_spec(results)[SPEC]["status"] == "missing"


def test_the_check_hook_runs_check_on_every_touched_file_serially() -> None:
    clientlib = pytest.importorskip("pre_commit.clientlib")
    found = {hook["id"]: hook for hook in clientlib.load_manifest(str(HOOKS_FILE))}
    hook = found["selfcorrect-check"]
    assert hook["entry"] == "selfcorrect check --touched"
    assert hook["language"] == "python" and hook["require_serial"] is True
    # Every file: an input or a test belongs to a spec wherever the repository keeps it.
    assert hook["files"] == "" and hook["pass_filenames"] is True


def issue_record(repo: Path) -> str:
    """The sales script as an issue's: no spec file, its record naming `issue #12` and the
    committed run.json that holds the spec (as the action records it)."""
    from selfcorrect_action.records import evolve
    from selfcorrect_action.report.run_json import run_json
    from selfcorrect_action.spec import load_spec
    from selfcorrect_action.verified.record import save_record
    from selfcorrect_action.verified.reverify import reverify_state

    loaded = load_spec(repo / SPEC, root=repo)
    state = reverify_state(loaded, None, (repo / "scripts/sales.py").read_text())
    state = evolve(state, {"spec": loaded.spec})  # a run keeps the spec as written
    write(repo, ".selfcorrect/runs/abc123/run.json", run_json(state, secrets=[]))
    record = evolve(record_as_is(repo), {"spec": "issue #12",
                                         "run_record": ".selfcorrect/runs/abc123/run.json"})
    (repo / lock_path(SPEC)).unlink()
    (repo / SPEC).unlink()
    save_record(repo, record)
    return lock_path("issue #12")


def test_an_issues_script_is_checked_through_its_record(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    where = issue_record(repo)
    _, [result] = run_check(repo, capsys, environ=no_docker())
    assert where == ".selfcorrect/lock/issue-12.json"
    assert (result["spec"], result["status"], result["record"]) == ("issue #12", "verified",
                                                                    where)
    write(repo, "data/sales.csv", "amount\n1\n")
    _, [result] = run_check(repo, capsys, "data/sales.csv", environ=no_docker(),
                            touched_files=True)
    assert (result["status"], result["changes"]) == ("changed",
                                                     ["input data/sales.csv (changed)"])
    (repo / ".selfcorrect/runs/abc123/run.json").unlink()
    code, [result] = run_check(repo, capsys, environ=no_docker())
    assert (code, result["status"]) == (2, "invalid")
    assert str(result["problems"]).startswith(
        "['.selfcorrect/lock/issue-12.json:1:1: its run record "
        ".selfcorrect/runs/abc123/run.json: ")


def test_model_flags_without_judge_are_bad_usage(repo: Path) -> None:
    from selfcorrect_action.errors import UsageError

    with pytest.raises(UsageError, match="--model, --replay: only --judge asks a model"):
        check([], cwd=repo, environ=no_docker(), model_flags={"model": "openai/x"},
              replay=Path("judge.jsonl"))


def test_judge_without_docker_asks_no_model_and_needs_none(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record_as_is(repo)
    write(repo, SPEC, (repo / SPEC).read_text().replace("per region", "per area"))
    environ = {name: value for name, value in no_docker().items()
               if not name.endswith("_API_KEY") and not name.startswith("SELFCORRECT_")}
    assert check([], cwd=repo, environ=environ, judge=True) == 0
    out, err = capsys.readouterr()
    assert "--judge: no Docker engine, so nothing is re-verified and no model asked" in err
    assert "--judge: no model asked, 0 tokens" in out


def test_the_table_shows_each_judges_verdict_and_cost_and_the_total() -> None:
    from selfcorrect_action.commands.check_cmd import summary
    from selfcorrect_action.verified.check import CheckStatus
    from selfcorrect_action.verified.results import CheckResult, JudgeResult

    asked = JudgeResult(verdict="pass", reasoning="it totals per area", model="openai/j",
                        calls=1, tokens=1234, cost_usd=0.0021)
    results = [
        CheckResult(spec="a.yml", status=CheckStatus.PASSES, changes=["prompt a.yml (changed)"],
                    reverified="passed", took_ms=1400, judge=asked),
        CheckResult(spec="b.yml", status=CheckStatus.FAILS, changes=["prompt b.yml (changed)"],
                    reverified="failed", took_ms=900, category="semantic",
                    evidence="the judge: it prints nothing",
                    judge=asked.model_copy(update={"verdict": "fail", "cost_usd": 0.001})),
    ]
    out = summary(results, update_lock=False, strict=False, code=1, judge=True)
    assert ("a.yml  passes          prompt a.yml (changed); re-verified in 1.4 s: passed\n"
            "                       judged with the new prompt: pass (openai/j, 1,234 tokens, "
            "$0.0021)\n") in out
    assert "semantic: the judge: it prints nothing" in out
    assert "--judge: the judge asked of 2 specs, 2 calls, 2,468 tokens, $0.0031\n" in out
