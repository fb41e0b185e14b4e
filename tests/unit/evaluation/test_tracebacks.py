from __future__ import annotations

from collections.abc import Callable

import pytest

from selfcorrect_action.evaluation.tracebacks import (
    MAX_CHAIN,
    MAX_MESSAGE_CHARS,
    Frame,
    last_frame_in,
    parse_traceback,
    same_file,
)
from tests.work import growth

SIMPLE = """\
Traceback (most recent call last):
  File "/work/sales_chart.py", line 14, in <module>
    main()
  File "/work/sales_chart.py", line 11, in main
    total = df["total"].sum()
            ~~^^^^^^^^^
  File "/usr/local/lib/python3.11/site-packages/pandas/core/frame.py", line 4102, in __getitem__
    indexer = self.columns.get_loc(key)
              ^^^^^^^^^^^^^^^^^^^^^^^^^
KeyError: 'total'
"""

CHAINED = """\
Traceback (most recent call last):
  File "/work/fetch.py", line 4, in fetch
    socket.getaddrinfo("data.example.invalid", 80)
  File "/usr/local/lib/python3.11/socket.py", line 962, in getaddrinfo
    for res in _socket.getaddrinfo(host, port, family, type, proto, flags):
               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
socket.gaierror: [Errno -3] Temporary failure in name resolution

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/work/fetch.py", line 9, in main
    fetch()
  File "/work/fetch.py", line 6, in fetch
    raise RuntimeError("could not fetch") from exc
RuntimeError: could not fetch

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/work/fetch.py", line 12, in <module>
    main()
  File "/work/fetch.py", line 11, in main
    {}["missing"]
    ~~^^^^^^^^^^^
KeyError: 'missing'
"""

SYNTAX = """\
  File "/work/broken.py", line 7
    print("total:", total
         ^
SyntaxError: '(' was never closed
"""

TAB = """\
  File "/work/tabs.py", line 3
    return 2
TabError: inconsistent use of tabs and spaces in indentation
"""

GROUP = """\
  + Exception Group Traceback (most recent call last):
  |   File "/work/gather.py", line 13, in <module>
  |     asyncio.run(main())
  |   File "/work/gather.py", line 11, in main
  |     async with asyncio.TaskGroup() as tg:
  | ExceptionGroup: unhandled errors in a TaskGroup (2 sub-exceptions)
  +-+---------------- 1 ----------------
    | Traceback (most recent call last):
    |   File "/work/gather.py", line 1, in f
    |     def f(): raise ValueError("boom")
    | ValueError: boom
    +---------------- 2 ----------------
    | Traceback (most recent call last):
    |   File "/work/gather.py", line 2, in g
    |     def g(): raise ConnectionRefusedError(111, "Connection refused")
    | ConnectionRefusedError: [Errno 111] Connection refused
    +------------------------------------
"""


def test_simple_traceback_frames_type_and_message() -> None:
    tb = parse_traceback(SIMPLE)
    assert tb is not None
    assert tb.exc_type == "KeyError"
    assert tb.message == "'total'"
    assert [(f.file, f.line, f.function) for f in tb.frames] == [
        ("/work/sales_chart.py", 14, "<module>"),
        ("/work/sales_chart.py", 11, "main"),
        ("/usr/local/lib/python3.11/site-packages/pandas/core/frame.py", 4102, "__getitem__"),
    ]
    assert tb.frames[1].source == 'total = df["total"].sum()'  # caret line not taken as source
    assert tb.exception_line == "KeyError: 'total'"


def test_chained_exceptions_take_the_last_and_keep_the_chain() -> None:
    tb = parse_traceback(CHAINED)
    assert tb is not None
    assert tb.exception_line == "KeyError: 'missing'"
    assert [c.exc_type for c in tb.chained_from] == ["socket.gaierror", "RuntimeError"]
    assert tb.chained_from[0].exc_name == "gaierror"


def test_unrelated_earlier_traceback_is_not_part_of_the_chain() -> None:
    logged = SIMPLE + "INFO retrying\n" + SIMPLE.replace("'total'", "'amount'")
    tb = parse_traceback(logged)
    assert tb is not None
    assert tb.message == "'amount'"
    assert tb.chained_from == ()


