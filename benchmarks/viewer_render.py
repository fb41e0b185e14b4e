"""How long the attempt viewer takes to make a run's page from a hostile run.json: markup,
event handlers and javascript: links in every text, outputs of 10 MB, 500 attempts
(tests/unit/viewer/hostile.py). No Docker, no browser. Prints the run.json's size, the time
to read it, and p50 and max of rendering its page (the first render apart: it compiles the
templates), with the page's size.

tests/unit/viewer/test_hostile.py checks the same run for escaping, for a bounded page and for
work bounded by what the page shows (a diff per attempt shown in full); the time lives here.
Target (issue 22): the page within a second, as `selfcorrect view` and `view --site` make
it, from a run.json.

    python benchmarks/viewer_render.py [--runs 5] [--attempts 500]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selfcorrect_action.report.run_json import load_run_json  # noqa: E402
from selfcorrect_action.viewer.page import render_page  # noqa: E402
from tests.unit.viewer.hostile import ATTEMPTS, HUGE, hostile_run_json  # noqa: E402

TARGET_S = 1.0
SECRETS = ["a-secret-of-this-machine-42"]  # as `view` passes the environment's secrets


def seconds(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="warm renders to time")
    parser.add_argument("--attempts", type=int, default=ATTEMPTS)
    args = parser.parse_args()
    text = hostile_run_json(attempts=args.attempts, huge=HUGE)
    print(f"run.json: {len(text) / 1e6:.1f} MB, {args.attempts} attempts, outputs of "
          f"{HUGE / 1024 / 1024:.0f} MB")
    loaded = []
    print(f"read:     {seconds(lambda: loaded.append(load_run_json(text))):.3f} s")
    state = loaded[0]
    pages: list[str] = []

    def render() -> None:
        pages.append(render_page(state, (), secrets=SECRETS, from_report=True))

    cold = seconds(render)
    warm = [seconds(render) for _ in range(args.runs)]
    print(f"render:   first {cold:.3f} s (templates compiled), then p50 "
          f"{statistics.median(warm):.3f} s, max {max(warm):.3f} s over {args.runs}")
    print(f"page:     {len(pages[-1].encode()) / 1e6:.2f} MB")
    verdict = "within" if max(cold, *warm) <= TARGET_S else "OVER"
    print(f"target:   the page within {TARGET_S:g} s: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
