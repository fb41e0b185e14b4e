"""What a run's results add up to, per mode: pure functions of its RunRecord, the view
models the Markdown templates and the plots are made from."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from selfcorrect_action.bench.cheats import CHEATS
from selfcorrect_action.bench.mutants import KINDS
from selfcorrect_action.bench.results import RunRecord


def pct(part: int, whole: int) -> float | None:
    return 100.0 * part / whole if whole else None


def ratio(ours: float | None, theirs: float | None) -> float | None:
    return ours / theirs if ours is not None and theirs else None


def full_wall(run: RunRecord, total: int) -> float | None:
    """Our wall time, if one invocation scored every item (a resumed run's parts are not
    comparable with a whole run of the reference)."""
    whole = [s for s in run.segments if s.items == total and total]
    return whole[-1].wall_s if whole else None


@dataclass(frozen=True)
class Disagreement:
    key: str
    ours: bool
    category: str | None
    evidence: str
    theirs: bool
    result: str


@dataclass(frozen=True)
class SideBySide:
    mode: str
    isolation: str
    runtime: str
    workers: int
    total: int
    ours_passed: int
    reference_passed: int | None
    agreement: int | None
    disagreements: list[Disagreement]
    ours_wall_s: float | None
    reference_wall_s: float | None
    bare_wall_s: float | None
    categories: dict[str, int]
    start: str = ""  # strict runs: the tests' pytest cold or warm; "" before it was recorded
    # "auto": tests that need no pytest were judged plainly; "pytest": all under pytest;
    # "" before it was recorded (all under pytest).
    tests: str = ""
    # The bare loop without Docker's networking, as the sandbox's containers start; None in
    # runs from before it was measured.
    bare_no_network_wall_s: float | None = None

    @property
    def vs_bare(self) -> float | None:
        return ratio(self.ours_wall_s, self.bare_wall_s)

    @property
    def vs_bare_no_network(self) -> float | None:
        return ratio(self.ours_wall_s, self.bare_no_network_wall_s)

    @property
    def vs_reference(self) -> float | None:
        return ratio(self.ours_wall_s, self.reference_wall_s)

    @property
    def headline(self) -> float | None:
        return pct(self.ours_passed, self.total)


def side_by_side(run: RunRecord, keys: list[str]) -> SideBySide:
    settings = run.settings
    ours = {key: run.items[key] for key in keys if key in run.items}
    reference = run.extras.get("reference", {})
    theirs = reference.get("verdicts", {})
    compared = [key for key in keys if key in ours and key in theirs]
    disagreements = [
        Disagreement(key, bool(ours[key]["passed"]), ours[key].get("category"),
                     str(ours[key].get("evidence", "")), bool(theirs[key]["passed"]),
                     str(theirs[key].get("result", "")))
        for key in compared if bool(ours[key]["passed"]) != bool(theirs[key]["passed"])
    ]
    return SideBySide(
        mode=run.mode, isolation=str(settings.get("isolation")),
        runtime=str(settings.get("runtime")), workers=int(settings.get("workers") or 0),
        total=len(keys), ours_passed=sum(1 for r in ours.values() if r["passed"]),
        reference_passed=sum(1 for k in keys if theirs.get(k, {}).get("passed"))
        if theirs else None,
        agreement=len(compared) - len(disagreements) if theirs else None,
        disagreements=disagreements,
        ours_wall_s=full_wall(run, len(keys)),
        reference_wall_s=reference.get("wall_s"),
        bare_wall_s=run.extras.get("bare", {}).get("wall_s"),
        categories=dict(Counter(r.get("category") or "passed" for r in ours.values())),
        start=str(settings.get("start") or "") if settings.get("isolation") == "strict" else "",
        tests=str(settings.get("tests") or ""),
        bare_no_network_wall_s=run.extras.get("bare_no_network", {}).get("wall_s"),
    )


@dataclass(frozen=True)
class Starts:
    """One invocation's runs of the same items, one per start (cold, then warm), each
    beside the same reference harness and bare loops."""

    rows: list[SideBySide]
    # Items whose verdict (passed, category) is not the same in every start; an item one
    # start has not scored yet (a resumed run) is left out.
    differing: list[str]

    @property
    def first(self) -> SideBySide:
        return self.rows[0]

    @property
    def warm_vs_cold(self) -> float | None:
        by_start = {row.start: row.ours_wall_s for row in self.rows}
        return ratio(by_start.get("warm"), by_start.get("cold"))

    @property
    def headline(self) -> float | None:
        rates = [row.headline for row in self.rows]
        return None if any(rate is None for rate in rates) else min(
            rate for rate in rates if rate is not None)


def starts(runs: list[RunRecord], keys: list[str]) -> Starts:
    verdicts = [{key: (bool(record["passed"]), record.get("category"))
                 for key, record in run.items.items()} for run in runs]
    differing = [key for key in keys if all(key in v for v in verdicts)
                 and len({v[key] for v in verdicts}) > 1]
    return Starts(rows=[side_by_side(run, keys) for run in runs], differing=differing)


@dataclass(frozen=True)
class KindRow:
    kind: str
    problems: int
    with_sites: int
    equivalent_only: int
    mutants: int  # behaviour-changing, scored
    caught: int
    missed_on_tested: int  # differs on an input the test makes, yet passed (should be 0)
    missed: int

    @property
    def detection(self) -> float | None:
        return pct(self.caught, self.mutants)


@dataclass(frozen=True)
class CheatRow:
    name: str
    runs: int
    passed: int
    control_runs: int
    control_passed: int


@dataclass(frozen=True)
class Repairs:
    count: int
    passed: int
    attempts: dict[int, int]
    mean_attempts: float | None
    packet_median: float | None
    packet_max: int | None
    assertion: int
    expected_vs_actual: int
    with_packet: int


@dataclass(frozen=True)
class Mutation:
    isolation: str
    runtime: str
    problems: int
    kinds: list[KindRow]
    total: KindRow
    categories: dict[str, int]
    repairs: Repairs
    cheats: list[CheatRow]
    missed_examples: list[tuple[str, str]] = field(default_factory=list)

    @property
    def headline(self) -> float | None:
        return self.total.detection

    @property
    def cheats_passed(self) -> int:
        return sum(row.passed for row in self.cheats)


def mutation(run: RunRecord, task_ids: list[str]) -> Mutation:
    items = run.items
    rows: list[KindRow] = []
    categories: Counter[str] = Counter()
    missed_examples: list[tuple[str, str]] = []
    for kind in KINDS:
        picks = [(t, items.get(t, {}).get("kinds", {}).get(kind, {})) for t in task_ids]
        scored = [(t, pick, items[f"{t}:{kind}"]) for t, pick in picks
                  if pick.get("site") is not None and f"{t}:{kind}" in items]
        caught = [r for _, _, r in scored if not r["passed"]]
        categories.update(r.get("category") or "?" for r in caught)
        missed = [(t, pick, r) for t, pick, r in scored if r["passed"]]
        missed_examples += [(t, str(r.get("label", ""))) for t, _, r in missed]
        rows.append(KindRow(
            kind=kind, problems=len(task_ids),
            with_sites=sum(1 for _, p in picks if p.get("sites_checked")),
            equivalent_only=sum(1 for _, p in picks
                                if p.get("sites_checked") and p.get("site") is None),
            mutants=len(scored), caught=len(caught),
            missed_on_tested=sum(1 for _, p, _ in missed if p.get("where") == "test"),
            missed=len(missed)))
    total = KindRow("all", len(task_ids) * len(KINDS), *(
        sum(getattr(row, name) for row in rows)
        for name in ("with_sites", "equivalent_only", "mutants", "caught", "missed_on_tested",
                     "missed")))
    return Mutation(
        isolation=str(run.settings.get("isolation")), runtime=str(run.settings.get("runtime")),
        problems=len(task_ids), kinds=rows, total=total, categories=dict(categories),
        repairs=_repairs([items[k] for k in items if k.endswith(":repair")]),
        cheats=[_cheat_row(items, task_ids, name) for name in CHEATS],
        missed_examples=missed_examples[:20],
    )


@dataclass(frozen=True)
class Cheating:
    """Mode cheats: every cheat against every problem, under the default and the control."""

    runtime: str
    problems: int
    cheats: list[CheatRow]

    @property
    def passed(self) -> int:
        return sum(row.passed for row in self.cheats)

    @property
    def runs(self) -> int:
        return sum(row.runs for row in self.cheats)

    @property
    def headline(self) -> float | None:
        """Percent of cheat runs refused under the default (the gate's figure)."""
        return pct(self.runs - self.passed, self.runs)


def cheating(run: RunRecord, task_ids: list[str]) -> Cheating:
    return Cheating(runtime=str(run.settings.get("runtime")), problems=len(task_ids),
                    cheats=[_cheat_row(run.items, task_ids, name) for name in CHEATS])


def _repairs(records: list[dict[str, Any]]) -> Repairs:
    packets = [r["packet_tokens"] for r in records if "packet_tokens" in r]
    attempts = [int(r["attempts"]) for r in records]
    return Repairs(
        count=len(records), passed=sum(1 for r in records if r.get("passed")),
        attempts=dict(sorted(Counter(attempts).items())),
        mean_attempts=statistics.fmean(attempts) if attempts else None,
        packet_median=statistics.median(packets) if packets else None,
        packet_max=max(packets) if packets else None,
        assertion=sum(1 for r in records if r.get("assertion")),
        expected_vs_actual=sum(1 for r in records if r.get("expected_vs_actual")),
        with_packet=len(packets),
    )


def _cheat_row(items: dict[str, dict[str, Any]], task_ids: list[str], name: str) -> CheatRow:
    runs = [items[k] for t in task_ids if (k := f"{t}:cheat:{name}") in items]
    control = [items[k] for t in task_ids if (k := f"{t}:control:{name}") in items]
    return CheatRow(name, len(runs), sum(1 for r in runs if r["passed"]), len(control),
                    sum(1 for r in control if r["passed"]))


@dataclass(frozen=True)
class ModelRun:
    model: str
    replayed: bool
    problems: int
    done: int
    errors: int
    oneshot_passed: int
    loop_passed: int
    mean_attempts: float | None
    tokens_per_solved: float | None
    cost_per_solved: float | None  # None: some call had no known price
    categories: list[tuple[str, int, int]]  # category, one-shot failures, loop failures
    # Every attempt of the loops, and those that failed as `syntax` (an answer that was not
    # runnable code: what a small model's prose and echoes become).
    loop_attempts: int = 0
    syntax_attempts: int = 0
    tokens_per_problem: float | None = None  # one-shot and loop together
    # Wall seconds per problem, one-shot and loop together; None for records made before
    # they were kept.
    seconds_per_problem: float | None = None

    @property
    def oneshot_pass(self) -> float | None:
        return pct(self.oneshot_passed, self.done)

    @property
    def loop_pass(self) -> float | None:
        return pct(self.loop_passed, self.done)

    @property
    def headline(self) -> float | None:
        return self.loop_pass

    @property
    def syntax_share(self) -> float | None:
        return pct(self.syntax_attempts, self.loop_attempts)


def model_run(run: RunRecord, task_ids: list[str]) -> ModelRun:
    records = [run.items[t] for t in task_ids if t in run.items]
    done = [r for r in records if "loop" in r]
    loops = [r["loop"] for r in done]
    oneshots = [r.get("oneshot", {}) for r in done]
    solved = [loop for loop in loops if loop["passed"]]
    tokens = sum(loop["tokens"] + 0 for loop in loops)
    known = all(loop.get("cost_known", True) for loop in loops)
    oneshot_categories = Counter(o.get("category") or "no answer" for o in oneshots
                                 if not o.get("passed"))
    loop_categories = Counter(loop.get("final_category") or loop.get("status") or "?"
                              for loop in loops if not loop["passed"])
    names = sorted(set(oneshot_categories) | set(loop_categories))
    extras = run.extras.get("model", {})
    return ModelRun(
        model=str(extras.get("name", run.settings.get("model"))),
        replayed=bool(extras.get("replayed")), problems=len(task_ids), done=len(done),
        errors=len(records) - len(done), oneshot_passed=sum(1 for o in oneshots
                                                            if o.get("passed")),
        loop_passed=len(solved),
        mean_attempts=statistics.fmean([loop["attempts"] for loop in loops]) if loops else None,
        tokens_per_solved=tokens / len(solved) if solved else None,
        cost_per_solved=(sum(loop["cost_usd"] for loop in loops) / len(solved))
        if solved and known else None,
        categories=[(name, oneshot_categories[name], loop_categories[name]) for name in names],
        loop_attempts=sum(len(loop.get("categories", ())) for loop in loops),
        syntax_attempts=sum(loop.get("categories", []).count("syntax") for loop in loops),
        tokens_per_problem=statistics.fmean(
            [loop["tokens"] + o.get("tokens", 0) for loop, o in zip(loops, oneshots,
                                                                    strict=True)])
        if loops else None,
        seconds_per_problem=_seconds_per_problem(done),
    )


def _seconds_per_problem(done: list[dict[str, Any]]) -> float | None:
    timed = [r["oneshot"].get("seconds", 0.0) + r["loop"]["seconds"] for r in done
             if "seconds" in r["loop"]]
    return statistics.fmean(timed) if timed else None


def gate_failed(headline: float | None, gate: float | None) -> bool:
    """--gate PCT: a run below the floor (or with nothing to measure) fails."""
    return gate is not None and (headline is None or headline < gate)
