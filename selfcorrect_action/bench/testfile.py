"""The frozen pytest file of one problem: its published `check(candidate)` against the
candidate it imports (across the tests' boundary, under the product's default), and the
prompt's helpers the test calls (`poly`,
`encode_cyclic`, `encode_shift`) taken from the prompt, not from the candidate: the oracle
is not the candidate's to redefine. A test that calls the entry point by name (HumanEval/33
compares `candidate(x)` with `sort_third(x)`) gets the candidate under that name, as the
reference harness, which runs prompt, completion and test as one program, does."""

from __future__ import annotations

import ast
import builtins
import functools

from selfcorrect_action.bench.problems import Problem
from selfcorrect_action.templating import render


# A run builds each problem's test more than once (its request, its plain check); a
# problem's test is the same every time.
@functools.lru_cache(maxsize=1024)
def frozen_test(problem: Problem) -> str:
    free = free_names(problem.test)
    return render(
        "reports/bench_humaneval_test.py.j2",
        task_id=problem.task_id, module=problem.module,
        entry_point=problem.entry_point, binds_entry_point=problem.entry_point in free,
        helpers=prompt_helpers(problem.prompt, free - {problem.entry_point}),
        test=problem.test.strip("\n"),
    )


def free_names(source: str) -> set[str]:
    """Names the test reads without defining, importing or binding them (nor builtins)."""
    bound: set[str] = set()
    read: set[str] = set()
    for node in ast.walk(ast.parse(source)):  # once: some tests hold thousands of literals
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arguments):
            bound.update(arg.arg for arg in (*node.posonlyargs, *node.args, *node.kwonlyargs))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            read.add(node.id)
    return read - bound - set(dir(builtins))


def prompt_helpers(prompt: str, names: set[str]) -> str:
    """The prompt's imports and its top-level definitions of `names`, verbatim."""
    if not names:
        return ""
    tree = ast.parse(prompt)
    kept = [node for node in tree.body
            if isinstance(node, ast.Import | ast.ImportFrom)
            or (isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name in names)]
    return "\n\n\n".join(ast.get_source_segment(prompt, node) or "" for node in kept)
