"""Mode `mutants`: seeded bugs the tests must catch, the loop repairing what they caught,
and candidates that cheat, none of which may pass. Mode `cheats`: the cheats alone.

Stages, each resumable item by item (results.json keys in brackets):
  1. probe   [HumanEval/3]            per problem, in the sandbox: which of each kind's sites
                                      changes behaviour (behaviour_probe.py); the first that
                                      does, in the seeded order, is the kind's mutant
  2. score   [HumanEval/3:off_by_one] each mutant judged like any candidate: caught or not
  3. cheats  [HumanEval/3:cheat:NAME] each cheat (bench/cheats.py), against the frozen
                                      tests as the product runs them by default: across
                                      the tests' boundary (always strict isolation: a batch
                                      imports its candidates into pytest's process)
  4. control [HumanEval/3:control:NAME] the same cheats against the same tests with the
                                      candidate imported into pytest's process, no scan:
                                      what they would get past without the boundary
  5. repair  [HumanEval/3:off_by_one:repair] the loop, with a scripted model whose first
                                      answer is the mutant and whose repair is the canonical
                                      solution: attempts to pass and the repair packet
Stages 2 and 4 use --isolation; probes, the cheats and repairs use single executions (the
loop's way).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from selfcorrect_action.bench import behaviour_probe
from selfcorrect_action.bench import mutants as mutators
from selfcorrect_action.bench import results as results_file
from selfcorrect_action.bench.cheats import cheats
from selfcorrect_action.bench.context import BenchContext
from selfcorrect_action.bench.executors import Candidate, Isolation, score_all
from selfcorrect_action.bench.packets import packet_facts
from selfcorrect_action.bench.problems import Problem
from selfcorrect_action.bench.scoring import HUMANEVAL_PRELOAD, LIMITS, Score
from selfcorrect_action.bench.side_by_side import score_record
from selfcorrect_action.bench.tasks import initial_state
from selfcorrect_action.bench.testfile import free_names, prompt_helpers
from selfcorrect_action.bench.threads import in_parallel
from selfcorrect_action.llm.models import ChatRequest, ChatResponse, ModelTiers
from selfcorrect_action.loop.budget import estimate_prompt_tokens, estimate_tokens
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.orchestrator import run_loop
from selfcorrect_action.loop.state import Status
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.models import ExecutionRequest, InputFile, script_argv

PROBE_TIMEOUT_S = 60.0
SCRIPTED = ModelTiers(cheap="scripted/mutant-then-canonical",
                      strong="scripted/mutant-then-canonical",
                      judge="scripted/mutant-then-canonical")


def run_mutants(ctx: BenchContext) -> str:
    options = ctx.options
    key = results_file.run_key("mutants", options.isolation, options.runtime,
                               f"n{len(ctx.problems)}")
    ctx.store.start(key, "mutants", options.settings, fresh=options.fresh)
    _probe_stage(ctx, key)
    chosen = _chosen_mutants(ctx, key)
    _score_stage(ctx, key, "mutants", [
        Candidate(f"{p.task_id}:{m.kind}", p, m.source) for p, m in chosen],
        details={f"{p.task_id}:{m.kind}": {"kind": m.kind, "label": m.label, "line": m.line}
                 for p, m in chosen})
    _cheat_stages(ctx, key)
    _repair_stage(ctx, key, chosen)
    return key


def run_cheats(ctx: BenchContext) -> str:
    """Mode `cheats`: stages 3 and 4 alone, every cheat against every problem."""
    options = ctx.options
    key = results_file.run_key("cheats", options.isolation, options.runtime,
                               f"n{len(ctx.problems)}")
    ctx.store.start(key, "cheats", options.settings, fresh=options.fresh)
    _cheat_stages(ctx, key)
    return key


def _cheat_stages(ctx: BenchContext, key: str) -> None:
    cheat_candidates = [Candidate(f"{p.task_id}:cheat:{c.name}", p, c.source)
                        for p in ctx.problems for c in cheats(p)]
    _score_stage(ctx, key, "cheats (the product's default, the tests' boundary)",
                 cheat_candidates, isolation="strict")
    _score_stage(ctx, key, "control (imported into pytest's process, no scan)", [
        Candidate(c.key.replace(":cheat:", ":control:"), c.problem, c.source,
                  isolation="in-process") for c in cheat_candidates])


def mutant_sources(problem: Problem, kind: mutators.Kind) -> list[mutators.Mutant]:
    return mutators.mutants(problem.canonical_source, problem.entry_point, kind,
                            seed=problem.task_id)


def probe_job(problem: Problem) -> dict[str, Any]:
    helpers = prompt_helpers(problem.prompt, free_names(problem.test) - {problem.entry_point})
    return {
        "module": problem.module, "entry_point": problem.entry_point,
        "canonical": problem.canonical_source, "helpers": helpers, "test": problem.test,
        "seed": problem.task_id,
        "mutants": {kind: [m.source for m in mutant_sources(problem, kind)]
                    for kind in mutators.KINDS},
    }


def probe_request(problem: Problem, runtime: str) -> ExecutionRequest:
    probe = Path(behaviour_probe.__file__).read_bytes()
    return ExecutionRequest(
        argv=script_argv("probe.py"), timeout_s=PROBE_TIMEOUT_S, limits=LIMITS,
        runtime=runtime,  # type: ignore[arg-type]
        files=[InputFile(path="probe.py", data=probe),
               InputFile(path=behaviour_probe.JOB_FILE,
                         data=json.dumps(probe_job(problem)).encode())],
    )


def chosen_kinds(probe: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per kind: the site chosen (the first that changed behaviour) or None, with counts."""
    chosen: dict[str, dict[str, Any]] = {}
    for kind in mutators.KINDS:
        checked = probe.get("kinds", {}).get(kind, [])
        changed = [c for c in checked if c.get("changed")]
        chosen[kind] = {"sites_checked": len(checked),
                        "equivalent": sum(1 for c in checked if not c.get("changed")),
                        "site": changed[0]["site"] if changed else None,
                        "where": changed[0].get("where") if changed else None,
                        "input": changed[0].get("input", "")[:200] if changed else ""}
    return chosen


