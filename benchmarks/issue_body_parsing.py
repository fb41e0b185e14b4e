"""How long reading a hostile issue body takes, at about GitHub's 65,536-character limit: the
shapes that would make a backtracking regex or a nested loop over lines slow. No Docker, no
network. Prints p50 and max in milliseconds per shape.

tests/unit/github/test_issue_spec.py checks the same shapes for linear work by counting
calls (test_pathological_bodies_are_read_in_linear_time); the time lives here. Target: each
under 5 s, the bound that test used to time (a body is read once per issue event).

    python benchmarks/issue_body_parsing.py [--runs 5]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selfcorrect_action.errors import SpecError  # noqa: E402
from selfcorrect_action.github.issue_spec import spec_from_issue  # noqa: E402

BODIES = {
    "one line of backticks": "`" * 60_000,
    "fence after fence": "### Task\n" + "```\n" * 16_000,
    "heading markers on one line": "### " * 16_000,
    "a Task of bullets": "### Task\n\n" + "- " * 30_000,
    "a key repeated in a YAML block": "```yaml\n" + "prompt: x\n" * 6_000 + "```",
}


def read_ms(body: str) -> float:
    started = time.perf_counter()
    with contextlib.suppress(SpecError):
        spec_from_issue(12, body, root=ROOT)
    return (time.perf_counter() - started) * 1000


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args(argv).runs
    read_ms("### Task\n\nwarm up\n")  # the first read loads the spec schema
    print(f"reading a hostile issue body ({runs} runs each), milliseconds")
    print(f"  {'':<32} {'chars':>7} {'p50':>8} {'max':>8}")
    for name, body in BODIES.items():
        samples = [read_ms(body) for _ in range(runs)]
        print(f"  {name:<32} {len(body):>7,} {statistics.median(samples):8.1f} "
              f"{max(samples):8.1f}")
    print("  (target: each under 5000 ms)")


if __name__ == "__main__":
    main()
