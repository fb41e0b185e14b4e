from __future__ import annotations

from typing import Any

import pytest

from selfcorrect_action.contract import ExecutionContract
from selfcorrect_action.evaluation.classify import EVIDENCE_MAX_CHARS, classify_execution_failure
from selfcorrect_action.sandbox.egress.records import ConnectionRecord, NetworkLog
from selfcorrect_action.sandbox.models import ExecutionResult, StreamCapture
from selfcorrect_action.taxonomy import Category

SCRIPT = "job.py"


def _traceback(exception_line: str, source: str = "run()", *, library: str | None = None) -> str:
    frames = f'  File "/work/{SCRIPT}", line 12, in main\n    {source}\n'
    if library:
        frames += f'  File "{library}", line 99, in helper\n    raise\n'
    return f"Traceback (most recent call last):\n{frames}{exception_line}\n"


def _failed(stderr: str, *, exit_code: int | None = 1, **fields: Any) -> ExecutionResult:
    capture = StreamCapture(text=stderr, total_bytes=len(stderr.encode()))
    return ExecutionResult(exit_code=exit_code, stderr=capture, **fields)


def _classify(result: ExecutionResult, **options: Any) -> tuple[Category, str]:
    return classify_execution_failure(result, script_name=SCRIPT, **options)


@pytest.mark.parametrize(
    ("exception_line", "category"),
    [
        ("socket.gaierror: [Errno -2] Name or service not known", Category.EXTERNAL),
        ("ConnectionResetError: [Errno 104] Connection reset by peer", Category.EXTERNAL),
        ("OSError: [Errno 101] Network is unreachable", Category.EXTERNAL),
        ("TimeoutError: [Errno 110] Connection timed out", Category.EXTERNAL),
        ("urllib.error.HTTPError: HTTP Error 403: Forbidden", Category.EXTERNAL),
        ("http.client.RemoteDisconnected: Remote end closed connection", Category.EXTERNAL),
        ("requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='x')", Category.EXTERNAL),
        ("ssl.SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED]", Category.EXTERNAL),
        ("requests.exceptions.MissingSchema: Invalid URL 'data.csv': No scheme", Category.RUNTIME),
        ("requests.exceptions.JSONDecodeError: Expecting value: line 1", Category.RUNTIME),
        ("MemoryError", Category.RESOURCE),
        ("BlockingIOError: [Errno 11] Resource temporarily unavailable", Category.RESOURCE),
        ("OSError: [Errno 12] Cannot allocate memory", Category.RESOURCE),
        ("OSError: [Errno 27] File too large", Category.RESOURCE),
        ("ImportError: libGL.so.1: cannot open shared object file", Category.ENVIRONMENT),
        ("ModuleNotFoundError: No module named 'sklearn.ensemble'", Category.ENVIRONMENT),
        ("PermissionError: [Errno 13] Permission denied: '/root/.cache/x'", Category.ENVIRONMENT),
        ("PermissionError: [Errno 13] Permission denied: 'out.csv'", Category.RUNTIME),
        ("PermissionError: [Errno 13] Permission denied: '/tmp/x/out.csv'", Category.RUNTIME),
        ("FileNotFoundError: [Errno 2] No such file or directory: 'in.csv'", Category.EXTERNAL),
        ("KeyError: 'total'", Category.RUNTIME),
        ("ValueError: could not convert string to float: 'n/a'", Category.RUNTIME),
        ("subprocess.TimeoutExpired: Command 'x' timed out after 5 seconds", Category.RUNTIME),
        ("NameError: name 'pd' is not defined", Category.RUNTIME),
        ("SyntaxError: invalid syntax", Category.SYNTAX),
    ],
)
def test_exception_categories(exception_line: str, category: Category) -> None:
    got, evidence = _classify(_failed(_traceback(exception_line)))
    assert got is category, evidence
    assert evidence.startswith(exception_line)


def test_module_evidence_names_the_top_level_package() -> None:
    line = "ModuleNotFoundError: No module named 'sklearn.ensemble'"
    _, evidence = _classify(_failed(_traceback(line, "from sklearn.ensemble import X")))
    assert evidence == (
        f"{line} at job.py:12 in main: from sklearn.ensemble import X — module 'sklearn' is not "
        "installed in the sandbox image: use the standard library or a package the image has"
    )


