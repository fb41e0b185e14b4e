"""One `selfcorrect bench humaneval` invocation: open what the modes need, run the mode,
then write its table (Markdown) and plot (PNG) beside results.json and print the table.
Returns the exit code: 1 when --gate is given and the run's pass rate is below it."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from selfcorrect_action.bench import plot, summary
from selfcorrect_action.bench.context import BenchContext
from selfcorrect_action.bench.model_mode import run_model
from selfcorrect_action.bench.mutants_mode import run_cheats, run_mutants
from selfcorrect_action.bench.options import BenchOptions
from selfcorrect_action.bench.problems import Problem, load_problems
from selfcorrect_action.bench.results import RunRecord, Store, slug
from selfcorrect_action.bench.samples import read_samples
from selfcorrect_action.bench.side_by_side import run_canonical, run_samples
from selfcorrect_action.bench.threads import serialise_ast_parse
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.sandbox import engine as engines
from selfcorrect_action.sandbox.image import ensure_image
from selfcorrect_action.templating import render

RESULTS = "results.json"


@dataclass(frozen=True)
class Rendered:
    markdown: str
    headline: float | None
    png: Path | None


def run_bench(options: BenchOptions, *, command: Sequence[str], secrets: Sequence[str] = (),
              console: Console | None = None, run_settings: RunSettings | None = None,
              cancel: CancelToken | None = None) -> int:
    console = console or Console(stderr=True, highlight=False)
    serialise_ast_parse()
    everything = load_problems()
    problems = everything if options.mode == "samples" else everything[: options.limit]
    store = Store(options.out / RESULTS)
    client = engines.connect()
    image = ensure_image(client, progress=lambda line: console.print(line, markup=False))
    ctx = BenchContext(options=options, engine=client, image=image, store=store,
                       problems=problems, console=console, secrets=list(secrets),
                       run_settings=run_settings or RunSettings(runtime=options.runtime),
                       cancel=cancel or CancelToken())
    runner: Callable[[BenchContext], list[str]] = {
        "canonical": run_canonical, "samples": run_samples,
        "mutants": lambda ctx: [run_mutants(ctx)], "cheats": lambda ctx: [run_cheats(ctx)],
        "model": lambda ctx: [run_model(ctx)],
    }[options.mode]
    keys = runner(ctx)
    items = _keys(options, problems, everything)
    # One table for the invocation: a start-by-start table when it scored more than one.
    name = slug(keys[0] if len(keys) == 1 else "+".join(keys))
    if len(keys) == 1:
        rendered = render_run(options, store.run(keys[0]), items, shlex.join(command),
                              options.out / name)
    else:
        rendered = render_starts([store.run(key) for key in keys], items,
                                 shlex.join(command), options.out / name)
    (options.out / f"{name}.md").write_text(rendered.markdown, encoding="utf-8")
    print(rendered.markdown, end="")
    console.print(f"wrote {options.out / RESULTS}, {options.out / (name + '.md')}"
                  + (f", {rendered.png}" if rendered.png else ""), markup=False)
    return 1 if summary.gate_failed(rendered.headline, options.gate) else 0


def render_run(options: BenchOptions, run: RunRecord, keys: list[str], command: str,
               stem: Path) -> Rendered:
    png: Path | None = stem.parent / f"{stem.name}.png"  # a key may hold dots
    headline: float | None
    draw: Callable[[Path], None]
    if options.mode in ("canonical", "samples"):
        s = summary.side_by_side(run, keys)
        markdown = render("reports/bench_side_by_side.md.j2", s=s, command=command)
        headline, draw = s.headline, (lambda path: plot.plot_side_by_side([s], path))
    elif options.mode == "mutants":
        m = summary.mutation(run, keys)
        markdown = render("reports/bench_mutants.md.j2", m=m, command=command)
        headline, draw = m.headline, (lambda path: plot.plot_mutants(m, path))
    elif options.mode == "cheats":
        c = summary.cheating(run, keys)
        markdown = render("reports/bench_cheats.md.j2", c=c, command=command)
        headline, draw, png = c.headline, (lambda path: None), None
    else:
        r = summary.model_run(run, keys)
        markdown = render("reports/bench_model.md.j2", r=r, command=command, gate=options.gate)
        headline, draw = r.headline, (lambda path: plot.plot_model(r, path))
    try:
        draw(stem.parent / f"{stem.name}.png")
    except ImportError:
        png = None  # matplotlib is in the bench extra; the table is written regardless
    return Rendered(markdown=markdown, headline=headline, png=png)


def render_starts(runs: list[RunRecord], keys: list[str], command: str, stem: Path
                  ) -> Rendered:
    """Modes canonical and samples scored cold and warm in one invocation (`--start both`).
    The headline (for --gate) is the lowest pass rate of the starts."""
    starts = summary.starts(runs, keys)
    markdown = render("reports/bench_starts.md.j2", t=starts, command=command)
    png = stem.parent / f"{stem.name}.png"
    try:
        plot.plot_side_by_side(starts.rows, png)
    except ImportError:
        return Rendered(markdown=markdown, headline=starts.headline, png=None)
    return Rendered(markdown=markdown, headline=starts.headline, png=png)


def _keys(options: BenchOptions, problems: list[Problem], everything: list[Problem]
          ) -> list[str]:
    if options.mode != "samples":
        return [p.task_id for p in problems]
    assert options.samples is not None
    samples = read_samples(options.samples, {p.task_id: p for p in everything})
    return [s.key for s in samples[: options.limit]]
