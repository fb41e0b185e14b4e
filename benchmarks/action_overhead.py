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

`--prebuilt` instead measures, side by side in one run, what the first job on a fresh runner
pays for its images (issue 16, item 9): built from source (the runner builds the action
image, the action builds the sandbox image on first use) against a release's prebuilt ones
(the runner pulls the action image by digest, the action pulls the sandbox image by digest,
from a local registry standing in for GHCR, see tests/e2e/local_registry.py), and with the
sandbox image already present. Both images are built FROM a base of the benchmark's own (the
Debian base relabelled), so no layer of theirs is on this engine yet: the builds run every
step and the pulls download every layer but the Debian base's (about 30 MB on GitHub); the
images other checkouts use are left alone, and everything made is removed afterwards. Each
arm is one label -> pull request run; printed: the action image's build and pull, the
sandbox image stage, the step, their sums and the ratio.

    python benchmarks/action_overhead.py [--runs 5] [--rebuild] [--prebuilt]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import docker
import docker.errors

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.release import rewrite_action_yml  # noqa: E402
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
from tests.e2e.local_registry import forget, local_registry, push  # noqa: E402
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


def one_run(image: str, scratch: Path, *, action_yml: Path = ROOT / "action.yml") -> Timing:
    github = seeded(scratch / "github")
    try:
        github.add_user(MAINTAINER)
        github.add_collaborator(DEFAULT_REPO, MAINTAINER, "maintain")
        github.commit_files(DEFAULT_REPO, "main", {"examples/data/sales.csv": SALES,
                                                   "replays/issue-1.jsonl": REPLAY,
                                                   ".selfcorrect/tasks/bar_chart.yml": SPEC})
        event = labeled(github)
        return _timed_container(image, github, scratch, event, action_yml)
    finally:
        github.stop()


def _timed_container(image: str, github: FakeGitHub, scratch: Path,
                     event: dict[str, object], action_yml: Path) -> Timing:
    prepared = prepare(image, workspace=checkout(github, scratch / "workspace"),
                       scratch=scratch, event_name="issues", event=event,
                       inputs=runner_inputs({"replay": "replays"}, token=WRITE_TOKEN,
                                            action_yml=action_yml),
                       repository=DEFAULT_REPO, api_url=github.api_url)
    seen: dict[str, float] = {}
    last_sandbox_line = 0.0  # the image is ready at the last one (built, pulled, reused)
    started = time.perf_counter()
    with subprocess.Popen(prepared.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True) as child:
        assert child.stdout is not None
        for line in child.stdout:
            for mark, prefix in MARKS.items():
                if line.startswith(prefix) and mark not in seen:
                    seen[mark] = time.perf_counter() - started
            if line.startswith(MARKS["image"]) and "done" not in seen:
                last_sandbox_line = time.perf_counter() - started
    whole = time.perf_counter() - started
    outputs = read_outputs(prepared.outputs.read_text())
    if child.returncode != 0 or outputs.get("status") != "passed" or len(seen) < len(MARKS):
        raise SystemExit(f"the run did not pass (exit {child.returncode}, marks {seen})")
    return Timing(whole=whole, start=seen["start"], image=last_sandbox_line - seen["task"],
                  loop=seen["done"] - last_sandbox_line, writes=whole - seen["done"])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rebuild", action="store_true",
                        help="build the action image without the layer cache first")
    parser.add_argument("--prebuilt", action="store_true",
                        help="instead: a fresh runner's first job with images built from "
                        "source against prebuilt ones pulled from a local registry")
    args = parser.parse_args()
    docker_engine = engine.connect()
    if args.prebuilt:
        with tempfile.TemporaryDirectory(prefix="selfcorrect-bench-") as scratch:
            print_first_jobs(first_jobs(docker_engine.client, Path(scratch)))
        return
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


# ---- --prebuilt: a fresh runner's first job, images built against images pulled ----

BASE = "debian:bookworm-slim"
ROLE_LABEL = "org.selfcorrect.role"
BENCH_LABEL = "org.selfcorrect.bench"


@dataclass
class FirstJob:
    """One arm: what the runner spent on the action image before the step (a build or a
    pull; 0 when present), and the step itself, a label -> pull request run."""

    action_image: float
    step: Timing

    @property
    def whole(self) -> float:
        return self.action_image + self.step.whole


