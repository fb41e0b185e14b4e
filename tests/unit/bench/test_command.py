"""`selfcorrect bench humaneval`'s checks, made before any container or model is touched."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfcorrect_action.cli import main


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
])
def test_bad_usage_exits_2_with_the_reason(argv: list[str], says: str, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "humaneval", *argv, "--out", str(tmp_path)]) == 2
    assert says in capsys.readouterr().err


def test_bench_alone_shows_its_suites(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench"]) == 0
    assert "humaneval" in capsys.readouterr().out