@contextlib.contextmanager
def _sandbox(ctx: BenchContext) -> Iterator[Sandbox]:
    """The single-execution sandbox of the probe and repair stages, its pool warmed."""
    options = ctx.options
    with Sandbox(ctx.engine, ctx.image, pool_size=options.workers,
                 max_workers=options.workers + 2, preload_guess=HUMANEVAL_PRELOAD) as box:
        box.warm(LIMITS, options.runtime)
        yield box


def _probe_stage(ctx: BenchContext, key: str) -> None:
    options, store = ctx.options, ctx.store
    left = set(results_file.todo([p.task_id for p in ctx.problems], store.results, key))
    pending = [p for p in ctx.problems if p.task_id in left]
    scratch = Path(tempfile.mkdtemp(prefix="selfcorrect-probe-"))
    try:
        with ctx.bar("mutants: behaviour probes", len(pending)) as bar, _sandbox(ctx) as box:
            requests = {p.task_id: probe_request(p, options.runtime) for p in pending}

            def one(problem: Problem) -> None:
                result = box.run(requests[problem.task_id], scratch / problem.module)
                try:
                    probe = json.loads(result.stdout.text.strip().splitlines()[-1])
                    record: dict[str, Any] = {
                        "kinds": chosen_kinds(probe),
                        "tested_inputs": probe.get("tested_inputs"),
                        "perturbed_inputs": probe.get("perturbed_inputs")}
                except (ValueError, IndexError):
                    record = {"error": (result.stderr.text or result.sandbox_note or "")[-300:],
                              "kinds": chosen_kinds({})}
                store.put(key, problem.task_id, record)
                bar.advance()

            in_parallel(one, pending, options.workers)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _chosen_mutants(ctx: BenchContext, key: str) -> list[tuple[Problem, mutators.Mutant]]:
    items = ctx.store.run(key).items
    chosen = []
    for problem in ctx.problems:
        kinds = items.get(problem.task_id, {}).get("kinds", {})
        for kind in mutators.KINDS:
            site = kinds.get(kind, {}).get("site")
            if site is not None:
                chosen.append((problem, mutant_sources(problem, kind)[site]))
    return chosen


