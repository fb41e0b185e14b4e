"""What a model's answer to "write the file" is: the file, or prose, our own prompt said
back, or tests instead of the code they test. Pure; the answer is untrusted text.

A real small model (SmolLM2-135M, issue 21) answered with prose, echoed the prompt and wrote
test code; an answer with no fence was taken whole as the code, so one attempt's "code"
began with our own prompt's words and failed as a SyntaxError that told the model nothing.
Each of these shapes is now named, found without a sandbox run, and told back to the model
with the shape that was wanted.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from selfcorrect_action.loop.codeblock import extract_code, has_fence

# A line of our prompt long enough that a model writing it again is not a coincidence.
MIN_ECHO_CHARS = 24
# This many of our prompt's lines in an answer make it an echo, whatever else it holds.
ECHO_LINES = 2
FIRST_LINE_CHARS = 120


@dataclass(frozen=True)
class AnswerShape:
    """The code to run ("" when there is none) and, when the answer is not a file to run,
    why (the evidence of a syntax failure found without running it)."""

    code: str
    problem: str | None = None


def read_answer(answer: str, *, prompt: str, kind: str = "script",
                entry_point: str | None = None) -> AnswerShape:
    """The answer as the loop takes it. `prompt` is the text we sent (its prose lines are
    what an echo repeats); for `kind: function`, `entry_point` is the function the tests
    call, when known."""
    code = extract_code(answer)
    if not has_fence(answer) and not _is_code(code):
        return AnswerShape("", "the answer held no code block (no ``` fence, and it is not "
                           f"Python): it began {_first_line(answer)!r}")
    if not code.strip():
        return AnswerShape("", "the answer held no Python code (its code block was empty)")
    echoed = echoed_lines(code, prompt)
    if echoed:
        return AnswerShape(code, "the answer repeated the prompt's own words instead of "
                           f"writing code (it says {echoed[0][:FIRST_LINE_CHARS]!r})")
    if kind == "function" and _only_tests(code, entry_point):
        what = f"`{entry_point}` itself" if entry_point else "the function the tests call"
        return AnswerShape(code, f"the answer held only tests, not {what}: the tests are "
                           "given and frozen; write the implementation")
    return AnswerShape(code)


def echoed_lines(code: str, prompt: str) -> list[str]:
    """Lines of our prompt's prose (outside its code fences) that the code repeats, once
    there are ECHO_LINES of them: a model that says our instructions back."""
    ours = set(_prose_lines(prompt))
    found = [line for line in dict.fromkeys(_stripped_lines(code)) if line in ours]
    return found if len(found) >= ECHO_LINES else []


def _prose_lines(prompt: str) -> list[str]:
    """Our own words: the prompt's lines outside every fenced block. A fence closes only on
    a line of its own character at least as long (CommonMark), so the task's text, fenced in
    a longer fence, keeps its own ```python blocks inside it."""
    lines: list[str] = []
    opened: str | None = None
    for raw in prompt.splitlines():
        line = raw.strip()
        fence = re.match(r"^(`{3,}|~{3,})", line)
        if opened is None and fence:
            opened = fence.group(1)
            continue
        if opened is not None:
            if fence and fence.group(1)[0] == opened[0] and len(fence.group(1)) >= len(opened) \
                    and not line[len(fence.group(1)):].strip():
                opened = None
            continue
        if len(line) >= MIN_ECHO_CHARS:
            lines.append(line)
    return lines


def _stripped_lines(code: str) -> list[str]:
    return [line.strip().lstrip("#").strip() for line in code.splitlines()
            if len(line.strip()) >= MIN_ECHO_CHARS]


def _is_code(code: str) -> bool:
    """Python that does something: prose can parse too ("Hello" is a name), so a module of
    bare expressions only is not taken for code."""
    if not code.strip():
        return False
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return any(not isinstance(node, ast.Expr) for node in tree.body)


def _only_tests(code: str, entry_point: str | None) -> bool:
    """Parsable code that defines tests (test_* functions, or asserts and calls at module
    level) but not the function asked for."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return False  # a syntax error is said as such
    defined = {node.name for node in ast.walk(tree)
               if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
    if entry_point is not None and entry_point in defined:
        return False
    tests = {name for name in defined if name.startswith(("test_", "Test"))}
    asserts = any(isinstance(node, ast.Assert) for node in tree.body)
    if entry_point is not None:
        return bool(tests) or asserts
    return bool(tests) and not defined - tests


def _first_line(answer: str) -> str:
    for line in answer.splitlines():
        if line.strip():
            return line.strip()[:FIRST_LINE_CHARS]
    return ""