def first_jobs(client: docker.DockerClient, scratch: Path) -> dict[str, FirstJob]:
    nonce = secrets.token_hex(4)
    base = f"selfcorrect-bench-base:{nonce}"
    made: list[str] = []  # what to remove afterwards, in order
    try:
        client.images.build(fileobj=io.BytesIO(
            f"FROM {BASE}\nLABEL {BENCH_LABEL}={nonce}\n".encode()), tag=base, pull=False)
        made.append(base)
        with local_registry(scratch / "registry") as registry:
            return _three_arms(client, scratch, base, nonce, registry.host, made)
    finally:
        for reference in reversed(made):
            with contextlib.suppress(docker.errors.APIError):
                client.images.remove(reference)
        # What else carries the base's label: the action image's builder stage, left
        # untagged by a multi-stage build; newest first, so children go before the base.
        leftovers = client.images.list(filters={"label": f"{BENCH_LABEL}={nonce}"})
        for leftover in sorted(leftovers, key=lambda image: str(image.attrs["Created"]),
                               reverse=True):
            with contextlib.suppress(docker.errors.APIError):
                client.images.remove(leftover.id)


def _three_arms(client: docker.DockerClient, scratch: Path, base: str, nonce: str,
                host: str, made: list[str]) -> dict[str, FirstJob]:
    own_base = {name: (ROOT / name).read_bytes().replace(f"FROM {BASE}".encode(),
                                                         f"FROM {base}".encode())
                for name in ("Dockerfile", "sandbox/Dockerfile")}
    _say("building the action image from source (no layer cached)")
    built = build_action_image(client, tag=f"selfcorrect-bench-action:{nonce}",
                               overrides=own_base, nocache=True, progress=lambda line: None)
    made.append(built.tag)
    _say("label -> pull request, the sandbox image built on first use")
    from_source = FirstJob(built.seconds, one_run(built.tag, scratch / "from-source"))
    (sandbox,) = client.images.list(filters={"label": [f"{BENCH_LABEL}={nonce}",
                                                       f"{ROLE_LABEL}=sandbox"]})
    made.append(sandbox.tags[0])
    _say("pushing both to the local registry, then removing them here")
    action_ref = _push_and_forget(client, built.tag, f"{host}/selfcorrect-action", made)
    sandbox_ref = _push_and_forget(client, sandbox.tags[0], f"{host}/selfcorrect-sandbox",
                                   made)
    action_yml = scratch / "action.yml"
    action_yml.write_text(rewrite_action_yml((ROOT / "action.yml").read_text(),
                                             action_image=action_ref,
                                             sandbox_image=sandbox_ref))
    _say("pulling the action image by digest, as the runner does")
    started = time.perf_counter()
    client.images.pull(action_ref)
    pulled_in = time.perf_counter() - started
    _say("label -> pull request, the sandbox image pulled by digest")
    pulled = FirstJob(pulled_in, one_run(action_ref, scratch / "pulled", action_yml=action_yml))
    _say("label -> pull request, both images present")
    present = FirstJob(0.0, one_run(action_ref, scratch / "present", action_yml=action_yml))
    return {"from source": from_source, "prebuilt, pulled": pulled,
            "prebuilt, present": present}


def _push_and_forget(client: docker.DockerClient, image: str, repository: str,
                     made: list[str]) -> str:
    reference = f"{repository}@{push(client, image, repository, 'bench')}"
    forget(client, f"{repository}:bench")
    client.images.remove(image)  # with its layers: the pull below must download them
    made.remove(image)
    made.append(reference)  # what the pull brings back
    return reference


def _say(message: str) -> None:
    print(f"==> {message}", file=sys.stderr, flush=True)


def print_first_jobs(arms: dict[str, FirstJob]) -> None:
    names = list(arms)
    print("\nA fresh runner's first job, label -> pull request (replayed bar_chart), one run "
          "each, seconds:\n")
    print("| | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    rows = {
        "action image, before the step (build / pull)": [a.action_image for a in arms.values()],
        "sandbox image, in the step (build / pull / check)": [a.step.image
                                                             for a in arms.values()],
        "the step: label -> pull request": [a.step.whole for a in arms.values()],
        "the job's images and step": [a.whole for a in arms.values()],
    }
    for label, values in rows.items():
        print(f"| {label} | " + " | ".join(f"{value:.1f}" for value in values) + " |")
    source, pulled = arms["from source"], arms["prebuilt, pulled"]
    print(f"\naction image: build {source.action_image:.0f} s, pull {pulled.action_image:.0f} s "
          f"({source.action_image / pulled.action_image:.1f}x)")
    print(f"sandbox image: build on first use {source.step.image:.0f} s, pull "
          f"{pulled.step.image:.0f} s ({source.step.image / pulled.step.image:.1f}x)")
    print(f"first job, images and step: from source {source.whole:.0f} s, prebuilt "
          f"{pulled.whole:.0f} s: {source.whole / pulled.whole:.1f}x")


if __name__ == "__main__":
    main()
