"""The action's own overhead around the loop: a replayed label → pull request run of the
bar-chart example, in the action's image, run the way GitHub's runner runs a Docker action,
against the local GitHub stand-in, with real sibling sandboxes. N runs; p50 and p95 of the
whole and of its parts, timed from the job log as it streams:

  start   container start → the first answer from GitHub (the permission check logged)
  image   the sandbox image check (build on first use, else reuse)
  loop    plan → generate → execute → evaluate → repair, until the run is done
  writes  the run done → the container gone (reports, commit, pull request, comment, labels)

Targets (issue 11): everything but the loop under 10 s, the whole under 60 s on 2 cores.
Also prints the action image's size and build time (`--rebuild` measures a build without
the layer cache; otherwise the build is reused while the context is unchanged).

    python benchmarks/action_overhead.py [--runs 5] [--rebuild]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selfcorrect_action.sandbox import engine  # noqa: E402
from selfcorrect_action.sandbox.image import ensure_image  # noqa: E402
from tests.e2e.action.harness import (  # noqa: E402
    MAINTAINER,
    REPLAY,
    SALES,
    SPEC,
    checkout,
    labeled,
    runner_inputs,
)
from tests.e2e.action.runner import prepare, read_outputs  # noqa: E402
from tests.e2e.action_image import build_action_image  # noqa: E402
from tests.fakes.github_server import DEFAULT_REPO, WRITE_TOKEN, FakeGitHub, seeded  # noqa: E402

MARKS = {"start": "[selfcorrect] permission:", "task": "[selfcorrect] task:",
         "image": "[selfcorrect] sandbox:", "done": "[selfcorrect] done:"}


@dataclass
class Timing:
    whole: float
    start: float
    image: float
    loop: float
    writes: float

    @property
    def outside_loop(self) -> float:
        return self.whole - self.loop


def one_run(image: str, scratch: Path) -> Timing:
    github = seeded(scratch / "github")
    try:
        github.add_user(MAINTAINER)
        github.add_collaborator(DEFAULT_REPO, MAINTAINER, "maintain")
        github.commit_files(DEFAULT_REPO, "main", {"examples/data/sales.csv": SALES,
                                                   "replays/issue-1.jsonl": REPLAY,
                                                   ".selfcorrect/tasks/bar_chart.yml": SPEC})
        event = labeled(github)
        return _timed_container(image, github, scratch, event)
    finally:
        github.stop()


def _timed_container(image: str, github: FakeGitHub, scratch: Path,
                     event: dict[str, object]) -> Timing:
    prepared = prepare(image, workspace=checkout(github, scratch / "workspace"),
                       scratch=scratch, event_name="issues", event=event,
                       inputs=runner_inputs({"replay": "replays"}, token=WRITE_TOKEN),
                       repository=DEFAULT_REPO, api_url=github.api_url)
    seen: dict[str, float] = {}
    started = time.perf_counter()
    with subprocess.Popen(prepared.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True) as child:
        assert child.stdout is not None
        for line in child.stdout:
            for mark, prefix in MARKS.items():
                if line.startswith(prefix) and mark not in seen:
                    seen[mark] = time.perf_counter() - started
    whole = time.perf_counter() - started
    outputs = read_outputs(prepared.outputs.read_text())
    if child.returncode != 0 or outputs.get("status") != "passed" or len(seen) < len(MARKS):
        raise SystemExit(f"the run did not pass (exit {child.returncode}, marks {seen})")
    return Timing(whole=whole, start=seen["start"], image=seen["image"] - seen["task"],
                  loop=seen["done"] - seen["image"], writes=whole - seen["done"])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rebuild", action="store_true",
                        help="build the action image without the layer cache first")
    args = parser.parse_args()
    docker_engine = engine.connect()
    ensure_image(docker_engine)
    built = build_action_image(docker_engine.client, tag="selfcorrect-action:bench",
                               progress=lambda line: None, nocache=args.rebuild)
    timings = []
    for index in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="selfcorrect-bench-") as scratch:
            timings.append(one_run(built.tag, Path(scratch)))
        print(f"run {index + 1}/{args.runs}: {timings[-1].whole:.1f} s", file=sys.stderr)
    print(f"action image: {built.size_bytes / 1e6:,.0f} MB, build "
          f"{'reused (context unchanged)' if built.cached else f'{built.seconds:.0f} s'}")
    print(f"\n{args.runs} replayed label -> pull request runs of bar_chart, seconds:\n")
    print("| part | p50 s | p95 s |")
    print("|---|---:|---:|")
    for name in ("whole", "start", "image", "loop", "writes", "outside_loop"):
        values = [getattr(t, name) for t in timings]
        label = {"outside_loop": "everything but the loop"}.get(name, name)
        print(f"| {label} | {statistics.median(values):.1f} | {percentile(values, 0.95):.1f} |")


if __name__ == "__main__":
    main()
