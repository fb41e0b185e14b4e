"""`selfcorrect bench humaneval` for real (Docker): canonical on 5 problems in both isolation
modes, mutants on 2, samples with a gate, the model mode against the local OpenAI-compatible
server and then replayed, and what a batch container keeps apart between its items."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.bench.cheats import CHEATS
from selfcorrect_action.bench.problems import load_problems
from selfcorrect_action.choices import Runtime
from selfcorrect_action.cli import main
from selfcorrect_action.sandbox.batch import BatchSandbox
from selfcorrect_action.sandbox.models import ExecutionRequest, InputFile, script_argv
from tests.fakes.openai_server import FakeOpenAIServer, Reply

pytestmark = pytest.mark.usefixtures("sandbox_image")


def results(out: Path) -> dict[str, Any]:
    return json.loads((out / "results.json").read_text())["runs"]


@pytest.mark.parametrize("isolation", ["strict", "batch"])
def test_canonical_agrees_with_the_reference_harness(
        tmp_path: Path, isolation: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["bench", "humaneval", "--limit", "5", "--isolation", isolation,
                 "--out", str(tmp_path)])
    table = capsys.readouterr().out
    assert code == 0
    (run,) = results(tmp_path).values()
    assert [item["passed"] for item in run["items"].values()] == [True] * 5
    assert all(v["passed"] for v in run["extras"]["reference"]["verdicts"].values())
    assert run["extras"]["bare"]["count"] == run["extras"]["bare_no_network"]["count"] == 5
    assert "| 5/5 | 5/5 |" in table and "selfcorrect / bare container loop" in table
    assert "(networking disabled in both: " in table
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".json", ".md", ".png"]

    # A rerun resumes: nothing left to score, the same verdicts.
    assert main(["bench", "humaneval", "--limit", "5", "--isolation", isolation,
                 "--out", str(tmp_path)]) == 0
    (again,) = results(tmp_path).values()
    assert again["items"] == run["items"] and again["segments"][-1]["items"] == 0


def test_mutants_are_caught_repaired_and_no_cheat_passes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Two problems: every cheat of the suite against each (tests/security/test_cheats.py
    # runs them all, on every strategy, through the loop).
    code = main(["bench", "humaneval", "--mode", "mutants", "--limit", "2",
                 "--isolation", "batch", "--out", str(tmp_path)])
    table = capsys.readouterr().out
    assert code == 0
    (run,) = results(tmp_path).values()
    items = run["items"]
    scored = {k: v for k, v in items.items() if k.count(":") == 1}
    assert len(scored) >= 4 and sum(not v["passed"] for v in scored.values()) >= 4
    repairs = [v for k, v in items.items() if k.endswith(":repair")]
    assert repairs and all(r["passed"] and r["attempts"] == 2 for r in repairs)
    assert all(r["expected_vs_actual"] or not r["assertion"] for r in repairs)
    cheats = {k: v for k, v in items.items() if ":cheat:" in k}
    assert len(cheats) == 2 * len(CHEATS) and not any(v["passed"] for v in cheats.values())
    controls = {k: v for k, v in items.items() if ":control:" in k}
    assert any(v["passed"] for v in controls.values())  # what the boundary is for
    assert "| pytest_hook | 2 | 0 | 2/2 |" in table


def test_samples_are_scored_beside_the_reference_and_gated(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    problems = load_problems(2)
    samples = tmp_path / "samples.jsonl"
    samples.write_text("\n".join(json.dumps(row) for row in [
        {"task_id": problems[0].task_id, "completion": problems[0].canonical_solution},
        {"task_id": problems[1].task_id, "completion": "    return []\n"},
        {"task_id": problems[1].task_id, "completion": problems[1].canonical_solution},
    ]))
    out = tmp_path / "out"
    code = main(["bench", "humaneval", "--mode", "samples", "--samples", str(samples),
                 "--reference-on-host", "--gate", "70", "--out", str(out)])
    table = capsys.readouterr().out
    assert code == 1  # 2 of 3 passed: below the 70% floor
    (run,) = results(out).values()
    assert {k: v["passed"] for k, v in run["items"].items()} == {
        "HumanEval/0": True, "HumanEval/1": False, "HumanEval/1#1": True}
    assert run["items"]["HumanEval/1"]["category"] == "contract"
    assert "| 2/3 | 3/3 |" in table and "No disagreements." in table


def test_the_model_mode_records_then_replays_to_the_same_scores(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through runs/pipeline.py like any run, with its settings from the same table: the
    server is named by SELFCORRECT_API_BASE alone, as `selfcorrect run` would take it."""
    first, second = load_problems(2)

    def answer(code: str) -> Reply:
        return Reply(content=f"```python\n{code}```", prompt_tokens=None)

    wrong = first.prompt + "    return False\n"
    with FakeOpenAIServer() as server:
        server.script(
            answer(first.prompt + first.canonical_solution),  # one-shot: right
            answer(wrong),  # the loop's first attempt: wrong...
            answer(first.canonical_source),  # ...repaired
            answer(second.prompt + "    return []\n"),  # one-shot: wrong
            answer(second.canonical_source),  # the loop: right at once
        )
        monkeypatch.setenv("SELFCORRECT_API_BASE", server.api_base)
        code = main(["bench", "humaneval", "--mode", "model", "--limit", "2", "--workers",
                     "1", "--model", "openai/fake-model", "--gate", "100",
                     "--out", str(tmp_path / "live")])
        assert server.pending == 0 and server.overruns == 0
    assert code == 0
    (live,) = results(tmp_path / "live").values()
    recordings = tmp_path / "live" / "recordings" / "openai_fake-model"
    assert sorted(p.name for p in recordings.iterdir()) == ["humaneval_0.jsonl",
                                                            "humaneval_1.jsonl"]
    # Each loop is a run like any other, with its reports.
    audit = tmp_path / "live" / "runs" / "openai_fake-model" / "humaneval_0" / "AUDIT.md"
    assert "passed" in audit.read_text().lower()
    replay = main(["bench", "humaneval", "--mode", "model", "--limit", "2", "--replay",
                   str(recordings), "--out", str(tmp_path / "replayed")])
    assert replay == 0
    (replayed,) = results(tmp_path / "replayed").values()
    for record in (live, replayed):
        items = record["items"]
        assert [items[t]["oneshot"]["passed"] for t in ("HumanEval/0", "HumanEval/1")] == [
            True, False]
        assert [items[t]["loop"]["attempts"] for t in ("HumanEval/0", "HumanEval/1")] == [2, 1]
        assert all(items[t]["loop"]["passed"] for t in items)
    assert replayed["extras"]["model"]["replayed"] is True


