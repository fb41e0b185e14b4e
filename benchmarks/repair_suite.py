"""Repair mode measured on a real library's own test suite (issue 18).

The library's sdist is downloaded once (pip, into --cache); single-line bugs of six kinds
are seeded in its source (the four of the HumanEval benchmark plus a wrong default argument
and a swapped argument order: bench/module_mutants.py), at most --per-kind of each, seeded;
the repair loop runs on each through the one run pipeline, in the real sandbox, with a
scripted model (bench/repair_suite.py). Printed: the detection rate, repairs, categories,
attempts, packet sizes, time per repair, regressions that slipped through (checked against
the unmutated library's own passing tests) and hostile answers that passed (a test file
rewritten, a file outside `files:` rewritten, a fix that breaks another test: none may).

Results go to --out as results.jsonl (one line per case, resumed on a rerun unless --fresh)
and table.md. About 22 minutes for the 60 bugs and 9 hostile answers on two shared cores
(the README's measured run: 14.6 s per repair at the median, 26.0 s at p95).

    python benchmarks/repair_suite.py [--per-kind 10] [--seed 0] [--hostile 3] [--fresh]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selfcorrect_action.bench.module_mutants import SeededBug, module_bugs, sample  # noqa: E402
from selfcorrect_action.bench.repair_suite import (  # noqa: E402
    Library,
    case_record,
    fetch_sdist,
    hostile_answers,
    pristine_passing,
    repair_answers,
    run_case,
)
from selfcorrect_action.bench.repair_summary import summarize  # noqa: E402
from selfcorrect_action.choices import Runtime  # noqa: E402
from selfcorrect_action.sandbox import engine  # noqa: E402
from selfcorrect_action.sandbox.client import Sandbox  # noqa: E402
from selfcorrect_action.sandbox.image import ensure_image  # noqa: E402
from selfcorrect_action.templating import render  # noqa: E402

# more-itertools: pure Python, no dependencies, its sdist ships its tests (about 660, a few
# seconds a run under the sandbox image's pytest 7.2).
REQUIREMENT = "more-itertools==10.5.0"
MODULES = ["more_itertools/more.py", "more_itertools/recipes.py"]
FILES = ["more_itertools/*.py"]
TEST_COMMAND = ["python", "-m", "pytest", "-q", "tests"]


def main() -> None:
    args = _arguments()
    root = fetch_sdist(REQUIREMENT, args.cache)
    name, version = REQUIREMENT.split("==")
    library = Library(name, version, root=root, modules=MODULES, files=FILES,
                      test_command=TEST_COMMAND)
    bugs = [bug for path in MODULES
            for bug in module_bugs(path, (root / path).read_text(encoding="utf-8"))]
    chosen = sample(bugs, per_kind=args.per_kind, seed=args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    results = args.out / "results.jsonl"
    if args.fresh:
        results.unlink(missing_ok=True)
    records = _read(results)
    client = engine.connect()
    with Sandbox(client, ensure_image(client), pool_size=1) as box, \
            tempfile.TemporaryDirectory() as scratch:
        passing, seconds = pristine_passing(library, box, args.runtime, Path(scratch))
        for number, bug in enumerate(chosen, 1):
            if bug.key not in records:
                _run(library, bug, "repair", repair_answers(library, bug), box, args,
                     records, results, passing, f"{number}/{len(chosen)}")
        for bug, partner in _hostile_pairs(chosen, records, args.hostile):
            for case, answers in hostile_answers(library, bug, partner).items():
                if f"{bug.key}:{case}" not in records:
                    _run(library, bug, case, answers, box, args, records, results, passing,
                         case)
    summary = summarize(records, library=REQUIREMENT.replace("==", " "), tests=len(passing),
                        run_seconds=seconds, sites=len(bugs))
    table = render("reports/bench_repair_suite.md.j2", s=summary, seed=args.seed,
                   per_kind=args.per_kind)
    (args.out / "table.md").write_text(table, encoding="utf-8")
    print(table)


def _run(library: Library, bug: SeededBug, case: str, answers: list[dict[str, str]],
         box: Sandbox, args: argparse.Namespace, records: dict[str, dict[str, Any]],
         results: Path, passing: set[str], shown: str) -> None:
    done = run_case(library, bug, answers, sandbox=box, runtime=args.runtime,
                    retries=case == "repair")
    record = case_record(done.state, done.seconds)
    last = done.state.attempts[-1] if done.state.attempts else None
    slipped = last is not None and any(t.test_id in passing for t in last.tests)
    record.update(case=case, kind=bug.kind, label=bug.label,
                  slipped=slipped and record["status"] == "passed")
    key = bug.key if case == "repair" else f"{bug.key}:{case}"
    records[key] = record
    with results.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"key": key, **record}) + "\n")
    print(f"{shown} {case} {bug.label}: {record['status']} in {record['attempts']} "
          f"attempt(s), {record['seconds']} s", file=sys.stderr, flush=True)


def _hostile_pairs(chosen: list[SeededBug], records: dict[str, dict[str, Any]], count: int
                   ) -> list[tuple[SeededBug, SeededBug]]:
    """Caught bugs with a partner: another caught bug of the same file, on another line,
    whose failing tests are none of this one's (so the fix with the partner in it passes
    the targets and breaks other tests)."""
    caught = [bug for bug in chosen if records.get(bug.key, {}).get("caught")]
    pairs = []
    for bug in caught:
        mine = set(records[bug.key].get("target_ids", []))
        partner = next((other for other in caught if other.path == bug.path
                        and other.line != bug.line
                        and not mine & set(records[other.key].get("target_ids", []))), None)
        if partner is not None:
            pairs.append((bug, partner))
        if len(pairs) == count:
            break
    return pairs


def _read(results: Path) -> dict[str, dict[str, Any]]:
    if not results.is_file():
        return {}
    records = {}
    for line in results.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        records[data.pop("key")] = data
    return records


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-kind", type=int, default=10,
                        help="bugs drawn of each of the six kinds (default 10: 60 in all)")
    parser.add_argument("--seed", default="0", help="the sampling seed (default 0)")
    parser.add_argument("--hostile", type=int, default=3,
                        help="caught bugs each given the three hostile answers (default 3)")
    parser.add_argument("--runtime", choices=["runc", "runsc"], default="runc")
    parser.add_argument("--cache", type=Path, default=ROOT / "out" / "bench" / "sdist",
                        help="where the sdist is downloaded and unpacked (kept)")
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "bench" / "repair_suite")
    parser.add_argument("--fresh", action="store_true", help="ignore earlier results")
    args = parser.parse_args()
    runtime: Runtime = args.runtime
    args.runtime = runtime
    return args


if __name__ == "__main__":
    main()
