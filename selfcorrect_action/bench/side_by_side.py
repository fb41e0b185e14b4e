"""Modes `canonical` and `samples`: completions scored in our sandbox and, on the same
samples with the same number of workers, by the reference harness; for canonical also the
bare container loop, the floor of one fresh container per candidate. With `--start both`
(strict) one invocation scores the items cold, then warm, each a run of its own, beside one
measurement of the reference and the bare loops.

results.json holds our verdict per item as it comes; the reference's verdicts and both
whole-run timings (the latest invocation's) sit in the run's extras.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from selfcorrect_action.bench import results as results_file
from selfcorrect_action.bench.bare import bare_loop
from selfcorrect_action.bench.context import BenchContext
from selfcorrect_action.bench.executors import Candidate, score_all
from selfcorrect_action.bench.options import BenchOptions
from selfcorrect_action.bench.problems import Problem
from selfcorrect_action.bench.reference import run_reference
from selfcorrect_action.bench.samples import Sample, read_samples
from selfcorrect_action.bench.scoring import Score
from selfcorrect_action.sandbox.models import ExecutionResult

EVIDENCE_CHARS = 300


@dataclass(frozen=True)
class Item:
    key: str
    problem: Problem
    completion: str


def canonical_items(problems: Sequence[Problem]) -> list[Item]:
    return [Item(p.task_id, p, p.canonical_solution) for p in problems]


def sample_items(samples: Sequence[Sample], problems: dict[str, Problem]) -> list[Item]:
    return [Item(s.key, problems[s.task_id], s.completion) for s in samples]


def score_record(score: Score) -> dict[str, Any]:
    return {"passed": score.passed, "category": score.category,
            "evidence": score.evidence[:EVIDENCE_CHARS], "duration_ms": score.duration_ms}


def run_side_by_side(ctx: BenchContext, keys: dict[str, str], items: Sequence[Item], *,
                     bare: bool) -> None:
    """`keys`: start (cold, warm) -> its run's key, scored in that order; the reference
    harness and the bare loops are measured once, after them, and recorded in each run."""
    options = ctx.options
    store = ctx.store
    for start, key in keys.items():
        _score(ctx, key, start, items)
    extras: dict[str, object] = {}
    if options.reference:
        ctx.say(f"reference harness: {len(items)} samples, {options.workers} workers")
        reference = run_reference([(item.problem.task_id, item.completion) for item in items],
                                  workers=options.workers)
        extras["reference"] = {
            "wall_s": round(reference.wall_s, 3), "workers": options.workers,
            "verdicts": {item.key: {"passed": v.passed, "result": v.result[:EVIDENCE_CHARS]}
                         for item, v in zip(items, reference.verdicts, strict=True)},
        }
    if bare:
        ctx.say(f"bare container loop: {len(items)} containers, {options.workers} workers")
        wall = bare_loop(ctx.engine.client.api, ctx.image, count=len(items),
                         workers=options.workers, runtime=options.runtime)
        extras["bare"] = {"wall_s": round(wall, 3), "count": len(items),
                          "workers": options.workers}
        # And as our containers start, without Docker's networking: the same footing.
        wall = bare_loop(ctx.engine.client.api, ctx.image, count=len(items),
                         workers=options.workers, runtime=options.runtime,
                         network_disabled=True)
        extras["bare_no_network"] = {"wall_s": round(wall, 3), "count": len(items),
                                     "workers": options.workers}
    for key in keys.values():
        for name, value in extras.items():
            store.put_extra(key, name, value)


def _score(ctx: BenchContext, key: str, start: str, items: Sequence[Item]) -> None:
    options = ctx.options
    store = ctx.store
    store.start(key, options.mode, {**options.settings, "start": start}, fresh=options.fresh)
    left = set(results_file.todo([item.key for item in items], store.results, key))
    pending = [Candidate(item.key, item.problem, item.problem.module_source(item.completion))
               for item in items if item.key in left]
    started = time.perf_counter()
    label = options.isolation if options.isolation == "batch" else f"strict, {start}"
    with ctx.bar(f"{options.mode} [{label}, {options.runtime}]", len(pending)) as bar:
        def heard(candidate: Candidate, score: Score, result: ExecutionResult) -> None:
            store.put(key, candidate.key, score_record(score))
            bar.advance()

        score_all(pending, engine=ctx.engine, image=ctx.image, isolation=options.isolation,
                  runtime=options.runtime, workers=options.workers, on_score=heard,
                  warm=start == "warm", plain=options.tests == "auto")
    store.end_segment(key, len(pending), time.perf_counter() - started)


def starts(options: BenchOptions) -> list[str]:
    """The starts one invocation scores, in order: `both` is cold, then warm."""
    return ["cold", "warm"] if options.start == "both" else [options.start]


def _start(isolation: str, start: str, tests: str = "auto") -> str:
    """The key's part for the start: strict runs cold and warm are two runs side by side;
    batch has one start (its zygote). Runs with every test under pytest are a third."""
    return "/".join(part for part in (start if isolation == "strict" else "",
                                      "pytest" if tests == "pytest" else "") if part)


def _keys(options: BenchOptions, *detail: str) -> dict[str, str]:
    return {start: results_file.run_key(options.mode, options.isolation, options.runtime,
                                        _start(options.isolation, start, options.tests),
                                        *detail)
            for start in starts(options)}


def run_canonical(ctx: BenchContext) -> list[str]:
    keys = _keys(ctx.options, f"n{len(ctx.problems)}")
    run_side_by_side(ctx, keys, canonical_items(ctx.problems), bare=True)
    return list(keys.values())


def run_samples(ctx: BenchContext) -> list[str]:
    options = ctx.options
    assert options.samples is not None  # the command checks it
    by_id = {p.task_id: p for p in ctx.problems}
    samples = read_samples(options.samples, by_id)
    if options.limit is not None:
        samples = samples[: options.limit]
    keys = _keys(options, options.samples.name, f"n{len(samples)}")
    run_side_by_side(ctx, keys, sample_items(samples, by_id), bare=False)
    return list(keys.values())