def _score_stage(ctx: BenchContext, key: str, label: str, candidates: Sequence[Candidate],
                 details: dict[str, dict[str, Any]] | None = None,
                 isolation: Isolation | None = None) -> None:
    options, store = ctx.options, ctx.store
    left = set(results_file.todo([c.key for c in candidates], store.results, key))
    pending = [c for c in candidates if c.key in left]
    mode = isolation or options.isolation
    with ctx.bar(f"{label} [{mode}]", len(pending)) as bar:
        def heard(candidate: Candidate, score: Score, result: object) -> None:
            store.put(key, candidate.key,
                      {**score_record(score), **(details or {}).get(candidate.key, {})})
            bar.advance()

        score_all(pending, engine=ctx.engine, image=ctx.image, isolation=mode,
                  runtime=options.runtime, workers=options.workers, on_score=heard)


class CannedModel:
    """The scripted model of the repairs: its first answer is the mutant, every later one
    (a patch or a rethink, whatever the loop asks for) the canonical solution."""

    def __init__(self, first: str, then: str) -> None:
        self._answers = [first, then]
        self.calls = 0

    def complete(self, request: ChatRequest) -> ChatResponse:
        text = self._answers[min(self.calls, 1)]
        self.calls += 1
        return ChatResponse(text=f"```python\n{text}```\n", model="scripted",
                            prompt_tokens=estimate_prompt_tokens(request.messages),
                            completion_tokens=estimate_tokens(text), cost_usd=0.0,
                            cost_known=True, latency_ms=0)


def repair_record(state: Any) -> dict[str, Any]:
    attempts = state.attempts
    first = attempts[0] if attempts else None
    record: dict[str, Any] = {
        "status": state.status.value, "passed": state.status is Status.PASSED,
        "attempts": len(attempts), "tokens": state.usage.tokens,
        "first_category": first.verdict.category.value
        if first and first.verdict and first.verdict.category else None,
        "strategy": attempts[1].strategy.value if len(attempts) > 1 else None,
    }
    if first is not None and first.packet is not None:
        facts = packet_facts(first.packet)
        record.update(packet_tokens=facts.tokens, assertion=facts.assertion,
                      expected_vs_actual=facts.expected_vs_actual)
    return record


def _repair_stage(ctx: BenchContext, key: str,
                  chosen: Sequence[tuple[Problem, mutators.Mutant]]) -> None:
    options, store = ctx.options, ctx.store
    items = store.run(key).items
    pending = [(p, m) for p, m in chosen
               if items.get(f"{p.task_id}:{m.kind}", {}).get("passed") is False
               and f"{p.task_id}:{m.kind}:repair" not in items]
    scratch = Path(tempfile.mkdtemp(prefix="selfcorrect-repair-"))
    try:
        with ctx.bar("repairs of the caught mutants (the loop)", len(pending)) as bar, \
                _sandbox(ctx) as box:

            def one(job: tuple[Problem, mutators.Mutant]) -> None:
                problem, mutant = job
                work = scratch / f"{problem.module}-{mutant.kind}"
                deps = Deps(llm=CannedModel(mutant.source, problem.canonical_source),
                            sandbox=box, work_root=work, inputs=[])
                state = run_loop(initial_state(problem, SCRIPTED, options.runtime), deps)
                store.put(key, f"{problem.task_id}:{mutant.kind}:repair",
                          {**repair_record(state), "label": mutant.label})
                shutil.rmtree(work, ignore_errors=True)
                bar.advance()

            in_parallel(one, pending, options.workers)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
