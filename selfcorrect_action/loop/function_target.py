"""The function a `kind: function` task is about: its name, and the code it starts with (its
`def` line, docstring and what comes before it), for the prompts of small models and for
completion-style generation. Pure.

Taken from the spec's `signature:` when it has one; else from the frozen tests (the names
they import from the candidate's module); else from the prompt's own Python (the last
function it defines, as a HumanEval prompt ends with the one to complete).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from selfcorrect_action.spec import entry_point

if TYPE_CHECKING:
    from selfcorrect_action.loop.state import RunState

MAX_DEF_CHARS = 200
_FENCED_PYTHON = re.compile(r"^```(?:python|py|python3)?[ \t]*\n(.*?)^```", re.M | re.S)


@dataclass(frozen=True)
class FunctionTarget:
    name: str
    # The code the candidate starts with, ending where the body goes: imports and helpers
    # the prompt gave, the def line and its docstring. "" when only the name is known.
    head: str = ""


def target_of(state: RunState) -> FunctionTarget | None:
    """The function a `kind: function` run is about (None for a script, or when unknown)."""
    if state.spec.kind != "function":
        return None
    return function_target(signature=state.spec.signature, tests=state.tests,
                           module=state.output_name.removesuffix(".py"),
                           prompt=state.spec.prompt)


def wanted_shape(state: RunState) -> str:
    """Two lines of the code an answer should hold, as an example of its shape."""
    target = target_of(state)
    if target is None:
        return f"# {state.output_name}: the whole program\n..."
    def_line = next((line for line in target.head.splitlines()
                     if line.lstrip().startswith(("def ", "async def "))), "")
    return f"{def_line[:MAX_DEF_CHARS] or f'def {target.name}(...):'}\n    ..."


def function_target(*, signature: str | None, tests: dict[str, str], module: str,
                    prompt: str) -> FunctionTarget | None:
    from_prompt = _prompt_function(prompt)
    if signature is not None:
        name = entry_point(signature)
        if from_prompt is not None and from_prompt.name == name:
            return from_prompt
        return FunctionTarget(name, signature if not signature.isidentifier() else "")
    imported = _imported_names(tests, module)
    if from_prompt is not None and (not imported or from_prompt.name in imported):
        return from_prompt
    return FunctionTarget(sorted(imported)[0]) if len(imported) == 1 else from_prompt


def _prompt_function(prompt: str) -> FunctionTarget | None:
    """The last top-level function of the last Python block in the prompt whose body is
    only a docstring (or `...`/`pass`): the one the task asks to complete."""
    for block in reversed(_FENCED_PYTHON.findall(prompt)):
        found = _stub(block)
        if found is not None:
            return found
    return None


def _stub(code: str) -> FunctionTarget | None:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    for node in reversed(tree.body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _is_stub(node):
            lines = code.splitlines(keepends=True)
            first = node.body[0]
            # Up to the docstring's end, or the def line(s): a `pass` or `...` is left out.
            end = first.end_lineno if _is_docstring(first) else first.lineno - 1
            head = "".join(lines[: end or node.lineno])
            return FunctionTarget(node.name, head if head.endswith("\n") else head + "\n")
    return None


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(
        stmt.value.value, str)


def _is_stub(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    body = node.body[1:] if _is_docstring(node.body[0]) else node.body
    return all(isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr) and isinstance(
        stmt.value, ast.Constant) and stmt.value.value is Ellipsis) for stmt in body)


def _imported_names(tests: dict[str, str], module: str) -> set[str]:
    names: set[str] = set()
    for text in tests.values():
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == module:
                names.update(alias.name for alias in node.names if alias.name != "*")
    return names


def with_given_code(code: str, target: FunctionTarget | None) -> str:
    """The answer with what the task gave above the function (its imports, its helpers)
    put back where the answer dropped it, as HumanEval joins prompt and completion: a model
    that rewrites `def f(numbers: List[float])` without `from typing import List` wrote the
    function, not a NameError. Only statements that define a name the answer neither
    defines nor imports are added; an answer that does not parse is left as it is."""
    if target is None or not target.head:
        return code
    given = _preamble(target)
    try:
        answer = ast.parse(code)
    except (SyntaxError, ValueError):
        return code
    defined = _defined_names(answer)
    missing = [text for node, text in given if _defined_names_of(node) - defined]
    return "\n".join(missing) + "\n\n\n" + code if missing else code


def _preamble(target: FunctionTarget) -> list[tuple[ast.stmt, str]]:
    """The head's top-level statements before the target's def, with their source."""
    try:
        tree = ast.parse(target.head + "    ...\n")
    except (SyntaxError, ValueError):
        return []
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == target.name:
            break
        text = ast.get_source_segment(target.head, node)
        if text is not None and _defined_names_of(node):
            found.append((node, text))
    return found


def _defined_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        names |= _defined_names_of(node)
    return names


def _defined_names_of(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        return {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {t.id for t in targets if isinstance(t, ast.Name)}
    return set()