@pytest.mark.parametrize(
    ("source", "category"),
    [
        ('df.to_csv("out/summary.csv")', Category.RUNTIME),
        ('with open("out/a.txt", "w") as f:', Category.RUNTIME),
        ('Path("out/a.txt").write_text(report)', Category.RUNTIME),
        ('image.save("out/a.png")', Category.RUNTIME),
        ('with open("in/a.txt") as f:', Category.EXTERNAL),
        ('df = pd.read_csv("in/a.csv")', Category.EXTERNAL),
    ],
)
def test_file_not_found_on_a_writing_line_is_the_scripts_bug(
    source: str, category: Category
) -> None:
    line = "FileNotFoundError: [Errno 2] No such file or directory: 'x'"
    assert _classify(_failed(_traceback(line, source)))[0] is category


def test_file_not_found_inside_subprocess_is_a_missing_program() -> None:
    line = "FileNotFoundError: [Errno 2] No such file or directory: 'gnuplot'"
    stderr = _traceback(
        line, "subprocess.run(['gnuplot'])", library="/usr/lib/python3.11/subprocess.py"
    )
    category, evidence = _classify(_failed(stderr))
    assert category is Category.ENVIRONMENT
    assert "executable 'gnuplot' is not installed" in evidence


@pytest.mark.parametrize(
    "message",
    [
        "Command '['ffmpeg', '-i', 'a']' returned non-zero exit status 127.",
        "Command 'ffmpeg -i a' returned non-zero exit status 127.",
    ],
)
def test_shell_status_127_names_the_program(message: str) -> None:
    line = f"subprocess.CalledProcessError: {message}"
    category, evidence = _classify(_failed(_traceback(line)))
    assert category is Category.ENVIRONMENT
    assert "'ffmpeg' was not found (status 127)" in evidence


def test_other_subprocess_failures_are_runtime() -> None:
    line = "subprocess.CalledProcessError: Command 'ls x' returned non-zero exit status 2."
    assert _classify(_failed(_traceback(line)))[0] is Category.RUNTIME


def test_generic_error_raised_from_an_import_failure_takes_the_cause() -> None:
    stderr = (
        _traceback("ModuleNotFoundError: No module named 'plotly'", "import plotly")
        + "\nThe above exception was the direct cause of the following exception:\n\n"
        + _traceback("RuntimeError: plotting backend unavailable", "raise RuntimeError(msg)")
    )
    category, evidence = _classify(_failed(stderr))
    assert category is Category.ENVIRONMENT
    assert evidence.startswith(
        "RuntimeError: plotting backend unavailable, raised while handling "
        "ModuleNotFoundError: No module named 'plotly' at job.py:12 in main: import plotly"
    )


def test_runtime_chain_stays_runtime() -> None:
    stderr = (
        _traceback("KeyError: 'x'")
        + "\nDuring handling of the above exception, another exception occurred:\n\n"
        + _traceback("ValueError: bad row")
    )
    category, evidence = _classify(_failed(stderr))
    assert category is Category.RUNTIME
    assert evidence.startswith("ValueError: bad row at job.py:12")


def test_frame_outside_the_script_gives_the_exception_line_only() -> None:
    stderr = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.11/runpy.py", line 5, in run\n    exec(code)\n'
        "ZeroDivisionError: division by zero\n"
    )
    assert _classify(_failed(stderr)) == (
        Category.RUNTIME,
        "ZeroDivisionError: division by zero — an uncaught exception in the script",
    )


def test_truncated_stderr_is_classified_from_its_tail() -> None:
    head = "progress 1\n" * 5000
    tail = _traceback("OSError: [Errno 28] No space left on device", "handle.write(block)")
    text = head + "\n[... 5000000 bytes omitted ...]\n" + "ss 7\n" + tail
    result = ExecutionResult(
        exit_code=1, stderr=StreamCapture(text=text, total_bytes=5_100_000, truncated=True)
    )
    category, evidence = _classify(result)
    assert category is Category.RESOURCE
    assert "job.py:12 in main: handle.write(block)" in evidence


