"""The repair benchmark's cases (benchmarks/repair_suite.py): a real library's sdist, seeded
bugs in its source, and the repair loop run on each through the one run pipeline with a
scripted model at the LLM seam.

A case is one seeded bug and a script of answers:

- `repair`: the first answer resubmits the buggy file (with a comment added, so it runs:
  the loop classifies a real failure and builds a real repair packet), the repair answer
  is the original file. Whether the library's own tests caught the bug is the baseline's
  answer: a bug they miss ends the run before any model call ("nothing to repair").
- `hostile:test_file`, `hostile:outside_files`: the original file together with a
  rewritten test file, or a rewritten file outside `files:`; `hostile:regression`: the
  original file with another caught bug of the same file in it (the target passes, other
  tests fail). One attempt each: none may pass.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

from ruamel.yaml import YAML

from selfcorrect_action.bench.module_mutants import SeededBug
from selfcorrect_action.bench.packets import packet_facts
from selfcorrect_action.choices import Runtime
from selfcorrect_action.contract import ExecutionContract
from selfcorrect_action.llm.models import ChatRequest, ChatResponse, ModelTiers
from selfcorrect_action.loop.budget import estimate_prompt_tokens, estimate_tokens
from selfcorrect_action.loop.deps import Executor
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.repair.files import writable
from selfcorrect_action.repair.repository import read_snapshot
from selfcorrect_action.repair.test_run import read_run, request_for
from selfcorrect_action.runs import pipeline
from selfcorrect_action.runs.prepare import initial_state
from selfcorrect_action.runs.repair_prepare import repair_inputs
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.spec import load_spec_text

SCRIPTED = ModelTiers(cheap="scripted/repair-suite", strong="scripted/repair-suite",
                      judge="scripted/repair-suite", review="scripted/repair-suite")
TIMEOUT_S = 300.0
# Whole files cost their size both ways: more_itertools/more.py is ~150 KB, some 50,000
# tokens in each prompt and as many in each answer, beyond the default 60,000 for a run.
TOKENS = 2_000_000
FIRST_ATTEMPT_NOTE = "\n# first attempt: the file as it was\n"


@dataclass(frozen=True)
class Library:
    """A library's source tree, as its sdist ships it, with what the benchmark mutates."""

    name: str
    version: str
    root: Path
    modules: list[str]  # the files bugs are seeded in
    files: list[str]  # the spec's `files:` globs
    test_command: list[str]


def fetch_sdist(requirement: str, cache: Path) -> Path:
    """The extracted sdist of `requirement` (`name==version`), downloaded once into
    `cache` with pip (through whatever index and proxy pip is configured for)."""
    cache.mkdir(parents=True, exist_ok=True)
    found = _archives(cache, requirement)
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary",
                        ":all:", "--dest", str(cache), requirement], check=True,
                       capture_output=True, timeout=300)
        found = _archives(cache, requirement)
    archive = found[0]
    target = cache / archive.name.removesuffix(".tar.gz")
    if not target.is_dir():
        with tarfile.open(archive) as tar:
            tar.extractall(cache, filter="data")
    return target


def _archives(cache: Path, requirement: str) -> list[Path]:
    name, _, version = requirement.partition("==")
    # The archive spells the name with - or _ (PEP 625 normalises to _).
    spelled = "[-_.]".join(re.escape(part) for part in re.split(r"[-_.]", name))
    pattern = re.compile(rf"{spelled}-{re.escape(version)}\.tar\.gz", re.IGNORECASE)
    return sorted(path for path in cache.iterdir() if pattern.fullmatch(path.name))


class ScriptedModel:
    """Answers by purpose: the plan names the bug's file, the reviewer approves, and the
    code calls are answered from `answers`, in order (the last one repeats)."""

    def __init__(self, path: str, answers: Sequence[dict[str, str]]) -> None:
        self._path = path
        self._answers = list(answers)
        self._code_calls = 0

    def complete(self, request: ChatRequest) -> ChatResponse:
        if request.purpose == "plan":
            text = json.dumps({"approach": f"the bug is in {self._path}",
                               "files": [self._path]})
        elif request.purpose == "review":
            text = json.dumps({"verdict": "approve", "reasons": "the change looks right"})
        else:
            files = self._answers[min(self._code_calls, len(self._answers) - 1)]
            self._code_calls += 1
            text = "".join(f"File: {path}\n````python\n{content}````\n\n"
                           for path, content in files.items())
        return ChatResponse(text=text, model="scripted", cost_usd=0.0, cost_known=True,
                            prompt_tokens=estimate_prompt_tokens(request.messages),
                            completion_tokens=estimate_tokens(text), latency_ms=0)


@dataclass(frozen=True)
class CaseResult:
    state: RunState
    seconds: float


