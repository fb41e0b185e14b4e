"""Mode `model`: a real model through litellm, one-shot against the loop.

Per problem, with one client: first one-shot (HumanEval's prompt, the function asked for
whole, judged by the same frozen test), then the loop from scratch on the same problem
(plan skipped, the frozen test shown to the model as the product shows every spec's tests,
repairs within the default budget). Every exchange of a problem is recorded, in order, to
`recordings/humaneval_N.jsonl` under --out; `--replay DIR` plays such a folder back, so a
run can be re-scored offline (and its sandbox verdicts re-made) without any model.

The one-shot and the loop both use single executions (the loop's own way), whatever
--isolation says.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from selfcorrect_action.bench import results as results_file
from selfcorrect_action.bench.context import BenchContext
from selfcorrect_action.bench.problems import Problem
from selfcorrect_action.bench.scoring import HUMANEVAL_PRELOAD, LIMITS, judge, tests_request
from selfcorrect_action.bench.tasks import initial_state, task_spec
from selfcorrect_action.bench.threads import in_parallel
from selfcorrect_action.errors import SelfcorrectError, UsageError
from selfcorrect_action.llm.models import ChatMessage, ChatRequest, ModelTiers
from selfcorrect_action.loop.codeblock import extract_code
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.records import evolve
from selfcorrect_action.runs import pipeline
from selfcorrect_action.runs.model_fit import fitted
from selfcorrect_action.runs.pipeline import Connections, PreparedRun, RunOutcome
from selfcorrect_action.runs.session import detected, llm_client, recorded_fit
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.templating import render

RECORDINGS = "recordings"
RUNS = "runs"  # each problem's loop: run.json and AUDIT.md
BENCH_EXPERIMENT = "selfcorrect-bench"  # the MLflow experiment, unless one is given


def recording_name(problem: Problem) -> str:
    return f"{problem.module}.jsonl"


def completion_module(problem: Problem, answer: str) -> str:
    """The candidate module for a one-shot answer: the prompt (imports, helpers), then the
    answer. An answer that defines the function replaces the prompt's stub; one that is
    only the body (HumanEval's completion format) completes it."""
    code = extract_code(answer)
    if f"def {problem.entry_point}" in code:
        return f"{problem.prompt}    pass\n\n\n{code.strip()}\n"
    return problem.module_source(code if code.startswith((" ", "\t")) else _indented(code))


def _indented(code: str) -> str:
    return "".join(f"    {line}" if line.strip() else line
                   for line in code.splitlines(keepends=True))


def oneshot_request(problem: Problem) -> ChatRequest:
    return ChatRequest(purpose="generate", tier="cheap", messages=(ChatMessage(
        role="user", content=render("reports/bench_humaneval_oneshot.md.j2",
                                    problem=problem)),))


def run_model(ctx: BenchContext) -> str:
    options = ctx.options
    if options.replay is None and not options.model:
        raise UsageError("mode model needs --model PROVIDER/MODEL (or --replay DIR)",
                         hint="for example --model openai/gpt-4o-mini with OPENAI_API_KEY "
                         "set, or --model openai/NAME --api-base http://127.0.0.1:8000/v1 "
                         "for a local OpenAI-compatible server")
    model = options.model or "replay"
    key = results_file.run_key("model", "strict", options.runtime, results_file.slug(model),
                               f"n{len(ctx.problems)}")
    ctx.store.start(key, "model", options.settings, fresh=options.fresh)
    left = set(results_file.todo([p.task_id for p in ctx.problems], ctx.store.results, key))
    pending = [p for p in ctx.problems if p.task_id in left]
    recordings = options.out / RECORDINGS / results_file.slug(model)
    if options.replay is None:
        recordings.mkdir(parents=True, exist_ok=True)
    models = ModelTiers(cheap=model, strong=model, judge=model) if options.model else ModelTiers()
    scratch = Path(tempfile.mkdtemp(prefix="selfcorrect-model-"))
    try:
        with ctx.bar(f"model {model}", len(pending)) as bar, Sandbox(
                ctx.engine, ctx.image, pool_size=options.workers,
                max_workers=options.workers + 2, preload_guess=HUMANEVAL_PRELOAD) as box:
            box.warm(LIMITS, options.runtime)

            def one(problem: Problem) -> None:
                # A worker that took the next problem while another was being cancelled
                # must not start it.
                ctx.cancel.check()
                work = scratch / problem.module
                record = _one_problem(ctx, problem, models, box, work, recordings, key)
                ctx.store.put(key, problem.task_id, record)
                shutil.rmtree(work, ignore_errors=True)
                bar.advance()

            in_parallel(one, pending, options.workers)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    ctx.store.put_extra(key, "model", {"name": model, "replayed": options.replay is not None,
                                       "recordings": str(options.replay or recordings)})
    return key


def _one_problem(ctx: BenchContext, problem: Problem, models: ModelTiers, box: Sandbox,
                 work: Path, recordings: Path, key: str) -> dict[str, Any]:
    options = ctx.options
    try:
        settings, server = detected(_settings(ctx, problem, recordings), models,
                                    lambda step, message: None)
        # How the loop will ask for code, decided now: the one-shot's exchange comes first
        # and writes the recording's header, which a replay takes it from.
        decided = fitted(initial_state(problem, models, options.runtime), settings, server,
                         recorded_fit(settings))
        fit: dict[str, str] = {"profile": decided.profile, "generation": decided.generation,
                               "redraws": str(decided.redraws)}
        llm = llm_client(models, settings, secrets=ctx.secrets,
                         task_prompt=task_spec(problem).prompt, fit=lambda: fit)
    except SelfcorrectError as exc:
        return {"error": str(exc)[:500]}
    record: dict[str, Any] = {}
    started = time.monotonic()
    try:
        answer = llm.complete(oneshot_request(problem))
    except SelfcorrectError as exc:
        record["oneshot"] = {"passed": False, "error": exc.message[:300]}
    else:
        result = box.run(tests_request(problem, completion_module(problem, answer.text),
                                      options.runtime), work / "oneshot")
        score = judge(problem, result)
        record["oneshot"] = {"passed": score.passed, "category": score.category,
                             "tokens": answer.total_tokens, "cost_usd": answer.cost_usd,
                             "cost_known": answer.cost_known}
    # Seconds are the problem's wall time, model and sandbox together: what a user waits.
    record["oneshot"]["seconds"] = round(time.monotonic() - started, 3)
    started = time.monotonic()
    # The loop is the product's own run, on the same client (its recording goes on where
    # the one-shot's ended) and the benchmark's shared sandbox. A replay's tiers do not
    # name the model that answered: its calls stay unpriced.
    prepared = PreparedRun(
        state=initial_state(problem, models, options.runtime, replayed=settings.replaying),
        settings=settings, limits=LIMITS, priced=not settings.replaying)
    # Each problem's loop leaves run.json and AUDIT.md, like any run: its attempts can be
    # read, not only counted.
    reports = options.out / RUNS / results_file.slug(models.cheap if options.model
                                                     else "replay") / problem.module
    # With --mlflow, one run per problem under one experiment, tagged with this benchmark
    # run: two prompt versions (params.prompts_sha256) compare problem by problem.
    outcome: RunOutcome[None] = pipeline.run(
        prepared, environ={}, secrets=ctx.secrets, cancel=ctx.cancel, reports_dir=reports,
        connections=Connections(llm=llm, sandbox=box, server=server, fit_note=fit),
        tags={"selfcorrect.bench": "humaneval", "selfcorrect.bench_run": key,
              "selfcorrect.problem": problem.task_id})
    outcome.raise_if_interrupted()
    record["loop"] = {**loop_record(outcome.state),
                      "seconds": round(time.monotonic() - started, 3)}
    return record


def _settings(ctx: BenchContext, problem: Problem, recordings: Path) -> RunSettings:
    """The run settings with this problem's recording: played back, or written."""
    options = ctx.options
    chosen = ctx.run_settings
    if chosen.mlflow_experiment is None:
        chosen = evolve(chosen, {"mlflow_experiment": BENCH_EXPERIMENT})
    if options.replay is not None:
        path = options.replay / recording_name(problem)
        if not path.is_file():
            raise UsageError(f"{path}: no recording for {problem.task_id}")
        return evolve(chosen, {"replay": path, "record": None})
    return evolve(chosen, {"record": recordings / recording_name(problem), "replay": None})


def loop_record(state: RunState) -> dict[str, Any]:
    categories = [a.verdict.category.value if a.verdict and a.verdict.category else None
                  for a in state.attempts]
    return {
        "passed": state.status is Status.PASSED, "status": state.status.value,
        "attempts": len(state.attempts), "tokens": state.usage.tokens,
        "cost_usd": round(state.usage.cost_usd, 6), "cost_known": state.usage.cost_known,
        "categories": categories,
        "final_category": next((c for c in reversed(categories) if c), None)
        if state.status is not Status.PASSED else None,
        "stop_reason": state.stop_reason[:300],
    }
