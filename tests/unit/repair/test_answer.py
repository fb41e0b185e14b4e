"""Reading whole files out of a repair answer, and the diff computed afterwards."""

from __future__ import annotations

from selfcorrect_action.repair.answer import parse_answer, unified_diff

FIXED = "def add(a, b):\n    return a + b\n"


def test_a_file_line_above_each_block_names_it() -> None:
    answer = ("The bug is in add.\n\nFile: src/pkg/core.py\n```python\n" + FIXED + "```\n\n"
              "File: `src/pkg/util.py`\n```python\nX = 1\n```\nDone.")
    parsed = parse_answer(answer)
    assert parsed.problems == []
    assert parsed.files == {"src/pkg/core.py": FIXED, "src/pkg/util.py": "X = 1\n"}


def test_the_usual_ways_models_name_a_file_are_read() -> None:
    for header in ("### src/pkg/core.py", "**src/pkg/core.py**", "`src/pkg/core.py`",
                   "src/pkg/core.py:", "Here is the corrected src/pkg/core.py:",
                   "filename: ./src/pkg/core.py", "File: /work/src/pkg/core.py"):
        parsed = parse_answer(f"{header}\n```python\n{FIXED}```\n")
        assert parsed.files == {"src/pkg/core.py": FIXED}, header
    for info in ("python src/pkg/core.py", "src/pkg/core.py", 'python title="src/pkg/core.py"'):
        parsed = parse_answer(f"Fixed:\n```{info}\n{FIXED}```\n")
        assert parsed.files == {"src/pkg/core.py": FIXED}, info


def test_a_longer_fence_carries_a_file_that_holds_three_backticks() -> None:
    content = 'DOC = """\n```\nexample\n```\n"""\n'
    parsed = parse_answer(f"File: pkg/doc.py\n````python\n{content}````\n")
    assert parsed.files == {"pkg/doc.py": content}


def test_a_block_naming_no_file_is_a_problem_unless_one_file_is_expected() -> None:
    answer = f"```python\n{FIXED}```\n"
    assert parse_answer(answer).files == {}
    assert "name no file" in parse_answer(answer).problems[0]
    assert parse_answer(answer, only_file="src/pkg/core.py").files == {"src/pkg/core.py": FIXED}


def test_a_file_given_twice_is_a_problem() -> None:
    block = f"File: a.py\n```python\n{FIXED}```\n"
    assert parse_answer(block + block).problems == [
        "a.py is given twice; give each file once, whole"]


def test_an_answer_cut_off_inside_a_block_keeps_what_it_has() -> None:
    parsed = parse_answer("File: a.py\n```python\ndef add(a, b):\n    return")
    assert parsed.files == {"a.py": "def add(a, b):\n    return\n"}


def test_no_code_at_all_is_no_files() -> None:
    assert parse_answer("I cannot help with that.") == parse_answer("")
    assert parse_answer("").files == {}


def test_the_diff_is_git_shaped_and_in_path_order() -> None:
    diff = unified_diff({"b.py": "x = 1\n", "a.py": "y = 1"},
                        {"b.py": "x = 2\n", "a.py": "y = 2"})
    assert diff.startswith("--- a/a.py\n+++ b/a.py\n")
    assert "-y = 1\n\\ No newline at end of file\n+y = 2\n" in diff
    assert "--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n" in diff
    assert unified_diff({"a.py": "same\n"}, {"a.py": "same\n"}) == ""


def test_blank_lines_at_the_end_of_a_file_are_kept() -> None:
    parsed = parse_answer("File: a.py\n```python\nx = 1\n\n```\n")
    assert parsed.files == {"a.py": "x = 1\n\n"}
