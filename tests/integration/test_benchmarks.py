"""A benchmark that needs Docker, run once in its quickest mode: loop_overhead.py, which broke
unseen when run settings moved to runs/ (it only failed when run). Its figures are not
checked, only that it gets to print them: one run each way, without the simulated model
latency (3 s a call by default, which was most of this test's 90 s in CI)."""

from __future__ import annotations

import pytest

from tests.unit.benchmarks.test_scripts import ROOT, run_script

pytestmark = pytest.mark.docker


@pytest.mark.usefixtures("docker_engine", "sandbox_image")  # fails under CI=true without Docker
def test_the_loop_overhead_benchmark_runs() -> None:
    done = run_script(ROOT / "benchmarks" / "loop_overhead.py", "--runs", "1", "--think", "0")
    assert done.returncode == 0, done.stderr
    assert "repair packet size" in done.stdout and "100,000" in done.stdout


@pytest.mark.usefixtures("docker_engine", "sandbox_image")
def test_the_resume_cost_benchmark_pays_only_for_the_calls_after_the_interruption() -> None:
    """benchmarks/resume_cost.py, resumed from its first three steps (issue 37): every row
    paid exactly what the uninterrupted run paid after that step."""
    done = run_script(ROOT / "benchmarks" / "resume_cost.py", "--steps", "3")
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()
            if line.strip()[:1].isdigit() and line.strip().endswith("passed")]
    assert len(rows) == 3, done.stdout
    assert all(row[3] == row[4] for row in rows), done.stdout  # expected == paid
    assert "paid again" not in done.stdout
