"""Every script under benchmarks/ still starts: each is run as its docstring says, with
--help (nothing measured, no Docker). Nothing else imports them, so an API they call can
change under them unseen (loop_overhead.py called RunOptions(replay=...) long after it was
gone); mypy checks their calls, this checks they run. The one that needs neither Docker nor
a model runs for real, once; tests/integration/test_benchmarks.py runs a Docker one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))


def run_script(script: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # This checkout first: the scripts import selfcorrect_action, which an editable install
    # elsewhere would otherwise provide.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get(
        "PYTHONPATH", "")])}
    return subprocess.run([sys.executable, str(script), *args], capture_output=True,
                          text=True, timeout=120, env=env, cwd=ROOT)


def test_every_benchmark_is_found() -> None:
    assert {s.name for s in SCRIPTS} >= {"loop_overhead.py", "sandbox_overhead.py",
                                         "issue_body_parsing.py"}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda s: s.name)
def test_a_benchmark_starts_and_explains_itself(script: Path) -> None:
    done = run_script(script, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage:"), done.stdout


def test_the_issue_body_benchmark_prints_its_figures() -> None:
    done = run_script(ROOT / "benchmarks" / "issue_body_parsing.py", "--runs", "1")
    assert done.returncode == 0, done.stderr
    assert "a key repeated in a YAML block" in done.stdout and "p50" in done.stdout
