"""Every real-model recording under tests/fixtures/real_model/ replayed through the real loop
and the real sandbox, asserting what must hold whatever a model says.

The recordings are runs of a real (tiny, mostly wrong) model against a local server, made by
examples/record_real_model.py: the seven examples and 20 HumanEval problems as `kind:
function` specs with their own tests frozen. Whatever the model answered, a run ends in a
clean status (passed, exhausted or stopped; exit 0 or 1, never 2 or 3), writes a complete
run.json and AUDIT.md, classifies every failed attempt with evidence, stays within its
budgets, and replays to the outcome it had when it was recorded (<name>.run.json).

Renew the fixtures with any model: `python examples/record_real_model.py --api-base URL
--model NAME --overwrite` (see that script).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfcorrect_action.cli import main
from selfcorrect_action.llm.recording import read_recording
from selfcorrect_action.loop.state import RunState
from selfcorrect_action.report.run_json import load_run_json
from selfcorrect_action.spec import load_spec

ROOT = Path(__file__).parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "real_model"
SPECS = FIXTURES / "specs"
RECORDINGS = sorted(FIXTURES.glob("*.jsonl"))
EXAMPLES = sorted(path.stem for path in (ROOT / "examples" / "tasks").glob("*.yml"))
HUMANEVAL = [f"humaneval_{n}" for n in range(20)]
MAX_RECORDING_BYTES = 1_000_000


def spec_for(name: str) -> Path:
    """As the recorder picks it: a copy under specs/ wins over examples/tasks/."""
    own = SPECS / f"{name}.yml"
    return own if own.exists() else ROOT / "examples" / "tasks" / f"{name}.yml"


def recorded_state(name: str) -> RunState:
    return load_run_json((FIXTURES / f"{name}.run.json").read_text())


@pytest.fixture(autouse=True)
def _no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SELFCORRECT_MODEL",
                 "SELFCORRECT_API_BASE"):
        monkeypatch.delenv(name, raising=False)


def test_every_task_has_a_recording_and_its_run() -> None:
    names = {path.stem for path in RECORDINGS}
    missing, extra = {*EXAMPLES, *HUMANEVAL} - names, names - {*EXAMPLES, *HUMANEVAL}
    assert not missing and not extra, (
        f"missing recordings {sorted(missing)}, unknown ones {sorted(extra)}: record them with "
        "python examples/record_real_model.py --only NAME...")
    for name in names:
        assert (FIXTURES / f"{name}.run.json").exists(), name
        assert spec_for(name).exists(), name


@pytest.mark.parametrize("recording", RECORDINGS, ids=lambda path: path.stem)
def test_recording_is_small_and_of_its_task(recording: Path) -> None:
    assert recording.stat().st_size <= MAX_RECORDING_BYTES, (
        f"{recording.name} is over 1 MB: lower the budget in a copy of its spec under "
        f"{SPECS.relative_to(ROOT)}")
    loaded = read_recording(recording)
    assert loaded.exchanges, "a recording with no exchange proves nothing"
    prompt = load_spec(spec_for(recording.stem)).spec.prompt
    assert any(prompt in message.content for exchange in loaded.exchanges
               for message in exchange.request.messages), "recorded for another task"
    recorded = recorded_state(recording.stem)
    assert not recorded.replayed, "a fixture is a run of a real model, not a replay"
    assert len(loaded.exchanges) == recorded.usage.llm_calls


@pytest.mark.parametrize("n", range(20))
def test_humaneval_specs_freeze_the_problems_own_tests(n: int) -> None:
    spec = load_spec(SPECS / f"humaneval_{n}.yml").spec
    assert spec.kind == "function" and str(spec.output) == f"humaneval_{n}.py"
    assert [str(path) for path in spec.tests] == [
        f"tests/fixtures/real_model/specs/test_humaneval_{n}.py"]
    test = (SPECS / f"test_humaneval_{n}.py").read_text()
    assert f"from humaneval_{n} import " in test and "def check(candidate)" in test
    assert f"def test_humaneval_{n}():" in test


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
@pytest.mark.parametrize("recording", RECORDINGS, ids=lambda path: path.stem)
def test_real_model_recording_replays_to_a_clean_outcome(
    recording: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    name = recording.stem
    monkeypatch.chdir(ROOT)
    code = main(["run", str(spec_for(name).relative_to(ROOT)), "--replay", str(recording),
                 "--out", str(tmp_path), "--json"])
    summary = json.loads(capsys.readouterr().out)

    # A clean end, whatever the model said: never a usage (2) or infrastructure (3) error.
    assert code in (0, 1), summary["stop_reason"]
    assert summary["status"] in ("passed", "exhausted", "stopped"), summary["stop_reason"]
    assert (code == 0) == (summary["status"] == "passed")
    assert summary["stop_reason"]

    # Complete reports.
    state = load_run_json((tmp_path / "run.json").read_text())
    audit = tmp_path / "AUDIT.md"
    assert audit.exists() and audit.read_text().strip()
    assert "replay" in audit.read_text().splitlines()[2].lower()
    assert state.replayed and state.status.value == summary["status"]
    assert state.finished_at is not None
    assert len(state.attempts) == summary["attempts"] >= 1

    # Every failure classified, with evidence.
    for attempt in state.attempts:
        if attempt.verdict is not None and attempt.verdict.passed:
            continue
        assert attempt.verdict is not None, f"attempt {attempt.index} has no verdict"
        assert attempt.verdict.category is not None, f"attempt {attempt.index}: no category"
        assert attempt.verdict.evidence.strip(), f"attempt {attempt.index}: no evidence"
    passed = [a for a in state.attempts if a.verdict and a.verdict.passed]
    assert (state.status.value == "passed") == bool(passed)
    assert passed in ([], [state.attempts[-1]])  # a pass ends the run

    # Budgets hold.
    budget = state.budget
    assert state.usage.tokens <= budget.tokens
    assert len(state.attempts) <= state.max_attempts
    assert state.usage.patch_attempts <= budget.patch_attempts
    assert state.usage.rethink_attempts <= budget.rethink_attempts
    if budget.cost_usd is not None and state.usage.cost_known:
        assert state.usage.cost_usd <= budget.cost_usd

    # The script is written only when it passed.
    script = tmp_path / str(state.spec.output)
    assert script.exists() == (state.status.value == "passed")

    # The replay reaches the outcome the real run had.
    recorded = recorded_state(name)
    assert (state.status, len(state.attempts)) == (recorded.status, len(recorded.attempts)), (
        f"recorded: {recorded.status.value} after {len(recorded.attempts)} attempts "
        f"({recorded.stop_reason}); replayed: {state.stop_reason}")