def test_evidence_is_bounded_whatever_the_message() -> None:
    line = "ValueError: " + "x" * 100_000
    category, evidence = _classify(_failed(_traceback(line, "y" * 10_000)))
    assert category is Category.RUNTIME
    assert len(evidence) <= EVIDENCE_MAX_CHARS


# --- process-level outcomes --------------------------------------------------------------


def test_timeout_without_contract_uses_the_measured_duration() -> None:
    result = ExecutionResult(
        timed_out=True, signal=9, duration_ms=12_500, stdout=StreamCapture(text="step 41\n")
    )
    assert _classify(result) == (
        Category.RESOURCE,
        "timed out after 12.5 s and was killed: it must finish faster or do less; "
        "stdout ends: 'step 41'",
    )


def test_timeout_wins_over_a_traceback_printed_before_the_kill() -> None:
    result = _failed(_traceback("KeyboardInterrupt"), exit_code=None, timed_out=True, signal=9)
    assert _classify(result, contract=ExecutionContract(timeout_s=5))[0] is Category.RESOURCE


def test_oom_without_contract() -> None:
    category, evidence = _classify(ExecutionResult(signal=9, oom_killed=True))
    assert category is Category.RESOURCE
    assert evidence == "killed by the out-of-memory killer: use less memory; no output"


@pytest.mark.parametrize(("fields"), [{"signal": 9}, {"exit_code": -9}])
def test_sigkill_without_oom_flag_is_resource(fields: dict[str, Any]) -> None:
    category, evidence = _classify(ExecutionResult(**fields))
    assert category is Category.RESOURCE
    assert evidence.startswith("killed by SIGKILL (signal 9) without hitting the time or")


@pytest.mark.parametrize("code", [137, 139, 143])
def test_an_exit_code_above_128_is_the_scripts_own_not_a_signal(code: int) -> None:
    """The runner reports signals apart: sys.exit(137) is an exit code, not a SIGKILL."""
    category, evidence = _classify(ExecutionResult(exit_code=code))
    assert category is Category.RUNTIME
    assert "SIG" not in evidence and str(code) in evidence


def test_segfault_in_native_code_is_runtime_with_fault_location() -> None:
    stderr = (
        "Fatal Python error: Segmentation fault\n\n"
        "Current thread 0x00007f (most recent call first):\n"
        '  File "/usr/lib/python3/dist-packages/ext.py", line 3 in boom\n'
        f'  File "/work/{SCRIPT}", line 8 in render\n'
        f'  File "/work/{SCRIPT}", line 20 in <module>\n'
    )
    category, evidence = _classify(_failed(stderr, exit_code=None, signal=11))
    assert category is Category.RUNTIME
    assert evidence.startswith("crashed with SIGSEGV (signal 11) at job.py:8 in render")


def test_stack_overflow_crash_is_resource() -> None:
    stderr = "Fatal Python error: Cannot recover from stack overflow.\n"
    assert _classify(_failed(stderr, exit_code=-6))[0] is Category.RESOURCE


def test_sandbox_note_alone_is_resource() -> None:
    result = ExecutionResult(exit_code=0, sandbox_note="the runner's channel was flooded")
    assert _classify(result) == (
        Category.RESOURCE,
        "the sandbox runner did not report normally: the runner's channel was flooded",
    )


def test_traceback_from_a_run_that_exited_zero_is_not_the_reason() -> None:
    result = _failed(_traceback("KeyError: 'x'"), exit_code=0, sandbox_note="artifacts lost")
    assert _classify(result)[1].startswith("the sandbox runner did not report normally")


def test_shell_command_not_found_without_traceback() -> None:
    result = _failed("sh: 1: ffmpeg: not found\n", exit_code=127)
    category, evidence = _classify(result)
    assert category is Category.ENVIRONMENT
    assert "the shell reported 'ffmpeg' not found" in evidence


