"""EXECUTE (kind repair): the repository's test command, in a fresh sandbox container, over
the whole repository with the attempt's files in place; no network.

The suite imports the rewritten code into pytest's own process (no plain-data boundary fits
a whole test suite), so the static tampering scan is the guard here, as for
`isolation: in-process`: a rewrite that adds a way to reach into the test run (the call
stack, pytest's internals, exit handlers, the test files' names...) is refused before it
runs. Only what the rewrite adds counts: a library that already walks frames for its own
reasons is not refused for being repaired."""

from __future__ import annotations

from collections import Counter

from selfcorrect_action.evaluation import tampering
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.repair.context import frozen_tests, originals, test_request
from selfcorrect_action.loop.state import RunState, with_last_attempt
from selfcorrect_action.records import evolve
from selfcorrect_action.taxonomy import Category, Check, Verdict
from selfcorrect_action.templating import shorten


def execute_repair(state: RunState, deps: Deps) -> RunState:
    attempt = state.last
    if attempt is None or attempt.cycle_of is not None or attempt.verdict is not None:
        return state
    refused = tampering_verdict(originals(state, deps), attempt.files, frozen_tests(deps))
    if refused is not None:
        deps.on_event("execute", f"attempt {attempt.index}: {shorten(refused.evidence, 160)}")
        return with_last_attempt(state, evolve(attempt, {"verdict": refused}))
    deps.on_event("execute", f"attempt {attempt.index}: running "
                  f"{' '.join(state.spec.test_command)} with {', '.join(attempt.files)}")
    started = deps.monotonic()
    result = deps.sandbox.run(test_request(state, deps, attempt.files),
                              deps.work_root / f"attempt-{attempt.index}" / "tests")
    return with_last_attempt(state, evolve(attempt, {
        "execution": result, "duration_ms": int((deps.monotonic() - started) * 1000)}))


def tampering_verdict(originals: dict[str, str], rewritten: dict[str, str],
                      test_files: list[str]) -> Verdict | None:
    """A contract failure naming what the rewrite adds that tampers, or None."""
    added: list[tampering.Finding] = []
    for path, text in rewritten.items():
        if not path.endswith(".py"):
            continue
        before = Counter((f.what, f.why) for f in tampering.scan(
            originals.get(path, ""), test_files=test_files, limit=None))
        for finding in tampering.scan(text, test_files=test_files, limit=None):
            key = (finding.what, finding.why)
            if before[key]:
                before[key] -= 1
            else:
                added.append(tampering.Finding(finding.line, f"{path}: {finding.what}",
                                               finding.why))
    if not added:
        return None
    evidence = tampering.evidence(added[:tampering.MAX_FINDINGS])
    return Verdict(passed=False, failed_layer="contract", category=Category.CONTRACT,
                   evidence=evidence, checks=[Check(name="tampering", passed=False,
                                                    detail=evidence[:600])])
