"""`selfcorrect check --judge` end to end (issue 36, item 2), through the CLI's `main` on a
real git repository and the real sandbox: a hand-written script recorded by --update-lock,
then its spec's prompt changed (stale). The judge, replayed through litellm's replay
provider in its strict JSON format, passes the script for the new prompt (passes, the
record then takes the new prompt) or fails it (fails, semantic, its reasons the evidence,
with or without --strict). No model configured is bad usage, said before anything is
re-verified; with nothing stale, --judge asks nothing and needs no model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfcorrect_action.cli import main
from selfcorrect_action.runs.prepare import PROVIDER_KEYS
from selfcorrect_action.verified.record import lock_path
from tests.check_repo import SPEC, SPEC_TEXT, make_repo, run_check, write
from tests.fakes.replays import write_replay

OLD = "with the total amount per region."
NEW = "with the total amount per region, and print done when finished."
PROMPT = f"Read sales.csv and write totals.csv {NEW}"  # the spec's prompt, once changed
PASS = json.dumps({"verdict": "pass", "reasoning": "It writes the totals per region and "
                   "prints done at the end.", "unmet_criteria": []})
FAIL = json.dumps({"verdict": "fail", "reasoning": "The totals are not sorted by amount.",
                   "unmet_criteria": ["regions sorted by total, largest first"]})


@pytest.fixture
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """No model configured anywhere: no key, no SELFCORRECT_MODEL, no API base."""
    for name in (*PROVIDER_KEYS, "SELFCORRECT_MODEL", "SELFCORRECT_API_BASE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def stale(tmp_path: Path, sandbox_image: str, capsys: pytest.CaptureFixture[str],
          monkeypatch: pytest.MonkeyPatch, no_model: None) -> Path:
    """A repository whose script was recorded by --update-lock, then its prompt changed."""
    repo = make_repo(tmp_path / "repo")
    code, [result] = run_check(repo, capsys, update_lock=True)
    assert (code, result["status"], result["lock"]) == (0, "passes", "written"), result
    assert f"prompt: Read sales.csv and write totals.csv {OLD}" in SPEC_TEXT
    write(repo, SPEC, SPEC_TEXT.replace(OLD, NEW))
    monkeypatch.chdir(repo)
    return repo


def judge_check(capsys: pytest.CaptureFixture[str], *args: str
                ) -> tuple[int, dict[str, object], str]:
    """`selfcorrect check --judge --json ARGS`: the exit code, the one result, stderr."""
    capsys.readouterr()
    code = main(["check", "--judge", "--json", *args])
    out, err = capsys.readouterr()
    [result] = json.loads(out)
    return code, result, err


def test_the_judge_passes_a_stale_spec_and_the_record_takes_the_new_prompt(
        stale: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    replay = write_replay(tmp_path / "judge.jsonl", PROMPT, [("judge", PASS)])
    code, result, err = judge_check(capsys, "--replay", str(replay), "--update-lock")

    assert "--judge asks a model: 1 stale spec (.selfcorrect/tasks/sales.yml)" in err
    assert err.index("--judge asks a model") < err.index("re-verifying")  # said up front
    assert code == 0
    assert result["status"] == "passes" and result["reverified"] == "passed"
    assert result["changes"] == [f"prompt {SPEC} (changed)"]
    judge = result["judge"]
    assert isinstance(judge, dict)
    assert judge["verdict"] == "pass" and "prints done" in str(judge["reasoning"])
    assert (judge["calls"], judge["tokens"], judge["cost_usd"]) == (
        1, 400 + len(PASS) // 4, 0.0)
    assert "--judge: the judge asked of 1 spec, 1 call, " in err
    assert result["lock"] == "updated"
    # The record now holds the new prompt: the next check finds nothing to do.
    code, [again] = run_check(stale, capsys, strict=True)
    assert (code, again["status"]) == (0, "verified")


def test_the_judge_fails_a_stale_spec_semantic_with_its_reasons(
        stale: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = (stale / lock_path(SPEC)).read_text()
    replay = write_replay(tmp_path / "judge.jsonl", PROMPT, [("judge", FAIL)])
    code, result, err = judge_check(capsys, "--replay", str(replay), "--update-lock")

    assert code == 1  # a failure without --strict: the judge's is the loop's own layer 3
    assert result["status"] == "fails"
    assert (result["failed_layer"], result["category"]) == ("semantic", "semantic")
    assert "The totals are not sorted by amount." in str(result["evidence"])
    judge = result["judge"]
    assert isinstance(judge, dict) and judge["verdict"] == "fail"
    assert "regions sorted by total" in str(judge["reasoning"])
    assert result["lock"] is None and (stale / lock_path(SPEC)).read_text() == before
    assert f"{SPEC}: fails (semantic: the judge: " in err

    # The table says it too, with what the judge cost.
    capsys.readouterr()
    assert main(["check", "--judge", "--replay", str(replay), "--strict"]) == 1
    out = capsys.readouterr().out
    assert "judged with the new prompt: fail (" in out
    assert "--judge: the judge asked of 1 spec, 1 call," in out


def test_judge_without_a_model_is_bad_usage_before_anything_runs(
        stale: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["check", "--judge"]) == 2
    err = capsys.readouterr().err
    assert "no model is configured and no replay was given" in err
    assert "pass --model PROVIDER/MODEL" in err
    assert "re-verifying" not in err


def test_judge_with_nothing_stale_asks_nothing_and_needs_no_model(
        stale: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(stale, SPEC, SPEC_TEXT)  # the prompt as recorded: nothing is stale
    code, result, err = judge_check(capsys)
    assert (code, result["status"], result["judge"]) == (0, "verified", None)
    assert "--judge: no stale spec, no model asked" in err