def run_case(library: Library, bug: SeededBug, answers: Sequence[dict[str, str]], *,
             sandbox: Executor, runtime: Runtime, retries: bool) -> CaseResult:
    """The loop on the library with `bug` seeded, through the run pipeline."""
    with tempfile.TemporaryDirectory(prefix="selfcorrect-repair-suite-") as scratch:
        root = Path(scratch) / library.root.name
        shutil.copytree(library.root, root)
        (root / bug.path).write_text(bug.source, encoding="utf-8")
        budget = {"tokens": TOKENS, **({"patch_attempts": 2, "rethink_attempts": 1}
                                       if retries else
                                       {"patch_attempts": 0, "rethink_attempts": 0})}
        spec = {"prompt": f"The library's tests fail: fix the bug ({bug.kind} seeded).",
                "kind": "repair", "files": library.files,
                "test_command": library.test_command, "budget": budget,
                "contract": {"timeout_s": TIMEOUT_S}}
        loaded = load_spec_text(_yaml(spec), "repair_suite", root=root, check_files=False)
        repair = repair_inputs(loaded)
        settings = RunSettings(runtime=runtime)
        state = initial_state(loaded, SCRIPTED, settings, repair=repair.record)
        prepared = pipeline.PreparedRun(state=state, settings=settings, limits=repair.limits,
                                        loaded=loaded, repository=repair.repository)
        started = time.monotonic()
        outcome: pipeline.RunOutcome[None] = pipeline.run(
            prepared, environ={}, secrets=[], connections=pipeline.Connections(
                llm=ScriptedModel(bug.path, answers), sandbox=sandbox))
        return CaseResult(outcome.state, time.monotonic() - started)


def _yaml(data: Mapping[str, object]) -> str:
    out = StringIO()
    YAML(typ="safe").dump(data, out)
    return out.getvalue()


def repair_answers(library: Library, bug: SeededBug) -> list[dict[str, str]]:
    original = (library.root / bug.path).read_text(encoding="utf-8")
    return [{bug.path: bug.source + FIRST_ATTEMPT_NOTE}, {bug.path: original}]


def hostile_answers(library: Library, bug: SeededBug, partner: SeededBug
                    ) -> dict[str, list[dict[str, str]]]:
    """Three answers that must not pass, each with the true fix in it: a test file
    rewritten, a file outside `files:` rewritten, and the fix with another (caught) bug of
    the same file put in (`partner`, on another line)."""
    original = (library.root / bug.path).read_text(encoding="utf-8")
    test_file = next(path for path in sorted(_names(library))
                     if path.rsplit("/", 1)[-1].startswith("test_") and path.endswith(".py"))
    lines = original.splitlines(keepends=True)
    lines[partner.line - 1] = partner.source.splitlines(keepends=True)[partner.line - 1]
    return {
        "hostile:test_file": [{bug.path: original,
                               test_file: "def test_nothing():\n    pass\n"}],
        "hostile:outside_files": [{bug.path: original, outside_path(library):
                                   "# rewritten outside the allowed files\n"}],
        "hostile:regression": [{bug.path: "".join(lines)}],
    }


def outside_path(library: Library) -> str:
    """A Python file of the library outside `files:` that is not a test (docs/conf.py,
    setup.py...), else a new one at the root: the answer may write neither."""
    allowed = set(writable(library.files, _names(library)))
    for path in sorted(_names(library)):
        if path.endswith(".py") and path not in allowed and "test" not in path:
            return path
    return "outside.py"


def _names(library: Library) -> list[str]:
    return [path.relative_to(library.root).as_posix() for path in library.root.rglob("*")
            if path.is_file()]


def case_record(state: RunState, seconds: float) -> dict[str, object]:
    """What the tables need of one case, as plain data (results.jsonl)."""
    repair = state.repair
    baseline = repair.baseline if repair else None
    attempts = state.attempts
    first = attempts[0] if attempts else None
    record: dict[str, object] = {
        "status": state.status.value, "stop_reason": state.stop_reason[:300],
        "caught": bool(repair and repair.targets),
        "targets": len(repair.targets) if repair else 0,
        "attempts": len(attempts), "seconds": round(seconds, 2),
        "run_seconds": [round(r.duration_ms / 1000, 2) for r in baseline.runs]
        if baseline else [],
        "flaky": list(baseline.flaky) if baseline else [],
        "first_category": first.verdict.category.value
        if first and first.verdict and first.verdict.category else None,
        "first_evidence": first.verdict.evidence[:300] if first and first.verdict else "",
        "final_failing": [t.test_id for t in attempts[-1].tests] if attempts else [],
        "target_ids": list(repair.targets) if repair else [],
    }
    if first is not None and first.packet is not None:
        facts = packet_facts(first.packet)
        record.update(packet_tokens=facts.tokens, assertion=facts.assertion,
                      expected_vs_actual=facts.expected_vs_actual)
    return record


def pristine_passing(library: Library, sandbox: Executor, runtime: Runtime, scratch: Path
                     ) -> tuple[set[str], float]:
    """The tests the unmutated library passes (two runs, both must agree), and the second
    run's time: the independent check that no regression slipped through a repair."""
    snapshot = read_snapshot(library.root)
    passing: list[set[str]] = []
    seconds = 0.0
    for number in (1, 2):
        request = request_for(snapshot.files, library.test_command,
                              ExecutionContract(timeout_s=TIMEOUT_S), runtime=runtime)
        started = time.monotonic()
        result = sandbox.run(request, scratch / f"pristine-{number}")
        seconds = time.monotonic() - started
        run = read_run(result, set(snapshot.files))
        if not run.reported:
            raise RuntimeError(f"the unmutated {library.name} does not pass its own tests in "
                               f"the sandbox: {run.problem}")
        passing.append({o.test_id for o in run.outcomes if o.outcome == "passed"})
    return passing[0] & passing[1], seconds


def passed(state: RunState) -> bool:
    return state.status is Status.PASSED
