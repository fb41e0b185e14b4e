"""Which function a `kind: function` task is about, and the code it starts with."""

from __future__ import annotations

import pytest

from selfcorrect_action.loop.function_target import function_target, with_given_code

PROMPT = '''Complete the module below.

```python
from typing import List


def helper(x: int) -> int:
    return x + 1


def has_close_elements(numbers: List[float], threshold: float) -> bool:
    """ Check if any two numbers are closer than threshold.
    >>> has_close_elements([1.0, 2.0], 0.5)
    False
    """
```
'''
TESTS = {"test_x.py": "from humaneval_0 import has_close_elements as candidate\n"}


def test_the_prompts_stub_is_the_target_with_everything_before_it() -> None:
    target = function_target(signature=None, tests=TESTS, module="humaneval_0", prompt=PROMPT)
    assert target is not None and target.name == "has_close_elements"
    assert target.head.startswith("from typing import List\n")
    assert "def helper" in target.head  # given code the function may use
    assert target.head.endswith('    False\n    """\n')


def test_a_stub_ending_in_pass_or_ellipsis_leaves_them_out_of_the_head() -> None:
    for body in ("pass", "..."):
        prompt = f"```python\ndef f(x):\n    \"\"\"Double x.\"\"\"\n    {body}\n```"
        target = function_target(signature=None, tests={}, module="m", prompt=prompt)
        assert target is not None and target.head == 'def f(x):\n    """Double x."""\n'


def test_the_signature_names_the_function_and_gives_its_def_line() -> None:
    target = function_target(signature="def parse_row(line: str) -> dict:", tests={},
                             module="m", prompt="Parse a CSV row into a dict.")
    assert target is not None
    assert (target.name, target.head) == ("parse_row", "def parse_row(line: str) -> dict:")
    by_name = function_target(signature="has_close_elements", tests={}, module="humaneval_0",
                              prompt=PROMPT)
    assert by_name is not None and "from typing import List" in by_name.head


def test_the_tests_name_it_when_the_prompt_has_no_stub() -> None:
    target = function_target(signature=None, tests={"t.py": "from task import solve\n"},
                             module="task", prompt="Solve it.")
    assert target is not None and (target.name, target.head) == ("solve", "")
    several = {"t.py": "from task import a, b\n"}
    assert function_target(signature=None, tests=several, module="task", prompt="x") is None


@pytest.mark.parametrize("prompt", ["No code here.", "```python\ndef f(:\n```",
                                    "```python\ndef f():\n    return 1\n```"])
def test_no_stub_and_no_tests_is_no_target(prompt: str) -> None:
    assert function_target(signature=None, tests={}, module="m", prompt=prompt) is None


def test_an_answer_that_dropped_the_given_imports_and_helpers_gets_them_back() -> None:
    target = function_target(signature=None, tests=TESTS, module="humaneval_0", prompt=PROMPT)
    answer = ("def has_close_elements(numbers: List[float], threshold: float) -> bool:\n"
              "    return helper(1) > 1\n")
    completed = with_given_code(answer, target)
    assert completed.startswith("from typing import List\ndef helper(x: int) -> int:\n")
    assert completed.endswith(answer)
    # What the answer defines or imports itself is not added twice; a script is untouched.
    own = "from typing import List\n\n\ndef helper(x):\n    return 0\n\n\n" + answer
    assert with_given_code(own, target) == own
    assert with_given_code(answer, None) == answer
    broken = "def has_close_elements(:\n"
    assert with_given_code(broken, target) == broken
