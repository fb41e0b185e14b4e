from __future__ import annotations

import pytest

from selfcorrect_action.loop.codeblock import extract_code


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        ("print(1)", "print(1)\n"),
        ("```python\nprint(1)\n```", "print(1)\n"),
        ("Here is the script:\n\n```python\nimport os\nprint(2)\n```\nIt prints 2.",
         "import os\nprint(2)\n"),
        ("```\nprint(3)\n```", "print(3)\n"),
        ("```py\nx = 1\n```", "x = 1\n"),
        ("~~~python\nx = 2\n~~~", "x = 2\n"),
        ("```python\nprint('cut off", "print('cut off\n"),
        ("", ""),
        ("   \n  ", ""),
        ("```python\r\nprint(4)\r\n```", "print(4)\n"),
    ],
)
def test_code_is_extracted(answer: str, code: str) -> None:
    assert extract_code(answer) == code


def test_the_longest_python_block_wins_over_shell_and_short_snippets() -> None:
    answer = (
        "Run it with:\n```bash\npython3 chart.py --a-very-long-flag-that-is-long\n```\n"
        "```python\nx = 1\n```\nFull file:\n```python\nimport json\n\nprint(json.dumps({}))\n```"
    )
    assert extract_code(answer) == "import json\n\nprint(json.dumps({}))\n"


def test_longer_fences_can_contain_triple_backticks() -> None:
    answer = '````python\ndoc = """\n```\nnot a fence\n```\n"""\n````'
    assert extract_code(answer) == 'doc = """\n```\nnot a fence\n```\n"""\n'


def test_a_non_python_block_is_used_when_it_is_all_there_is() -> None:
    assert extract_code("```text\nprint(5)\n```") == "print(5)\n"


def test_fence_lines_inside_a_python_string_do_not_end_the_block() -> None:
    """A script that writes Markdown holds fence lines in a string, at the start of a line:
    the block ends at the fence after which the code parses."""
    code = 'README = """\n# Report\n```\ntotal: 3\n```\n"""\nprint(README)\n'
    answer = f"Here it is:\n```python\n{code}```\nand a usage example:\n```sh\npython r.py\n```\n"
    assert extract_code(answer) == code


def test_a_block_that_parses_at_no_fence_still_ends_at_the_first() -> None:
    answer = "```python\ndef broken(:\n```\nprose\n```\nmore prose\n```\n"
    assert extract_code(answer) == "def broken(:\n"
