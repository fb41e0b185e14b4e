"""A `kind: script` is judged by frozen tests that run in a container of their own, over the
files the script wrote (issue 14, item 5). Nothing a script plants among its output changes
their verdict: a file named like the frozen test, a conftest, a .pth, an ini file, a forged
report, a bytecode cache, a module named like one pytest imports, a native extension module
named like one the tests import (which forged a pass under runsc before extension modules
were left out), a file too large to carry, an artifact that is not what it claims. Through
`selfcorrect run`, under both runtimes and both isolations: a script whose real output is
wrong fails, with the tests' own evidence.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.choices import Runtime
from selfcorrect_action.cli import main
from selfcorrect_action.loop.state import RunState
from selfcorrect_action.report.run_json import load_run_json
from tests.fakes.replays import fenced, write_replay

pytestmark = pytest.mark.docker

PROMPT = "Write result.json holding {\"total\": the sum of 1, 2 and 3}."
TESTS = '''
import json


def test_the_total():
    import statistics

    with open("result.json") as handle:
        assert json.load(handle)["total"] == statistics.mean([1, 11])
'''
# A compiled extension module `statistics` whose import makes every test report a pass
# (tests/fixtures/cheats/planted_extension.c), base64.
PLANTED_EXTENSION = "".join(
    (Path(__file__).parents[1] / "fixtures" / "cheats" / "planted_extension.so.b64")
    .read_text().split())
# Every suffix CPython 3.11 loads an extension module `statistics` from, on Linux.
EXTENSION_NAMES = ["statistics.cpython-311-x86_64-linux-gnu.so", "statistics.abi3.so",
                   "statistics.so"]
PASSING_HOOK = '''
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
'''
FORGED_REPORT = (
    '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" '
    'failures="0" skipped="0" tests="1"><testcase classname="test_result" '
    'name="test_the_total" file="test_result.py" line="1" time="0.001" /></testsuite>'
    '</testsuites>')
SCRIPT = f'''
import base64, json, os

plants = {{
    "test_result.py": "def test_the_total():\\n    pass\\n",
    "test_planted.py": "def test_planted():\\n    pass\\n",
    "conftest.py": {PASSING_HOOK!r},
    "sitecustomize.py": {PASSING_HOOK!r},
    "json.py": "dumps = loads = load = lambda *a, **k: {{'total': 6}}\\n",
    "pytest.ini": "[pytest]\\naddopts = -p conftest\\n",
    "setup.cfg": "[tool:pytest]\\naddopts = -p conftest\\n",
    "zz.pth": "import conftest\\n",
    ".selfcorrect/junit.xml": {FORGED_REPORT!r},
    "__pycache__/test_result.cpython-311.pyc": "not bytecode",
    "planted-1.0.dist-info/METADATA": "Metadata-Version: 2.1\\nName: planted\\nVersion: 1.0\\n",
    "planted-1.0.dist-info/entry_points.txt": "[pytest11]\\nplanted = conftest\\n",
}}
for name, text in plants.items():
    os.makedirs(os.path.dirname(name) or ".", exist_ok=True)
    with open(name, "w") as out:
        out.write(text)
for name in {EXTENSION_NAMES!r}:
    with open(name, "wb") as out:
        out.write(base64.b64decode({PLANTED_EXTENSION!r}))
with open("big.bin", "wb") as out:
    out.write(b"x" * (20 * 1024 * 1024))
with open("result.json", "w") as out:
    json.dump({{"total": 5}}, out)
print("done")
'''


@pytest.fixture(autouse=True)
def _no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SELFCORRECT_MODEL"):
        monkeypatch.delenv(name, raising=False)


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: Runtime,
         spec: dict[str, Any], files: dict[str, str], answer: str) -> tuple[int, RunState]:
    """`selfcorrect run` on `spec` in a repository holding `files`, the model's one answer
    replayed: its exit code and run.json."""
    work = tmp_path / "repo"
    work.mkdir()
    for name, text in files.items():
        (work / name).write_text(text)
    (work / "task.yml").write_text(json.dumps(spec))
    replay = write_replay(tmp_path / "replay.jsonl", spec["prompt"],
                          [("generate", fenced(textwrap.dedent(answer)))])
    monkeypatch.chdir(work)
    out = tmp_path / "out"
    exit_code = main(["run", str(work / "task.yml"), "--replay", str(replay), "--out",
                      str(out), "--runtime", runtime])
    return exit_code, load_run_json((out / "run.json").read_text())


@pytest.mark.usefixtures("sandbox_image")
@pytest.mark.parametrize("isolation", ["process", "in-process"])
def test_nothing_a_script_plants_changes_the_tests_verdict(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: Runtime, isolation: str) -> None:
    tests = textwrap.dedent(TESTS).lstrip()
    exit_code, state = _run(tmp_path, monkeypatch, runtime, {
        "prompt": PROMPT, "kind": "script", "output": "make_result.py",
        "tests": ["test_result.py"], "judge": False, "isolation": isolation,
        "budget": {"patch_attempts": 0, "rethink_attempts": 0},
        "contract": {"artifacts": [{"path": "result.json", "kind": "json",
                                    "required_keys": ["total"]}],
                     "stdout_contains": ["done"], "timeout_s": 60, "memory_mb": 512,
                     "success_criteria": ["result.json holds the total"]},
    }, {"test_result.py": tests}, SCRIPT)
    attempt = state.attempts[-1]
    assert (exit_code, state.status.value) == (1, "exhausted")
    assert attempt.execution is not None and attempt.execution.exit_code == 0
    assert attempt.verdict is not None and attempt.verdict.failed_layer == "contract"
    # The tests ran over the real result.json and said why it is wrong.
    assert "assert 5 == 6" in attempt.verdict.evidence, attempt.verdict.evidence
    assert [o.outcome for o in attempt.tests] == ["failed"]
    assert (tmp_path / "repo" / "test_result.py").read_text() == tests


FUNCTION_PROMPT = "Write total(values): the sum of a list of ints."


def _run_function(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: Runtime,
                  tests: str, answer: str, prompt: str = FUNCTION_PROMPT
                  ) -> tuple[int, RunState]:
    """`_run` on a `kind: function` spec whose module is total.py, judged by `tests`
    (test_total.py) alone, with one answer and no repair."""
    return _run(tmp_path, monkeypatch, runtime, {
        "prompt": prompt, "kind": "function", "output": "total.py",
        "tests": ["test_total.py"], "judge": False,
        "budget": {"patch_attempts": 0, "rethink_attempts": 0},
        "contract": {"artifacts": [], "stdout_contains": [], "timeout_s": 60,
                     "memory_mb": 512, "success_criteria": ["the tests pass"]},
    }, {"test_total.py": textwrap.dedent(tests).lstrip()}, answer)


FUNCTION_TESTS = '''
from total import total


def test_total():
    import statistics

    assert total([1, 2, 3]) == statistics.mean([1, 11])
'''
# A wrong function whose module, run as a script first, leaves the extension module among its
# output files, for the tests' run that follows (their files are carried the same way).
WRONG_FUNCTION = f'''
import base64

for name in {EXTENSION_NAMES!r}:
    try:  # imported again for the tests, where its folder is not its to write
        with open(name, "wb") as out:
            out.write(base64.b64decode({PLANTED_EXTENSION!r}))
    except OSError:
        pass


def total(values):
    return sum(values) - 1
'''


@pytest.mark.usefixtures("sandbox_image")
def test_an_extension_module_a_function_leaves_behind_never_reaches_its_tests(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: Runtime) -> None:
    exit_code, state = _run_function(tmp_path, monkeypatch, runtime, FUNCTION_TESTS, WRONG_FUNCTION)
    attempt = state.attempts[-1]
    assert (exit_code, state.status.value) == (1, "exhausted")
    assert attempt.verdict is not None and "assert 5 == 6" in attempt.verdict.evidence, (
        attempt.verdict)
    assert [o.outcome for o in attempt.tests] == ["failed"]


INPUT_PROMPT = ("Read sales.csv (columns region,amount) and write totals.json: "
                "{region: total amount}.")
SALES = "region,amount\nnorth,10\nsouth,5\nnorth,7\n"
INPUT_TESTS = '''
import csv
import json
from collections import defaultdict


def test_totals_match_the_sales():
    expected = defaultdict(int)
    with open("sales.csv", newline="") as handle:
        for row in csv.DictReader(handle):
            expected[row["region"]] += int(row["amount"])
    with open("totals.json") as handle:
        assert json.load(handle) == dict(expected)
'''
# Wrong, and it rewrites the input so that the data agrees with it.
REWRITES_ITS_INPUT = '''
import json

with open("totals.json", "w") as handle:
    json.dump({"north": 1}, handle)
with open("sales.csv", "w") as handle:
    handle.write("region,amount\\nnorth,1\\n")
'''


@pytest.mark.usefixtures("sandbox_image")
@pytest.mark.parametrize("isolation", ["process", "in-process"])
def test_an_input_the_script_rewrites_reaches_its_tests_as_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: Runtime, isolation: str) -> None:
    """Found by a red-team pass: the changed sales.csv was carried to the tests after the
    real one and replaced it, and a wrong answer passed under both runtimes."""
    exit_code, state = _run(tmp_path, monkeypatch, runtime, {
        "prompt": INPUT_PROMPT, "kind": "script", "output": "totals.py",
        "inputs": ["sales.csv"], "tests": ["test_totals.py"], "judge": False,
        "isolation": isolation, "budget": {"patch_attempts": 0, "rethink_attempts": 0},
        "contract": {"artifacts": [{"path": "totals.json"}], "stdout_contains": [],
                     "timeout_s": 60, "memory_mb": 512,
                     "success_criteria": ["the tests pass"]},
    }, {"sales.csv": SALES, "test_totals.py": textwrap.dedent(INPUT_TESTS).lstrip()},
        REWRITES_ITS_INPUT)
    attempt = state.attempts[-1]
    assert (exit_code, state.status.value) == (1, "exhausted")
    assert [o.outcome for o in attempt.tests] == ["failed"]
    assert attempt.verdict is not None and "north" in attempt.verdict.evidence
    assert (tmp_path / "repo" / "sales.csv").read_text() == SALES


# A matplotlibrc whose axes.prop_cycle, which matplotlib eval()s, escapes its guard through a
# generator's frame and patches pytest so that every test reports a pass (a red-team finding:
# it passed wrong answers under both runtimes, as a script's output file and as a file a
# function's module wrote into the tests' working folder while they ran).
FORGING_RC = (
    'axes.prop_cycle: [(g := (g.gi_frame.f_back.f_back.f_globals for _ in [1])), '
    '(b := [*g][0]["__builtins__"]), b["exec"]("import _pytest.reports as r\\n'
    'o = r.TestReport.from_item_and_call.__func__\\n'
    'def f(cls, item, call):\\n    rep = o(cls, item, call)\\n'
    "    rep.outcome = 'passed'\\n    rep.longrepr = None\\n    return rep\\n"
    'r.TestReport.from_item_and_call = classmethod(f)\\n", {"__builtins__": b}), '
    'cycler("color", ["r", "g"])][-1]\n')
CHART_TESTS = '''
import json

import matplotlib.image


def test_the_total():
    assert matplotlib.image  # imported, as a chart's tests do
    with open("result.json") as handle:
        assert json.load(handle)["total"] == 6
'''
WRITES_AN_RC = f'''
import json

with open("matplotlibrc", "w") as out:
    out.write({FORGING_RC!r})
with open("result.json", "w") as out:
    json.dump({{"total": 5}}, out)
'''


@pytest.mark.usefixtures("sandbox_image")
def test_a_matplotlibrc_a_script_writes_never_reaches_its_tests(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: Runtime) -> None:
    exit_code, state = _run(tmp_path, monkeypatch, runtime, {
        "prompt": PROMPT, "kind": "script", "output": "make_result.py",
        "tests": ["test_result.py"], "judge": False,
        "budget": {"patch_attempts": 0, "rethink_attempts": 0},
        "contract": {"artifacts": [{"path": "result.json", "kind": "json"}],
                     "stdout_contains": [], "timeout_s": 60, "memory_mb": 512,
                     "success_criteria": ["result.json holds the total"]},
    }, {"test_result.py": textwrap.dedent(CHART_TESTS).lstrip()}, WRITES_AN_RC)
    attempt = state.attempts[-1]
    assert (exit_code, state.status.value) == (1, "exhausted")
    assert attempt.verdict is not None and "assert 5 == 6" in attempt.verdict.evidence, (
        attempt.verdict)
    assert [o.outcome for o in attempt.tests] == ["failed"]


RC_FUNCTION_TESTS = '''
import matplotlib.image

from total import total


def test_total():
    assert matplotlib.image
    assert total([1, 2, 3]) == 6
'''
# Writes the file only when the tests import it, into their working folder (/work/shared,
# which both uids may write to): the host's filter of carried files never sees it.
RC_AT_IMPORT = f'''
if __name__ != "__main__":
    try:
        with open("matplotlibrc", "x") as out:
            out.write({FORGING_RC!r})
    except OSError:
        pass


def total(values):
    return sum(values) - 1
'''


@pytest.mark.usefixtures("sandbox_image")
def test_a_matplotlibrc_a_function_writes_while_its_tests_run_is_not_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: Runtime) -> None:
    exit_code, state = _run_function(tmp_path, monkeypatch, runtime, RC_FUNCTION_TESTS,
                                     RC_AT_IMPORT)
    attempt = state.attempts[-1]
    assert (exit_code, state.status.value) == (1, "exhausted")
    assert attempt.verdict is not None and "assert 5 == 6" in attempt.verdict.evidence, (
        attempt.verdict)
    assert [o.outcome for o in attempt.tests] == ["failed"]


# The tests' process reads code and configuration only from folders the candidate cannot
# write (sandbox/boundary/selfcorrect_boundary/trusted.py): a second red-team round passed
# wrong answers under both runtimes through a matplotlibrc written into the tmp_path a test
# had moved into, and through a module written into the tests' working folder, which a
# test had put on sys.path.
CHDIR_TESTS = '''
from total import leave_settings, total


def test_a_chart_in_its_own_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    leave_settings()
    import matplotlib.image

    assert matplotlib.image


def test_total():
    assert total([1, 2, 3]) == 6
'''
LEAVES_AN_RC_WHERE_IT_IS = f'''
import os


def leave_settings():
    with open(os.path.join(os.getcwd(), "matplotlibrc"), "x") as out:
        out.write({FORGING_RC!r})


def total(values):
    return sum(values) - 1
'''
PATH_TESTS = '''
import os
import sys

from total import total


def test_total():
    sys.path.insert(0, os.getcwd())  # "the module under test is in the working folder"
    import statistics

    assert total([1, 2, 3]) == statistics.mean([1, 11])
'''
# At import (eager: while pytest starts), a module named like one the tests import later,
# written into their working folder: it makes every report a pass, then becomes the real one.
PLANTS_A_MODULE = '''
import os

PAYLOAD = """
import importlib, sys
import _pytest.reports as r
made = r.TestReport.from_item_and_call.__func__
def forged(cls, item, call):
    rep = made(cls, item, call)
    rep.outcome, rep.longrepr = "passed", None
    return rep
