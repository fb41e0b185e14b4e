"""Does a mutant change behaviour? Run inside the sandbox, beside the original.

The inputs are the calls the problem's own test makes (recorded by running its check()
against the canonical solution), then variations of them (each argument in turn changed:
an int by one, a string or list reversed, shortened, emptied...), since a bug that the test
cannot see is exactly what the detection rate is about. A mutant changes behaviour when, on
an input where the original returns normally, it returns something else (type and repr),
raises, or runs out of time. Stdlib only: the sandbox's python3 runs this file as a script,
reading `probe.json` and printing one JSON object; the host imports it for its pure parts.
"""

from __future__ import annotations

import copy
import json
import random
import signal
import sys
import time
import types
from collections.abc import Callable
from typing import Any

JOB_FILE = "probe.json"
CALL_TIMEOUT_S = 0.5
PROBLEM_BUDGET_S = 25.0
BASELINE_BUDGET_S = 8.0
MAX_INPUTS = 300
MAX_REPR = 2000

Call = tuple[tuple[Any, ...], dict[str, Any]]
Outcome = tuple[str, ...]


class _Timeout(Exception):
    pass


def _on_alarm(number: int, frame: object) -> None:
    raise _Timeout


def outcome(function: Callable[..., Any], call: Call, limit_s: float = CALL_TIMEOUT_S
            ) -> Outcome:
    """("ok", type, repr) or ("raise", type) or ("timeout",), on copies of the arguments."""
    args, kwargs = copy.deepcopy(call)
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    try:
        value = function(*args, **kwargs)
        return ("ok", type(value).__name__, repr(value)[:MAX_REPR])
    except _Timeout:
        return ("timeout",)
    except BaseException as exc:  # a mutant may raise anything, SystemExit included
        return ("raise", type(exc).__name__)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def variants(value: object) -> list[object]:
    """A few values near `value`, of its type."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value - 1, 0, -value]
    if isinstance(value, float):
        return [value + 0.5, -value, 0.0]
    if isinstance(value, str):
        return ["", value[::-1], value + value[:1], value[1:], value.upper()]
    if isinstance(value, list):
        return [[], value[::-1], value[:-1], value + value[:1], sorted(value, key=repr)]
    if isinstance(value, tuple):
        return [(), value[::-1], value[:-1]]
    if isinstance(value, dict):
        return [{}, dict(list(value.items())[:-1])]
    return []


def perturbed(calls: list[Call], seed: str, limit: int) -> list[Call]:
    """Calls with one argument changed, in a seeded order, deduplicated by repr."""
    made: list[Call] = []
    for args, kwargs in calls:
        for position, value in enumerate(args):
            for other in variants(value):
                if repr(other) != repr(value):
                    made.append(((*args[:position], other, *args[position + 1:]), kwargs))
    random.Random(seed).shuffle(made)
    return unique(made)[:limit]


def unique(calls: list[Call]) -> list[Call]:
    seen: set[str] = set()
    kept = []
    for call in calls:
        key = repr(call)
        if key not in seen:
            seen.add(key)
            kept.append(call)
    return kept


def first_difference(function: Callable[..., Any], calls: list[Call],
                     baseline: list[Outcome], deadline: float) -> int | None:
    """The index of the first call on which `function` differs from the baseline (only
    calls where the baseline returned normally count), or None."""
    for index, (call, expected) in enumerate(zip(calls, baseline, strict=True)):
        if expected[0] != "ok":
            continue
        if time.monotonic() > deadline:
            return None
        if outcome(function, call) != expected:
            return index
    return None


def _load(source: str, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(source, f"{name}.py", "exec"), module.__dict__)
    return module


def _recorded_calls(job: dict[str, Any], entry: Callable[..., Any]) -> list[Call]:
    calls: list[Call] = []

    def recorder(*args: object, **kwargs: object) -> object:
        calls.append((copy.deepcopy(args), copy.deepcopy(kwargs)))
        return entry(*args, **kwargs)

    namespace: dict[str, Any] = {}
    exec(job["helpers"], namespace)
    namespace[job["entry_point"]] = recorder
    exec(job["test"], namespace)
    namespace["check"](recorder)
    return unique(calls)


def probe(job: dict[str, Any]) -> dict[str, Any]:
    started = time.monotonic()
    canonical = _load(job["canonical"], job["module"])
    entry = getattr(canonical, job["entry_point"])
    tested = _recorded_calls(job, entry)
    calls = tested + perturbed(tested, job["seed"], MAX_INPUTS - len(tested))
    baseline: list[Outcome] = []
    for index, call in enumerate(calls):
        if index >= len(tested) and time.monotonic() - started > BASELINE_BUDGET_S:
            calls = calls[:index]  # the variations the original is slow on: fewer of them
            break
        baseline.append(outcome(entry, call))
    deadline = started + PROBLEM_BUDGET_S
    kinds: dict[str, list[dict[str, Any]]] = {}
    for kind, sources in job["mutants"].items():
        checked = kinds.setdefault(kind, [])
        for site, source in enumerate(sources):
            try:
                function = getattr(_load(source, job["module"]), job["entry_point"])
                differs = first_difference(function, calls, baseline, deadline)
            except BaseException as exc:  # a mutant that does not even load is a change
                checked.append({"site": site, "changed": True, "where": "import",
                                "input": type(exc).__name__})
                break
            if differs is not None:
                checked.append({"site": site, "changed": True,
                                "where": "test" if differs < len(tested) else "perturbed",
                                "input": repr(calls[differs])[:300]})
                break
            checked.append({"site": site, "changed": False})
    return {"tested_inputs": len(tested), "perturbed_inputs": len(calls) - len(tested),
            "kinds": kinds, "seconds": round(time.monotonic() - started, 3)}


if __name__ == "__main__":
    with open(JOB_FILE, encoding="utf-8") as handle:
        print(json.dumps(probe(json.load(handle))))
    sys.stdout.flush()