def test_noise_before_and_after_is_ignored() -> None:
    noisy = (
        "Matplotlib created a temporary cache directory at /tmp/matplotlib-x\n"
        "loading 3 files\n" + SIMPLE + "\n"
    )
    tb = parse_traceback(noisy)
    assert tb is not None and tb.exception_line == "KeyError: 'total'"


def test_qualified_exception_names_are_kept() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "/work/get.py", line 3, in <module>\n'
        '    requests.get("http://api.example.invalid")\n'
        "requests.exceptions.ConnectionError: HTTPConnectionPool(host='api.example.invalid', "
        "port=80): Max retries exceeded\n"
    )
    tb = parse_traceback(text)
    assert tb is not None
    assert tb.exc_type == "requests.exceptions.ConnectionError"
    assert tb.exc_name == "ConnectionError"
    assert tb.message.startswith("HTTPConnectionPool(host=")


def test_bare_exception_without_message() -> None:
    text = (
        'Traceback (most recent call last):\n  File "/work/a.py", line 2, in <module>\n'
        "    assert x\nAssertionError\n"
    )
    tb = parse_traceback(text)
    assert tb is not None
    assert (tb.exc_type, tb.message, tb.exception_line) == ("AssertionError", "", "AssertionError")


def test_multiline_message_is_kept_until_blank_line() -> None:
    text = (
        'Traceback (most recent call last):\n  File "/work/a.py", line 2, in <module>\n'
        "    raise ValueError(msg)\nValueError: first line\nsecond line\n\nunrelated\n"
    )
    tb = parse_traceback(text)
    assert tb is not None and tb.message == "first line\nsecond line"


def test_syntax_error_without_header() -> None:
    tb = parse_traceback(SYNTAX)
    assert tb is not None
    assert tb.exc_type == "SyntaxError"
    assert tb.message == "'(' was never closed"
    assert tb.frames == (Frame("/work/broken.py", 7, None, 'print("total:", total'),)


def test_tab_error_without_caret() -> None:
    tb = parse_traceback(TAB)
    assert tb is not None and tb.exc_type == "TabError"
    assert tb.frames[0].source == "return 2"


def test_syntax_error_inside_exec_keeps_the_compile_frame_last() -> None:
    text = (
        'Traceback (most recent call last):\n  File "/work/a.py", line 2, in <module>\n'
        '    exec(code)\n  File "<string>", line 1\n    def f(:\n          ^\n'
        "SyntaxError: invalid syntax\n"
    )
    tb = parse_traceback(text)
    assert tb is not None
    assert [f.file for f in tb.frames] == ["/work/a.py", "<string>"]
    assert tb.frames[-1].function is None


def test_exception_group_yields_last_sub_exception() -> None:
    tb = parse_traceback(GROUP)
    assert tb is not None
    assert tb.exc_type == "ConnectionRefusedError"
    source = 'def g(): raise ConnectionRefusedError(111, "Connection refused")'
    assert tb.frames[-1] == Frame("/work/gather.py", 2, "g", source)


def test_recursion_error_repeat_marker_is_not_source() -> None:
    text = (
        'Traceback (most recent call last):\n  File "/work/r.py", line 3, in f\n    return f(n)\n'
        "           ^^^^\n  [Previous line repeated 996 more times]\n"
        "RecursionError: maximum recursion depth exceeded\n"
    )
    tb = parse_traceback(text)
    assert tb is not None and tb.frames[0].source == "return f(n)"
    assert tb.exc_type == "RecursionError"


def test_truncated_stream_keeps_the_tail_traceback() -> None:
    head = (
        'Traceback (most recent call last):\n  File "/work/r.py", line 9, in <module>\n    f(1)\n'
    )
    tail = (
        'ork/r.py", line 3, in f\n    return f(n)\n'
        '  File "/work/r.py", line 3, in f\n    return f(n)\n'
        "RecursionError: maximum recursion depth exceeded\n"
    )
    tb = parse_traceback(head + "\n[... 250000 bytes omitted ...]\n" + tail)
    assert tb is not None
    assert tb.exc_type == "RecursionError"
    assert tb.frames[-1] == Frame("/work/r.py", 3, "f", "return f(n)")
    # The cut does not end the traceback: the head's outer frames are kept.
    assert [frame.line for frame in tb.frames] == [9, 3]