_FIRST = """
import ctypes, os, subprocess
print("uid", os.getuid(), os.getgid(), os.getgroups())
print("caps", [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")][0])
open("/work/left-at-the-top", "w").write("secret")
open("/dev/shm/left-in-shm", "w").write("secret")
open("mine.txt", "w").write("secret")
libc = ctypes.CDLL(None, use_errno=True)
print("shmget", libc.shmget(0x5e1f, 4096, 0o1666), ctypes.get_errno())
for probe in (lambda: os.kill(1, 0), lambda: os.listdir("/work"), lambda: os.listdir("/tmp")):
    try:
        probe()
        print("allowed")
    except PermissionError:
        print("refused")
subprocess.Popen(["sleep", "60"], start_new_session=True)
print("cwd", os.getcwd())
"""
_SECOND = """
import os
print("uid", os.getuid())
for path in ("/work/left-at-the-top", "/dev/shm/left-in-shm", "/work/i0/run/mine.txt"):
    print(path, os.path.exists(path))
alive = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        fields = dict(l.split(":", 1) for l in open(f"/proc/{pid}/status") if ":" in l)
    except OSError:
        continue
    if "sleep" in fields["Name"] and not fields["State"].strip().startswith("Z"):
        alive.append(pid)
print("sleepers", alive)
"""


def test_a_batch_keeps_its_items_apart(docker_engine: object, sandbox_image: str,
                                       tmp_path: Path, runtime: Runtime) -> None:
    requests = [ExecutionRequest(argv=script_argv("probe.py"), runtime=runtime,
                                 files=[InputFile(path="probe.py", data=textwrap.dedent(s)
                                                  .encode())])
                for s in (_FIRST, _SECOND)]
    with BatchSandbox(docker_engine, sandbox_image) as box:  # type: ignore[arg-type]
        first, second = box.run_batch(requests, [tmp_path / "0", tmp_path / "1"])
    assert first.exit_code == 0 and second.exit_code == 0, (first, second)
    lines = first.stdout.text.splitlines()
    uid = int(lines[0].split()[1])
    assert uid >= 20000 and lines[0].endswith(f"{uid} []")  # its own uid, gid, no groups
    assert lines[1] == "caps 0000000000000000"
    assert lines[2] == "shmget -1 1"  # EPERM: no IPC object outlives an item
    assert lines[3:6] == ["refused"] * 3  # the runner, /work's listing, /tmp
    assert lines[6] == "cwd /work/i0/run"
    assert [a.path for a in first.artifacts if a.host_path] == ["mine.txt"]
    later = second.stdout.text.splitlines()
    assert int(later[0].split()[1]) != uid
    assert later[1:4] == [f"{p} False" for p in ("/work/left-at-the-top",
                                                  "/dev/shm/left-in-shm",
                                                  "/work/i0/run/mine.txt")]
    assert later[4] == "sleepers []"


