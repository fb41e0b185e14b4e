"""What `selfcorrect verify` re-runs, read without Docker (issue 36, item 6): from a run.json
the passing attempt's code, the run's spec, contract and tests and the inputs as the
repository holds them (a missing one named, exit 2); from a record or its spec the script
committed at the spec's output; and the references that name nothing to verify."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfcorrect_action.cli import main
from selfcorrect_action.contract import ExecutionContract
from selfcorrect_action.errors import UsageError
from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.loop.state import Attempt, FileSha256, RunState, Status, Strategy
from selfcorrect_action.report.run_json import run_json
from selfcorrect_action.spec import LoadedSpec, TaskSpec, load_spec
from selfcorrect_action.taxonomy import TestOutcome, Verdict
from selfcorrect_action.verified.build import record_for
from selfcorrect_action.verified.fingerprint import fingerprint, sha256_bytes
from selfcorrect_action.verified.record import ImageRecord, save_record
from selfcorrect_action.verified.rerun import (
    from_record,
    from_run,
    from_spec,
    is_record,
    record_root,
    run_root,
)

CODE = "print(open('sales.csv').read())\n"
TESTS = {"test_totals.py": "def test_x():\n    assert True\n"}
SPEC = TaskSpec(prompt="Print sales.csv.", output="scripts/totals.py",
                inputs=["data/sales.csv"], tests=["tests/test_totals.py"], judge=True)


def run_state(*, status: Status = Status.PASSED, **changes: object) -> RunState:
    attempt = Attempt(index=1, strategy=Strategy.INITIAL, tier="cheap", model="m", code=CODE,
                      code_sha="0" * 64, verdict=Verdict(passed=status is Status.PASSED),
                      tests=[TestOutcome(test_id="test_totals.py::test_x", outcome="passed")])
    fields: dict[str, object] = dict(
        run_id="3fa2b1c9", started_at="2026-12-07T19:00:00Z", spec_source="task.yml",
        spec=SPEC, output_name="totals.py", contract=ExecutionContract(timeout_s=20),
        tests=TESTS, inputs=["sales.csv"], models=ModelTiers(judge="judge-model"),
        runtime="runsc", attempts=[attempt], status=status)
    fields.update(changes)
    return RunState.model_validate(fields)


def repo(root: Path) -> Path:
    (root / ".git").mkdir(parents=True)
    for path, text in {"task.yml": SPEC.model_dump_json(), "data/sales.csv": "a,b\n1,2\n",
                       "scripts/totals.py": CODE, "tests/test_totals.py":
                       TESTS["test_totals.py"]}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def test_a_run_is_re_run_with_its_own_code_contract_and_tests_and_the_inputs_now(
        tmp_path: Path) -> None:
    root = repo(tmp_path)
    subject = from_run(run_state(), "out/run.json", root=root, runtime=None)

    state = subject.state
    assert state.attempts[0].code == CODE and len(state.attempts) == 1
    assert (state.contract.timeout_s, state.tests, state.runtime) == (20, TESTS, "runsc")
    assert state.spec.judge is False and state.run_id != "3fa2b1c9"
    assert subject.loaded.input_paths == [root.resolve() / "data/sales.csv"]
    assert [d.path for d in subject.digests.inputs or ()] == ["data/sales.csv"]
    assert subject.digests.script.sha256 == sha256_bytes(CODE.encode())
    recorded = subject.recorded
    assert (recorded.run_id, recorded.runtime, recorded.judge) == ("3fa2b1c9", "runsc", "")
    # A run before schema 9 recorded neither the inputs' digests nor its image.
    assert (recorded.digests.inputs, recorded.image) == (None, None)
    assert from_run(run_state(), "x", root=root, runtime="runc").state.runtime == "runc"


def test_a_run_of_schema_9_gives_its_input_digests_and_image_and_its_judge(
        tmp_path: Path) -> None:
    from selfcorrect_action.sandbox.identity import ImageIdentity

    image = ImageIdentity(tag="t", context_hash="c", image_id="sha256:1",
                          packages_digest="d" * 64, packages=3)
    state = run_state(selfcorrect_version="0.1.0", image=image,
                      input_digests=[FileSha256(path="data/sales.csv", sha256="e" * 64)])
    judged = state.model_copy(update={"attempts": [state.attempts[0].model_copy(
        update={"judge": {"passed": True, "reasoning": "ok"}})]})
    recorded = from_run(judged, "x", root=repo(tmp_path), runtime=None).recorded

    assert [(d.path, d.sha256) for d in recorded.digests.inputs or ()] == [
        ("data/sales.csv", "e" * 64)]
    assert recorded.image == ImageRecord(tag="t", context_hash="c", packages_digest="d" * 64)
    assert (recorded.image_id, recorded.selfcorrect_version) == ("sha256:1", "0.1.0")
    assert recorded.judge == "judge-model"


def test_an_input_missing_from_the_repository_is_named_where_it_was_looked_for(
        tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / "data/sales.csv").unlink()

    with pytest.raises(UsageError) as caught:
        from_run(run_state(), "out/run.json", root=root, runtime=None)
    assert caught.value.exit_code == 2
    assert caught.value.message == (
        "out/run.json: the input data/sales.csv that the run's spec names is not in the "
        f"repository ({root.resolve() / 'data/sales.csv'}); a run folder keeps no inputs")
    assert caught.value.hint is not None and str(root.resolve()) in caught.value.hint


@pytest.mark.parametrize("status", [Status.EXHAUSTED, Status.STOPPED, Status.CANCELLED])
def test_a_run_that_did_not_pass_has_no_verdict_to_reproduce(tmp_path: Path,
                                                             status: Status) -> None:
    with pytest.raises(UsageError, match=f"did not pass \\({status}\\)"):
        from_run(run_state(status=status), "x", root=repo(tmp_path), runtime=None)


def test_a_run_s_inputs_are_read_from_its_spec_s_repository_else_the_current_one(
        tmp_path: Path) -> None:
    root = repo(tmp_path / "repo")
    (root / "sub").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    assert run_root(run_state(), root) == root
    assert run_root(run_state(), root / "sub") == root
    assert run_root(run_state(), elsewhere) == elsewhere


def test_a_record_re_runs_the_script_committed_at_the_spec_s_output(tmp_path: Path) -> None:
    root = repo(tmp_path)
    lock = _record(root, judge_tier="judge-model")

    assert is_record(lock) and record_root(lock) == root.resolve()
    for subject in (from_record(lock, runtime="runc"),
                    from_spec(root / "task.yml", runtime="runc")):
        assert subject.state.attempts[0].code == CODE
        assert subject.digests.script == subject.recorded.digests.script
        assert subject.digests.inputs == subject.recorded.digests.inputs
        assert subject.recorded.judge == "judge-model"  # the spec has judge: true


def test_a_record_of_a_script_born_of_an_issue_reads_its_spec_from_the_run_it_committed(
        tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / "task.yml").unlink()
    committed = root / ".selfcorrect/runs/3fa2b1c9/run.json"
    committed.parent.mkdir(parents=True)
    committed.write_text(run_json(run_state(spec_source="issue #12"), secrets=[]))
    lock = _record(root, spec="issue #12", run_record=".selfcorrect/runs/3fa2b1c9/run.json")

    subject = from_record(lock, runtime="runc")
    assert (subject.loaded.source, subject.loaded.spec) == ("issue #12", SPEC)
    assert subject.digests.fields_sha256 == subject.recorded.digests.fields_sha256
    committed.unlink()
    with pytest.raises(UsageError, match=r"the run\.json that holds its spec"):
        from_record(lock, runtime="runc")


def test_a_record_whose_script_is_gone_says_so(tmp_path: Path) -> None:
    root = repo(tmp_path)
    lock = _record(root)
    (root / "scripts/totals.py").unlink()

    with pytest.raises(UsageError, match=r"the script scripts/totals\.py is not in the "
                       r"repository"):
        from_record(lock, runtime="runc")


def test_a_spec_without_a_record_names_the_record_it_looked_for(tmp_path: Path) -> None:
    root = repo(tmp_path)
    with pytest.raises(UsageError, match=r"no verification record \(\.selfcorrect/lock/"
                       r"task\.json\)"):
        from_spec(root / "task.yml", runtime="runc")


def test_a_run_json_is_no_record(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(run_json(run_state(), secrets=[]))
    assert not is_record(path)
    (tmp_path / "broken.json").write_text("{")
    assert not is_record(tmp_path / "broken.json")


def test_verify_exits_2_naming_what_it_cannot_verify(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    root = repo(tmp_path / "repo")
    monkeypatch.chdir(root)
    failed = tmp_path / "failed.json"
    failed.write_text(run_json(run_state(status=Status.EXHAUSTED), secrets=[]))

    assert main(["verify", str(failed)]) == 2
    assert "did not pass (exhausted)" in capsys.readouterr().err
    assert main(["verify", "task.yml", "--json"]) == 2
    shown = json.loads(capsys.readouterr().out)
    assert shown["exit_code"] == 2 and "no verification record" in shown["error"]
    assert main(["verify", "nosuchrun", "--history", str(tmp_path / "history")]) == 2
    assert main(["verify", ".selfcorrect/lock/gone.json"]) == 2
    assert ".selfcorrect/lock/gone.json: no such file or folder" in capsys.readouterr().err


def _record(root: Path, *, judge_tier: str = "m", **changes: str) -> Path:
    if (root / "task.yml").is_file():
        loaded = load_spec(root / "task.yml", root=root)
    else:
        loaded = LoadedSpec(SPEC, "issue", root, path=root / "task.yml")
    state = run_state(models=ModelTiers(judge=judge_tier))
    record = record_for(loaded, state, script=CODE, now=fingerprint(loaded),
                        image=ImageRecord(tag="t"))
    return save_record(root, record.model_copy(update=changes))