r.TestReport.from_item_and_call = classmethod(forged)
me = sys.modules.pop(__name__)
sys.path.remove(os.path.dirname(__file__))
sys.modules[__name__] = importlib.import_module(__name__)
"""
try:
    with open(os.path.join(os.getcwd(), "statistics.py"), "x") as out:
        out.write("import os\\n" + PAYLOAD)
except OSError:
    pass


def total(values):
    return sum(values) - 1
'''


@pytest.mark.usefixtures("sandbox_image")
@pytest.mark.parametrize(("tests", "answer"), [(CHDIR_TESTS, LEAVES_AN_RC_WHERE_IT_IS),
                                               (PATH_TESTS, PLANTS_A_MODULE)],
                         ids=["rc-in-tmp-path", "module-on-sys-path"])
def test_the_tests_read_nothing_from_where_the_candidate_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: Runtime, tests: str,
        answer: str) -> None:
    exit_code, state = _run_function(tmp_path, monkeypatch, runtime, tests, answer)
    attempt = state.attempts[-1]
    assert (exit_code, state.status.value) == (1, "exhausted"), attempt.verdict
    assert attempt.verdict is not None and "assert 5 == 6" in attempt.verdict.evidence, (
        attempt.verdict)
    assert [o.outcome for o in attempt.tests][-1] == "failed"


# A third round: the tests' process itself was steered into writing its own sys.path
# folder. The candidate's tar archive held /work/tests/statistics.py; extracting it (the
# image's Python 3.11.2 has no extraction filter) planted the module a later test imported.
ARCHIVE_TESTS = '''
import tarfile

from total import pack, total


def test_pack(tmp_path):
    archive = tmp_path / "out.tar"
    pack(str(archive))
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path / "x")
    assert (tmp_path / "x" / "a.txt").read_text() == "alpha"


def test_total():
    import statistics

    assert total([1, 2, 3]) == statistics.mean([1, 11])
'''
PACKS_A_MODULE = f'''
import io
import tarfile

PAYLOAD = {PLANTS_A_MODULE.split('PAYLOAD = """')[1].split('"""')[0]!r}


def pack(path):
    with tarfile.open(path, "w") as tar:
        for name, text in (("a.txt", "alpha"), ("/work/tests/statistics.py",
                                                 "import os\\n" + PAYLOAD)):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def total(values):
    return sum(values) - 1
'''


@pytest.mark.usefixtures("sandbox_image")
def test_an_archive_the_tests_extract_plants_nothing_they_import(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: Runtime) -> None:
    exit_code, state = _run_function(tmp_path, monkeypatch, runtime, ARCHIVE_TESTS, PACKS_A_MODULE)
    attempt = state.attempts[-1]
    assert (exit_code, state.status.value) == (1, "exhausted"), attempt.verdict
    packed, summed = attempt.tests
    assert packed.outcome == "failed" and "would be extracted outside" in packed.message, packed
    assert summed.outcome == "failed" and "assert 5 == 6" in summed.message + summed.detail, (
        summed)


RENAME_TESTS = '''
from total import copy_upper


def test_copy_upper(tmp_path):
    source, target = tmp_path / "source.txt", tmp_path / "target.txt"
    source.write_text("hello world")
    copy_upper(str(source), str(target))
    assert target.read_text() == source.read_text().upper()
'''
# Wrong, and it replaces the file the test wrote (and compares with) by a rename: refused
# by the sticky folder under runc; gVisor lets it through, and the wrong answer passed.
REPLACES_THE_TESTS_FILE = '''
import os


def copy_upper(source, target):
    with open(target, "w") as out:
        out.write("NOPE")
    with open(source + ".swap", "w") as out:
        out.write("nope")
    os.rename(source + ".swap", source)
'''


@pytest.mark.usefixtures("sandbox_image")
def test_a_file_the_test_wrote_is_read_back_only_as_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: Runtime) -> None:
    exit_code, state = _run_function(
        tmp_path, monkeypatch, runtime, RENAME_TESTS, REPLACES_THE_TESTS_FILE,
        prompt="Write copy_upper(source, target): target gets source's text upper-cased.")
    attempt = state.attempts[-1]
    assert (exit_code, state.status.value) == (1, "exhausted"), attempt.verdict
    (outcome,) = attempt.tests
    said = outcome.message + outcome.detail
    assert outcome.outcome == "failed"
    assert ("PermissionError" if runtime == "runc" else "put a different file in its place") in (
        said), said


# A fourth round, past the first archive rules: links that each read as inside (b -> .,
# then b/b/../../work/tests) let extraction's final pass chmod the tests' folder 0777, and a
# thread of the candidate's wrote numpy.py there, which decoding a numpy value imported.
LINKED_ARCHIVE_TESTS = '''
import tarfile

from total import count_lines, pack


def test_pack(tmp_path):
    archive = tmp_path / "out.tar"
    pack(str(archive))
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path / "x")
    assert (tmp_path / "x" / "a.txt").read_text() == "alpha"


def test_z_count_lines():
    assert count_lines("a\\\\nb\\\\nc\\\\n") == 3
'''
CHAINS_LINKS = f'''
import io, os, tarfile, threading, time

PAYLOAD = {PLANTS_A_MODULE.split('PAYLOAD = """')[1].split('"""')[0]!r}


def _add(tar, name, kind=tarfile.REGTYPE, data=b"", link="", mode=0o644):
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode, info.size = kind, link, mode, len(data)
    tar.addfile(info, io.BytesIO(data))


def _plant():
    for _ in range(5000):
        try:
            if os.stat("/work/tests").st_mode & 0o002:
                with open("/work/tests/numpy.py", "w") as out:
                    out.write("import os\\n" + PAYLOAD)
                return
        except OSError:
            pass
        time.sleep(0.001)


def pack(path):
    with tarfile.open(path, "w") as tar:
        _add(tar, "a.txt", data=b"alpha")
        _add(tar, "b", tarfile.SYMTYPE, link=".")
        _add(tar, "int", tarfile.DIRTYPE, mode=0o755)
        _add(tar, "t", tarfile.SYMTYPE, link="int")
        _add(tar, "t", tarfile.DIRTYPE, mode=0o777)
        _add(tar, "t", tarfile.SYMTYPE, link="b/" * 8 + "../" * 8 + "work/tests")
    threading.Thread(target=_plant, daemon=True).start()


def count_lines(text):
    import numpy

    return numpy.int64(42)
'''


@pytest.mark.usefixtures("sandbox_image")
def test_an_archive_of_chained_links_opens_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: Runtime) -> None:
    exit_code, state = _run_function(tmp_path, monkeypatch, runtime, LINKED_ARCHIVE_TESTS,
                                     CHAINS_LINKS)
    attempt = state.attempts[-1]
    assert (exit_code, state.status.value) == (1, "exhausted"), attempt.verdict
    packed, counted = attempt.tests
    assert packed.outcome == "failed" and "refused the link 'b'" in packed.message, packed
    assert counted.outcome == "failed" and "42" in counted.message + counted.detail, counted
