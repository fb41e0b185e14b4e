"""EXECUTE: the candidate in a fresh sandbox container, then (if it ran cleanly and the
task has tests) the frozen tests in another fresh container, next to the candidate, the
inputs and the files the candidate wrote, so tests can check its outputs too."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from selfcorrect_action.evaluation import tampering
from selfcorrect_action.evaluation.junit import PYTEST_JUNIT_PATH, boundary_pytest_argv, pytest_argv
from selfcorrect_action.evaluation.plain_tests import plain_runnable
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.state import RunState, with_last_attempt
from selfcorrect_action.records import evolve
from selfcorrect_action.sandbox.models import (
    Boundary,
    ExecutionRequest,
    ExecutionResult,
    InputFile,
    Limits,
    script_argv,
)
from selfcorrect_action.taxonomy import Category, Check, Verdict
from selfcorrect_action.templating import shorten

MAX_CARRIED_ARTIFACT_BYTES = 16 * 1024 * 1024
# Output files that could steer pytest or Python in the test run are never carried over:
# modules shadowing imports, path hooks, conftest files, ini files with addopts. Extension
# modules too: a planted `statistics.cpython-311-x86_64-linux-gnu.so` next to the tests is
# what their `import statistics` loads, native code in their process (the work dir is
# mounted noexec, which stops it under runc; gVisor mapped it all the same, and it forged a
# pass there: tests/security/test_script_planting.py).
_NOT_CARRIED_SUFFIXES = (".py", ".pyc", ".pth", ".ini", ".cfg", ".toml", ".so", ".pyd")
# Files a library reads from the working folder and runs code from: matplotlib eval()s
# parts of ./matplotlibrc (axes.prop_cycle; a red team ran pytest's internals from it),
# pdb runs ./.pdbrc. The tests' working folder is where the carried files go.
_NOT_CARRIED_NAMES = ("matplotlibrc", ".pdbrc")


def execute(state: RunState, deps: Deps) -> RunState:
    attempt = state.last
    if attempt is None or attempt.cycle_of is not None or attempt.verdict is not None:
        return state  # a cycle or an empty answer: nothing to run
    refused = tampering_verdict(state, attempt.code)
    if refused is not None:
        deps.on_event("execute", f"attempt {attempt.index}: {shorten(refused.evidence, 160)}")
        return with_last_attempt(state, evolve(attempt, {"verdict": refused}))
    deps.on_event("execute", f"attempt {attempt.index}: running {state.output_name}")
    started = deps.monotonic()
    candidate = InputFile(path=state.output_name, data=attempt.code.encode())
    folder = deps.work_root / f"attempt-{attempt.index}"
    result = deps.sandbox.run(_request(state, [candidate, *deps.inputs],
                                       script_argv(state.output_name)), folder / "run")
    test_result = None
    if state.tests and _ran_cleanly(result):
        deps.on_event("execute", f"attempt {attempt.index}: running the frozen tests")
        # The inputs are reserved too: a changed copy the candidate left would replace the
        # data the tests check its output against (a wrong answer that rewrote sales.csv to
        # agree with it passed).
        reserved = {candidate.path, *state.tests, *(item.path for item in deps.inputs)}
        files = [candidate, *deps.inputs, *_carried(result, reserved),
                 *(InputFile(path=name, data=text.encode()) for name, text in state.tests.items())]
        test_result = deps.sandbox.run(_tests_request(state, files), folder / "tests")
    updated = evolve(attempt, {
        "execution": result, "test_execution": test_result,
        "duration_ms": int((deps.monotonic() - started) * 1000),
    })
    return with_last_attempt(state, updated)


def _request(state: RunState, files: list[InputFile], argv: list[str]) -> ExecutionRequest:
    contract = state.contract
    return ExecutionRequest(
        argv=argv, files=files, timeout_s=contract.timeout_s,
        limits=Limits(memory_mb=contract.memory_mb), network=contract.network,
        runtime=state.runtime, artifact_paths=[a.path for a in contract.artifacts],
        warm=contract.warm,
    )


def tampering_verdict(state: RunState, code: str) -> Verdict | None:
    """With `isolation: in-process` the frozen tests share the candidate's process: code
    that would tamper with them is refused before it runs (evaluation/tampering.py). A
    script's tests share its process only if they import it; otherwise they judge its
    files from a container of their own, and what it writes there cannot steer them."""
    if not state.tests or state.spec.isolation != "in-process":
        return None
    module = PurePosixPath(state.output_name).stem
    if state.spec.kind == "script" and not any(
            tampering.imports(text, module) for text in state.tests.values()):
        return None
    star = any(tampering.star_imports(text, module) for text in state.tests.values())
    findings = tampering.scan(code, test_files=list(state.tests), star_imported=star)
    if not findings:
        return None
    evidence = tampering.evidence(findings)
    return Verdict(passed=False, failed_layer="contract", category=Category.CONTRACT,
                   evidence=evidence, checks=[Check(name="tampering", passed=False,
                                                    detail=evidence[:600])])


def _tests_request(state: RunState, files: list[InputFile]) -> ExecutionRequest:
    """The frozen tests' run: by default apart from the candidate (its module served from a
    process of its own), or, for `isolation: in-process`, importing it into pytest."""
    tests = list(state.tests)
    if state.spec.isolation == "in-process":
        return _request(state, files, pytest_argv(tests))
    boundary = Boundary(candidate=state.output_name, module=PurePosixPath(state.output_name).stem,
                        tests=tests, eager=state.spec.kind == "function")
    plain = state.spec.tests_runner == "auto" and plain_runnable(state.tests) is None
    request = _request(state, files, boundary_pytest_argv(tests, plain=plain))
    return evolve(request, {"boundary": boundary, "artifact_paths": [PYTEST_JUNIT_PATH]})


def _ran_cleanly(result: ExecutionResult) -> bool:
    return result.exit_code == 0 and not result.timed_out and result.sandbox_note is None


def _steers_python(path: str) -> bool:
    parts = PurePosixPath(path).parts
    name = parts[-1].lower()
    # .selfcorrect/ is where the test run's own report goes: a file the candidate left there
    # must never be read as the tests' verdict. A distribution's metadata on sys.path is
    # where pytest finds plugins to load (its pytest11 entry points).
    return name.endswith(_NOT_CARRIED_SUFFIXES) or name.startswith("conftest") or (
        name in _NOT_CARRIED_NAMES) or (
        "__pycache__" in parts) or parts[0].lower() == ".selfcorrect" or any(
        part.lower().endswith((".dist-info", ".egg-info")) for part in parts)


def _carried(result: ExecutionResult, reserved: set[str]) -> list[InputFile]:
    """The candidate's output files, for tests that check them (never over a frozen test)."""
    carried, total = [], 0
    for record in result.artifacts:
        if record.host_path is None or record.path in reserved or _steers_python(record.path):
            continue
        total += record.size
        if total > MAX_CARRIED_ARTIFACT_BYTES:
            break
        carried.append(InputFile(path=record.path, data=Path(record.host_path).read_bytes()))
    return carried
