"""`selfcorrect bench humaneval`'s checks, made before any container or model is touched."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfcorrect_action.cli import main
from selfcorrect_action.runs.settings import RunSettings


@pytest.mark.parametrize(("argv", "says"), [
    (["--mode", "samples"], "mode samples needs --samples FILE.jsonl"),
    (["--samples", "s.jsonl"], "--samples is for --mode samples"),
    (["--model", "openai/x"], "--model, --api-base and --replay are for --mode model"),
    (["--mode", "model", "--replay", "missing-folder"], "not a folder of recordings"),
    (["--gate", "101"], "--gate"),
    (["--workers", "0"], "--workers"),
    (["--mode", "samples", "--samples", "s.jsonl"], "executes every completion on this host"),
    (["--reference-on-host"], "--reference-on-host is for --mode samples"),
    (["--mode", "samples", "--samples", "s.jsonl", "--no-reference", "--reference-on-host"],
     "--reference-on-host is for --mode samples, without --no-reference"),
    (["--history", "h"], "--history and --no-history are for --mode model"),
    (["--no-history"], "--history and --no-history are for --mode model"),
    (["--start", "both", "--isolation", "batch"], "--start both is for --isolation strict"),
    (["--start", "both", "--mode", "mutants"], "--start both is for --isolation strict"),
])
def test_bad_usage_exits_2_with_the_reason(argv: list[str], says: str, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "humaneval", *argv, "--out", str(tmp_path)]) == 2
    assert says in capsys.readouterr().err


def test_bench_alone_shows_its_suites(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench"]) == 0
    assert "humaneval" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "variable", "recorded_in"), [
    ([], None, "home/selfcorrect"),  # the XDG default, as `selfcorrect run`'s
    ([], "env", "env"),  # SELFCORRECT_HISTORY
    (["--history", "flag"], "env", "flag"),  # the flag wins over the variable
    (["--no-history"], "env", None),
    (["--history", "flag", "--no-history"], None, None),
])
def test_mode_model_takes_the_history_flags_of_selfcorrect_run(
        argv: list[str], variable: str | None, recorded_in: str | None, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Mode model's loops are recorded in the run history: --history DIR moves it and
    --no-history skips it, as for `selfcorrect run`, ahead of SELFCORRECT_HISTORY."""
    from selfcorrect_action.bench import run

    chosen: list[RunSettings] = []

    def no_benchmark(*args: object, run_settings: RunSettings, **kwargs: object) -> int:
        chosen.append(run_settings)
        return 0

    monkeypatch.setattr(run, "run_bench", no_benchmark)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "home"))
    if variable is not None:
        monkeypatch.setenv("SELFCORRECT_HISTORY", str(tmp_path / variable))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "replays").mkdir()
    assert main(["bench", "humaneval", "--mode", "model", "--replay", "replays", *argv,
                 "--out", str(tmp_path / "out")]) == 0
    (settings,) = chosen
    folder = settings.history_dir
    assert (folder and folder.resolve()) == (recorded_in and (tmp_path / recorded_in).resolve())