def test_bare_exit_reports_the_stream_tails() -> None:
    assert _classify(ExecutionResult(exit_code=2)) == (
        Category.RUNTIME,
        "exit code 2 without a traceback; no output",
    )
    only_stdout = ExecutionResult(exit_code=2, stdout=StreamCapture(text="usage: job.py FILE\n"))
    assert _classify(only_stdout)[1].endswith("stdout ends: 'usage: job.py FILE'")


def test_truncated_stream_tail_says_so() -> None:
    stderr = StreamCapture(text="warning\n" * 10 + "fatal: bad input\n", truncated=True)
    evidence = _classify(ExecutionResult(exit_code=4, stderr=stderr))[1]
    assert "stderr (truncated) ends: '" in evidence and evidence.endswith("fatal: bad input'")


def test_nothing_recorded() -> None:
    assert _classify(ExecutionResult())[0] is Category.RUNTIME


def test_source_python_cannot_decode_is_syntax_even_without_a_traceback() -> None:
    stderr = ("SyntaxError: Non-UTF-8 code starting with '\\xe9' in file /work/latin1.py on "
              "line 1, but no encoding declared; see https://peps.python.org/pep-0263/\n")
    category, evidence = _classify(ExecutionResult(exit_code=1, stderr=StreamCapture(text=stderr)))
    assert category is Category.SYNTAX
    assert evidence.startswith("the script is not readable Python source: SyntaxError: Non-UTF-8")


@pytest.mark.parametrize(
    ("frame_file", "message", "category"),
    [
        ("/usr/lib/python3.11/concurrent/futures/_base.py", "", Category.RUNTIME),
        ("/usr/lib/python3.11/asyncio/tasks.py", "", Category.RUNTIME),
        ("/usr/lib/python3.11/socket.py", "timed out", Category.EXTERNAL),
        ("/usr/lib/python3/dist-packages/urllib3/connection.py", "", Category.EXTERNAL),
    ],
)
def test_a_timeout_error_is_the_networks_only_from_networking_code(
    frame_file: str, message: str, category: Category
) -> None:
    """TimeoutError is also what the script's own future.result(timeout=...) raises."""
    stderr = (
        "Traceback (most recent call last):\n"
        f'  File "/work/{SCRIPT}", line 5, in <module>\n    wait()\n'
        f'  File "{frame_file}", line 9, in wait\n    raise TimeoutError\n'
        f"TimeoutError{': ' + message if message else ''}\n"
    )
    got, _ = _classify(ExecutionResult(exit_code=1, stderr=StreamCapture(text=stderr)))
    assert got is category


PROXY_REFUSED = """Traceback (most recent call last):
  File "/work/fetch.py", line 3, in <module>
    requests.get("https://evil.example.com/data")
requests.exceptions.ProxyError: HTTPSConnectionPool(host='evil.example.com', port=443): Max \
retries exceeded (Caused by ProxyError('Cannot connect to proxy.', OSError('Tunnel connection \
failed: 403 Forbidden')))
"""


def _refused_run(stderr: str) -> ExecutionResult:
    log = NetworkLog(policy="allow api.example.com (ports 443)",
                     allowed_hosts=["api.example.com"], connections=[ConnectionRecord(
                         host="evil.example.com", port=443, kind="https", allowed=False,
                         reason="evil.example.com is not on the allow list")])
    return ExecutionResult(exit_code=1, stderr=StreamCapture(text=stderr), network=log)


def test_a_host_the_proxy_refused_is_an_external_failure_naming_it_and_the_allow_list() -> None:
    category, evidence = classify_execution_failure(_refused_run(PROXY_REFUSED),
                                                    script_name="fetch.py")
    assert category is Category.EXTERNAL
    assert evidence.startswith("evil.example.com:443 was refused (evil.example.com is not on "
                               "the allow list); allowed: api.example.com — then "
                               "requests.exceptions.ProxyError")


def test_a_script_that_does_not_compile_is_told_so_even_after_a_refusal() -> None:
    stderr = ('  File "/work/fetch.py", line 1\n    def (\n        ^\n'
              "SyntaxError: invalid syntax\n")
    category, _ = classify_execution_failure(_refused_run(stderr), script_name="fetch.py")
    assert category is Category.SYNTAX
