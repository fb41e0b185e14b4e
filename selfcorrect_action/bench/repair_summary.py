"""The repair benchmark's figures, from its case records (benchmarks/repair_suite.py):
detection rate, repairs, categories, attempts, packet sizes, time, regressions slipped and
hostile answers passed. Pure; templates/reports/bench_repair_suite.md.j2 lays them out."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from selfcorrect_action.bench.module_mutants import KINDS

HOSTILE_CASES = ("hostile:test_file", "hostile:outside_files", "hostile:regression")


@dataclass(frozen=True)
class KindRow:
    kind: str
    sampled: int
    caught: int
    repaired: int
    attempts: str  # mean attempts to pass, over the repaired


@dataclass(frozen=True)
class HostileRow:
    case: str
    tried: int
    passed: int
    outcomes: str  # "contract 3"


@dataclass(frozen=True)
class SuiteSummary:
    library: str
    tests: int
    run_seconds: float
    sites: int
    sampled: int
    caught: int
    repaired: int
    unrepaired: list[str]  # caught but not repaired: label and why
    rows: list[KindRow]
    categories: list[tuple[str, int]]  # the first attempt's failure category
    packet_p50: int
    packet_max: int
    packets_with_assertion: str  # "41 of 45"
    seconds_p50: float
    seconds_p95: float
    slipped: int
    flaky: list[str]
    hostile: list[HostileRow]

    @property
    def detection(self) -> str:
        return f"{100 * self.caught / self.sampled:.0f} %" if self.sampled else "n/a"

    @property
    def hostile_passed(self) -> int:
        return sum(row.passed for row in self.hostile)


def summarize(records: Mapping[str, Mapping[str, Any]], *, library: str, tests: int,
              run_seconds: float, sites: int) -> SuiteSummary:
    repairs = [r for r in records.values() if r.get("case") == "repair"]
    caught = [r for r in repairs if r.get("caught")]
    repaired = [r for r in caught if r.get("status") == "passed"]
    packets = [int(r["packet_tokens"]) for r in caught if "packet_tokens" in r]
    times = sorted(float(r["seconds"]) for r in repaired)
    return SuiteSummary(
        library=library, tests=tests, run_seconds=run_seconds, sites=sites,
        sampled=len(repairs), caught=len(caught), repaired=len(repaired),
        unrepaired=[f"{r['label']}: {r['status']}, {r['stop_reason']}" for r in caught
                    if r.get("status") != "passed"],
        rows=[_kind_row(kind, repairs) for kind in KINDS],
        categories=Counter(str(r["first_category"]) for r in caught
                           if r.get("first_category")).most_common(),
        packet_p50=int(statistics.median(packets)) if packets else 0,
        packet_max=max(packets, default=0),
        packets_with_assertion=f"{sum(1 for r in caught if r.get('assertion'))} of "
                               f"{len(packets)}",
        seconds_p50=_percentile(times, 50), seconds_p95=_percentile(times, 95),
        slipped=sum(1 for r in repaired if r.get("slipped")),
        flaky=sorted({test for r in repairs for test in r.get("flaky", [])}),
        hostile=[_hostile_row(case, records.values()) for case in HOSTILE_CASES],
    )


def _kind_row(kind: str, repairs: Sequence[Mapping[str, Any]]) -> KindRow:
    of_kind = [r for r in repairs if r.get("kind") == kind]
    caught = [r for r in of_kind if r.get("caught")]
    repaired = [r for r in caught if r.get("status") == "passed"]
    attempts = (f"{statistics.mean(int(r['attempts']) for r in repaired):.1f}" if repaired
                else "-")
    return KindRow(kind, len(of_kind), len(caught), len(repaired), attempts)


def _hostile_row(case: str, records: Any) -> HostileRow:
    tried = [r for r in records if r.get("case") == case]
    outcomes = Counter(str(r.get("first_category") or r.get("status")) for r in tried)
    return HostileRow(case.removeprefix("hostile:"), len(tried),
                      sum(1 for r in tried if r.get("status") == "passed"),
                      ", ".join(f"{name} {count}" for name, count in outcomes.most_common()))


def _percentile(values: Sequence[float], percent: int) -> float:
    if not values:
        return 0.0
    # Nearest rank: the smallest value with at least `percent` % of the values at or below.
    index = min(len(values) - 1, max(0, math.ceil(percent / 100 * len(values)) - 1))
    return values[index]