def test_the_frozen_tests_judge_the_same_with_a_warm_pytest_as_with_a_cold_one(
        tmp_path: Path) -> None:
    """Issue 20: twenty samples (ten canonical, ten broken: an endless loop, os._exit(0), an
    always-equal object, sys.exit(0), a syntax error...) judged by frozen tests whose pytest
    started per candidate, then by ones whose pytest was imported before the candidate came:
    every verdict and category the same; and with every test run under pytest instead of
    the plain runner that judges these tests' passes (they need nothing of pytest's)."""
    samples = Path(__file__).parents[2] / "benchmarks" / "humaneval-samples-20.jsonl"
    verdicts = {}
    for start, tests in (("both", "auto"), ("warm", "pytest")):
        out = tmp_path / f"{start}-{tests}"
        assert main(["bench", "humaneval", "--mode", "samples", "--samples", str(samples),
                     "--no-reference", "--start", start, "--tests", tests,
                     "--out", str(out)]) == 0
        runs = results(out)
        assert len(runs) == (2 if start == "both" else 1)
        for key, run in runs.items():
            scored = run["settings"]["start"]
            assert f"/{scored}/" in key and scored in (("cold", "warm") if start == "both"
                                                       else (start,))
            assert run["settings"]["tests"] == tests
            assert ("/pytest/" in key) == (tests == "pytest")
            verdicts[scored, tests] = {item: (record["passed"], record["category"])
                                       for item, record in run["items"].items()}
    assert verdicts["warm", "auto"] == verdicts["cold", "auto"] == verdicts["warm", "pytest"]
    assert sum(passed for passed, _ in verdicts["warm", "auto"].values()) == 10
    # Both starts in one table, with the verdicts compared.
    (table,) = (tmp_path / "both-auto").glob("*.md")
    text = table.read_text()
    assert "cold and warm in one run" in text and "| selfcorrect (strict, cold) | 10/20 |" in text
    assert "| selfcorrect (strict, warm) | 10/20 |" in text
    assert "Every verdict and category is the same cold and warm." in text


def test_all_164_canonical_solutions_pass_the_same_cold_and_warm(tmp_path: Path) -> None:
    """Issue 20: the verdicts of the 164 canonical solutions are identical cold and warm (one
    invocation, `--start both`, beside the reference harness), and in a batch. As samples,
    so that no bare container loop is measured: this checks verdicts, not speed."""
    samples = tmp_path / "canonical.jsonl"
    samples.write_text("".join(json.dumps({"task_id": p.task_id,
                                           "completion": p.canonical_solution}) + "\n"
                               for p in load_problems()))
    common = ["bench", "humaneval", "--mode", "samples", "--samples", str(samples)]
    assert main([*common, "--start", "both", "--reference-on-host",
                 "--out", str(tmp_path / "strict")]) == 0
    assert main([*common, "--isolation", "batch", "--no-reference",
                 "--out", str(tmp_path / "batch")]) == 0
    runs = {**results(tmp_path / "strict"), **results(tmp_path / "batch")}
    assert sorted(run["settings"].get("start") + "/" + run["settings"]["isolation"]
                  for run in runs.values()) == ["cold/strict", "warm/batch", "warm/strict"]
    for key, run in runs.items():
        assert len(run["items"]) == 164, key
        failed = {item: r for item, r in run["items"].items() if not r["passed"]}
        assert failed == {}, key
    (table,) = (tmp_path / "strict").glob("*.md")
    text = table.read_text()
    assert "| selfcorrect (strict, cold) | 164/164 | 164/164 |" in text
    assert "| selfcorrect (strict, warm) | 164/164 | 164/164 |" in text
    assert "Every verdict and category is the same cold and warm." in text