def test_header_cut_off_by_truncation_still_parses() -> None:
    tail = '  File "/work/a.py", line 5, in main\n    1 / 0\nZeroDivisionError: division by zero\n'
    tb = parse_traceback("garbage...\n" + tail)
    assert tb is not None and tb.exc_type == "ZeroDivisionError"


def test_incomplete_traceback_gives_none_or_the_previous_one() -> None:
    assert parse_traceback("") is None
    assert parse_traceback("just some output\nError: nothing to parse\n") is None
    cut = 'Traceback (most recent call last):\n  File "/work/a.py", line 5, in main\n    1 / 0\n'
    assert parse_traceback(cut) is None
    tb = parse_traceback(SIMPLE + cut)
    assert tb is not None and tb.exc_type == "KeyError"


def test_message_is_bounded() -> None:
    text = (
        'Traceback (most recent call last):\n  File "/work/a.py", line 1, in <module>\n'
        "    x\nValueError: " + "x" * 50_000 + "\n" + ("more\n" * 1000)
    )
    tb = parse_traceback(text)
    assert tb is not None and len(tb.message) <= MAX_MESSAGE_CHARS


# Hostile tracebacks by size n; four times the size must take at most about four times the
# work (tests/work.py), so none of them can make the reader quadratic.
HUGE: dict[str, Callable[[int], str]] = {
    "many-tracebacks": lambda n: SIMPLE * (n // 10),
    "long-frame-line": lambda n: '  File "' * (2 * n),
    "long-source": lambda n: "Traceback (most recent call last):\n" + "  x\n" * n,
    "long-exception-line": lambda n: "A" * (10 * n) + ": " + "b" * (10 * n),
    "words": lambda n: ("a" * 50 + " ") * n,
}


@pytest.mark.parametrize("shape", list(HUGE))
def test_huge_input_is_parsed_in_linear_time(shape: str) -> None:
    assert growth(HUGE[shape], parse_traceback, 2_000) <= 5, shape


@pytest.mark.parametrize(
    ("frame_file", "candidate", "expected"),
    [
        ("/work/sales_chart.py", "sales_chart.py", True),
        ("/work/sales_chart.py", "/work/sales_chart.py", True),
        ("sales_chart.py", "/work/sales_chart.py", True),
        ("/work/sub/sales_chart.py", "sub/sales_chart.py", True),
        ("/usr/lib/sales_chart.py", "/work/sales_chart.py", False),
        ("/work/other.py", "sales_chart.py", False),
        ("/work/sales_chart.pyc", "sales_chart.py", False),
        ("<string>", "sales_chart.py", False),
        ("", "sales_chart.py", False),
    ],
)
def test_same_file(frame_file: str, candidate: str, *, expected: bool) -> None:
    assert same_file(frame_file, candidate) is expected


def test_last_frame_in_picks_the_innermost_candidate_frame() -> None:
    tb = parse_traceback(SIMPLE)
    assert tb is not None
    frame = last_frame_in(tb, "sales_chart.py")
    assert frame is not None and (frame.line, frame.function) == (11, "main")
    assert last_frame_in(tb, "other.py") is None


def test_a_long_chain_keeps_its_root_cause_and_stays_bounded() -> None:
    link = (
        'Traceback (most recent call last):\n  File "/work/a.py", line 1, in f\n    g()\n'
        "ValueError: link {n}\n\nDuring handling of the above exception, another exception "
        "occurred:\n\n"
    )
    def chain(count: int) -> str:
        return "".join(link.format(n=n) for n in range(count)) + SIMPLE

    assert growth(chain, parse_traceback, 1_000) <= 5
    tb = parse_traceback(chain(20_000))
    assert tb is not None and tb.exc_type == "KeyError"
    assert len(tb.chained_from) <= MAX_CHAIN
    assert tb.chained_from[0].message == "link 0"
    assert tb.chained_from[-1].message == "link 19999"
