"""What crosses the tests' boundary, in the real sandbox (docs/task-spec.md, "What crosses
the boundary"): every row of that table is a test here, written as a spec's tests would
be, against a candidate that does what the row says. The tests pass when the value crossed
faithfully (or was refused with the documented message)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from selfcorrect_action.evaluation.junit import (
    PYTEST_JUNIT_PATH,
    boundary_pytest_argv,
    parse_junit_report,
)
from selfcorrect_action.sandbox.models import Boundary, ExecutionRequest, InputFile
from selfcorrect_action.taxonomy import TestOutcome

pytestmark = pytest.mark.docker

CANDIDATE = '''
import collections, datetime, decimal, enum, fractions, pathlib, time, uuid, warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

LIMIT = 3


class ParseError(ValueError):
    def __init__(self, message, line):
        super().__init__(message)
        self.line = line


class EmptyError(ParseError):
    pass


class Color(enum.Enum):
    RED = 1


@dataclass
class Point:
    x: int
    y: int

    def norm2(self):
        return self.x ** 2 + self.y ** 2

    def moved(self, dx):
        return Point(self.x + dx, self.y)


class Stack(list):
    def push(self, value):
        self.append(value)


class Base:
    def __init__(self, v):
        self.v = v

    def doubled(self):
        return Child(self.v * 2)


class Child(Base):
    pass


class Opaque:
    pass


def echo(value):
    return value


def kinds():
    return {"tuple": (1, 2), "set": {1, 2}, "frozen": frozenset({3}), "bytes": b"\\x00\\xff",
            "bytearray": bytearray(b"ab"), "complex": 1 + 2j, "big": 2 ** 100,
            "float": 0.1, "nan": float("nan"), "deque": collections.deque([1, 2], maxlen=5),
            "ordered": collections.OrderedDict(a=1), "counter": collections.Counter("aab"),
            "range": range(1, 10, 2)}


def moments():
    return (datetime.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=datetime.timezone.utc),
            datetime.date(2020, 2, 29), datetime.time(12, 30), datetime.timedelta(days=2),
            decimal.Decimal("1.10"), fractions.Fraction(1, 3), uuid.UUID(int=5),
            pathlib.Path("/tmp/x"))


def parse(text):
    if not text:
        raise EmptyError("empty input", line=0)
    raise ParseError(f"bad token {text!r}", line=7)


def lookup(d, k):
    return d[k]


def arrays():
    return np.arange(6, dtype=np.int32).reshape(2, 3), np.float32(1.5), np.array(["a", "b"])


def frame():
    return pd.DataFrame({
        "a": [1, 2], "b": ["x", None], "c": pd.Categorical(["u", "v"]),
        "d": pd.array([1, None], dtype="Int64"),
        "t": pd.to_datetime(["2024-01-01", "2024-01-02"]).tz_localize("UTC")},
        index=pd.Index(["r1", "r2"], name="row"))


def describe(df):
    return {"shape": list(df.shape), "total": int(df["n"].sum())}


def add_total(df):
    df["total"] = df["a"] * 2


def scale_in_place(values, factor):
    values[:] = [v * factor for v in values]


def fill(d, arr):
    d["seen"] = True
    arr *= 2


def squares():
    n = 0
    while True:
        yield n * n
        n += 1


def sort_by(items, key):
    return sorted(items, key=key)


def make_items():
    return [Base(3), Base(1), Base(2)]


def shout(text):
    print(text.upper())


def ask():
    return int(input("n? ")) * 2


def read_stdin():
    return sum(int(line) for line in iter(input_line, ""))


def input_line():
    import sys
    return sys.stdin.readline()


def careful():
    warnings.warn("mind the gap", DeprecationWarning)
    return 1


def write_here(name):
    with open(name, "w") as out:
        out.write("written")


def read_file(path):
    return pathlib.Path(path).read_text()


def helper():
    return "real"


def uses_helper():
    return helper() + "!"


def opaque():
    return Opaque()


def slow():
    time.sleep(60)


def cli(argv):
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("n", type=int)
    return parser.parse_args(argv).n * 2


def same(values):
    values.append(1)
    return values


def where():
    import os
    return os.getcwd(), os.environ.get("SELFCORRECT_TEST_VAR")


class Client:
    def fetch(self):
        return "real"

    def get(self):
        return self.fetch() + "!"


def raw_print(text):
    import sys
    sys.stdout.buffer.write(text.encode())


def stop():
    raise StopIteration


def documented():
    """Adds nothing."""


def make_dirs(path):
    import os
    os.makedirs(os.path.join(path, "a", "b"))
    with open(os.path.join(path, "a", "b", "f"), "w") as out:
        out.write("x")


def aware():
    from dateutil import tz
    return datetime.datetime(2024, 6, 1, 12, tzinfo=tz.tzoffset("CEST", 7200))


def call_it(function):
    try:
        function(1)
    except AssertionError:
        return "swallowed"


def noisy():
    import logging
    logging.getLogger("cand.work").info("working on it")
    logging.getLogger("cand.work").warning("almost out of %s", "coffee")
    return 1


def all(iterable):  # noqa: A001  # what a star import must not hand the tests
    return True


math = "the candidate's"
'''

TESTS = '''
import datetime, decimal, fractions, itertools, math, os, pathlib, tempfile, uuid

import numpy as np
import pandas as pd
import pytest

import cand
from cand import Color, EmptyError, ParseError, Point, Stack


def test_plain_data_round_trips():
    for value in (None, True, 3, -2 ** 70, 1.5, "é\\u2603", b"raw", [1, [2, (3,)]],
                  {"k": {1: [None]}}, {1, 2}, frozenset({1}), (1,), 1j, float("inf")):
        assert cand.echo(value) == value and type(cand.echo(value)) is type(value)
    kinds = cand.kinds()
    assert kinds["tuple"] == (1, 2) and kinds["set"] == {1, 2} and kinds["big"] == 2 ** 100
    assert kinds["bytearray"] == bytearray(b"ab") and type(kinds["bytearray"]) is bytearray
    assert math.isnan(kinds["nan"]) and kinds["float"] == 0.1
    assert list(kinds["deque"]) == [1, 2] and kinds["deque"].maxlen == 5
    assert kinds["counter"]["a"] == 2 and kinds["counter"]["zzz"] == 0
    assert kinds["range"] == range(1, 10, 2)


def test_dates_decimals_fractions_uuids_paths():
    dt, d, t, td, dec, fr, u, p = cand.moments()
    assert dt == datetime.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=datetime.timezone.utc)
    assert (d, t, td) == (datetime.date(2020, 2, 29), datetime.time(12, 30),
                          datetime.timedelta(days=2))
    assert str(dec) == "1.10" and fr == fractions.Fraction(1, 3) and u == uuid.UUID(int=5)
    assert p == pathlib.Path("/tmp/x") and isinstance(p, pathlib.Path)
    assert cand.echo(datetime.date(1999, 12, 31)) == datetime.date(1999, 12, 31)


def test_the_candidates_exceptions_with_their_base_classes_and_attributes():
    with pytest.raises(EmptyError, match="empty input") as caught:
        cand.parse("")
    assert caught.value.line == 0 and isinstance(caught.value, ParseError)
    with pytest.raises(ValueError, match="bad token") as caught:
        cand.parse("x")
    assert caught.value.line == 7
    with pytest.raises(KeyError):
        cand.lookup({}, "missing")


def test_numpy_arrays_and_scalars():
    grid, scalar, words = cand.arrays()
    assert grid.dtype == np.int32 and grid.shape == (2, 3)
    np.testing.assert_array_equal(grid, np.arange(6).reshape(2, 3))
    assert scalar == 1.5 and scalar.dtype == np.float32
    assert list(words) == ["a", "b"]
    sent = np.linspace(0, 1, 5)
    np.testing.assert_allclose(cand.echo(sent), sent)


def test_pandas_frames_series_and_their_dtypes():
    df = cand.frame()
    assert list(df.columns) == ["a", "b", "c", "d", "t"] and df.index.name == "row"
    assert str(df["c"].dtype) == "category" and str(df["d"].dtype) == "Int64"
    assert str(df["t"].dtype) == "datetime64[ns, UTC]" and df["d"].isna().tolist() == [False, True]
    mine = pd.DataFrame({"n": [1, 2, 3]})
    assert cand.describe(mine) == {"shape": [3, 1], "total": 6}
    pd.testing.assert_frame_equal(cand.echo(mine), mine)


def test_changes_made_in_place_reach_the_tests_objects():
    values = [1, 2]
    cand.scale_in_place(values, 3)
    assert values == [3, 6]
    d, arr = {}, np.array([1, 2])
    cand.fill(d, arr)
    assert d == {"seen": True} and arr.tolist() == [2, 4]
    df = pd.DataFrame({"a": [1, 2]})
    cand.add_total(df)
    assert df["total"].tolist() == [2, 4]


def test_the_candidates_classes_and_objects():
    p = Point(3, 4)
    assert p.norm2() == 25 and p.x == 3 and isinstance(p, Point)
    assert p == Point(3, 4) and p != Point(1, 1)
    assert p.moved(1).x == 4
    child = cand.Base(2).doubled()
    assert isinstance(child, cand.Child) and isinstance(child, cand.Base) and child.v == 4
    s = Stack()
    s.push(1)
    s.push(2)
    assert s == [1, 2] and len(s) == 2 and 2 in s and s + [3] == [1, 2, 3]
    assert cand.echo(Color.RED) == Color.RED and Color.RED.value == 1


def test_generators_cross_lazily():
    assert list(itertools.islice(cand.squares(), 5)) == [0, 1, 4, 9, 16]


def test_the_tests_functions_are_called_back():
    assert cand.sort_by([3, 1, 2], key=lambda v: -v) == [3, 2, 1]
    items = cand.sort_by(cand.make_items(), key=lambda item: item.v)
    assert [item.v for item in items] == [1, 2, 3]


def test_print_input_stdin_and_warnings(capsys, monkeypatch):
    cand.shout("hi")
    assert capsys.readouterr().out == "HI\\n"
    monkeypatch.setattr("builtins.input", lambda prompt: "21")
    assert cand.ask() == 42
    import io
    monkeypatch.setattr("sys.stdin", io.StringIO("1\\n2\\n"))
    assert cand.read_stdin() == 3
    with pytest.warns(DeprecationWarning, match="mind the gap"):
        assert cand.careful() == 1


def test_files_in_the_working_folder_tmp_path_and_tempfile(tmp_path):
    cand.write_here("out.txt")
    assert open("out.txt").read() == "written"
    given = tmp_path / "in.txt"
    given.write_text("from the test")
    assert cand.read_file(given) == "from the test"
    folder = tempfile.mkdtemp()
    with open(os.path.join(folder, "t.txt"), "w") as out:
        out.write("temp")
    assert cand.read_file(os.path.join(folder, "t.txt")) == "temp"
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as named:
        named.write("named")
        named.flush()
        assert cand.read_file(named.name) == "named"


def test_monkeypatching_the_candidates_module(monkeypatch):
    assert cand.LIMIT == 3
    monkeypatch.setattr(cand, "helper", lambda: "fake")
    assert cand.uses_helper() == "fake!"
    monkeypatch.setattr(cand, "LIMIT", 5)
    assert cand.LIMIT == 5


def test_the_patch_is_undone():
    assert cand.uses_helper() == "real!" and cand.LIMIT == 3


def test_star_import_brings_the_public_names():
    namespace = {}
    exec("from cand import *", namespace)
    assert namespace["LIMIT"] == 3 and namespace["echo"]([1]) == [1]
    assert "Point" in namespace and not any(name.startswith("_") for name in namespace
                                            if name != "__builtins__")


def test_sys_exit_is_the_candidates_answer():
    with pytest.raises(SystemExit):
        cand.cli(["not-a-number"])
    assert cand.cli(["2"]) == 4


def test_a_returned_argument_is_the_tests_own_object():
    values = []
    assert cand.same(values) is values and values == [1]


def test_environment_and_working_folder_follow_the_test(monkeypatch, tmp_path):
    monkeypatch.setenv("SELFCORRECT_TEST_VAR", "on")
    monkeypatch.chdir(tmp_path)
    assert cand.where() == (str(tmp_path), "on")


def test_and_are_put_back_after_it():
    assert cand.where() == (os.getcwd(), None)


def test_patching_a_method_of_the_candidates_class(monkeypatch):
    monkeypatch.setattr(cand.Client, "fetch", lambda self: "fake")
    assert cand.Client().get() == "fake!"


def test_the_method_patch_is_undone():
    assert cand.Client().get() == "real!"


def test_bytes_written_to_stdout(capsys):
    cand.raw_print("hi")
    assert capsys.readouterr().out == "hi"


def test_stop_iteration_from_a_call_does_not_end_a_loop():
    with pytest.raises(RuntimeError, match="outside an iteration"):
        cand.stop()


def test_docstrings_are_the_candidates():
    assert cand.documented.__doc__ == "Adds nothing." and cand.echo.__doc__ is None


def test_a_temporary_folder_the_candidate_wrote_into_is_cleaned_up():
    with tempfile.TemporaryDirectory() as folder:
        cand.make_dirs(folder)
    assert not os.path.exists(folder)


def test_another_librarys_time_zone_keeps_the_instant():
    assert cand.aware() == datetime.datetime(2024, 6, 1, 10, tzinfo=datetime.timezone.utc)


def test_a_star_import_never_shadows_builtins_or_the_tests_names():
    namespace = {"math": math}
    exec("from cand import *", namespace)
    assert namespace["math"] is math and "all" not in namespace


def test_the_candidates_log_records_reach_caplog(caplog):
    import logging
    cand.noisy()  # the first call that imports logging there: nothing is captured yet
    caplog.clear()
    with caplog.at_level(logging.INFO):
        assert cand.noisy() == 1
    assert [(r.name, r.levelname, r.getMessage()) for r in caplog.records] == [
        ("cand.work", "INFO", "working on it"), ("cand.work", "WARNING", "almost out of coffee")]


def test_refused_an_assertion_of_the_tests_swallowed_in_a_callback():
    def check(value):
        assert value == 2

    cand.call_it(check)


def test_refused_an_object_of_the_tests():
    class Mine:
        pass

    cand.echo(Mine())


def test_refused_arithmetic_with_an_opaque_object():
    assert abs(cand.opaque() - 2.0) < 1e-9


def test_explained_an_opaque_object_compared_with_data():
    assert cand.opaque() == [1]


def test_hang():
    cand.slow()
'''

REFUSED = {
    "test_refused_an_assertion_of_the_tests_swallowed_in_a_callback": (
        "BoundaryError", "an assertion in a function of the tests' failed"),
    "test_refused_an_object_of_the_tests": (
        "NotPlainData", "test_it.test_refused_an_object_of_the_tests.<locals>.Mine object"),
    "test_refused_arithmetic_with_an_opaque_object": ("NotPlainData", "would let the candidate"),
    "test_explained_an_opaque_object_compared_with_data": (
        "AssertionError", "equal only to itself"),
    "test_hang": ("CandidateHung", "did not answer in time"),
}


@pytest.fixture(scope="module")
def outcomes(docker_engine, sandbox_image: str, tmp_path_factory: pytest.TempPathFactory
             ) -> dict[str, TestOutcome]:
    from selfcorrect_action.sandbox.client import Sandbox

    request = ExecutionRequest(
        argv=boundary_pytest_argv(["test_it.py"]), timeout_s=30,
        files=[InputFile(path="cand.py", data=textwrap.dedent(CANDIDATE).encode()),
               InputFile(path="test_it.py", data=textwrap.dedent(TESTS).encode())],
        boundary=Boundary(candidate="cand.py", module="cand", tests=["test_it.py"]),
        artifact_paths=[PYTEST_JUNIT_PATH])
    with Sandbox(docker_engine, sandbox_image) as box:
        result = box.run(request, tmp_path_factory.mktemp("crossing"))
    junit = next(a for a in result.artifacts if a.path == PYTEST_JUNIT_PATH)
    assert junit.host_path is not None, result.stdout.text[-3000:]
    report = parse_junit_report(Path(junit.host_path))
    found = {o.test_id.split("::")[1]: o for o in report.outcomes}
    assert len(found) == TESTS.count("\ndef test_")
    return found


@pytest.mark.parametrize("name", [line.split("(")[0][4:] for line in TESTS.splitlines()
                                  if line.startswith("def test_")])
def test_each_row_crosses_or_is_refused_as_documented(outcomes: dict[str, TestOutcome],
                                                      name: str) -> None:
    outcome = outcomes[name]
    if name in REFUSED:
        kind, words = REFUSED[name]
        assert outcome.outcome == "failed", outcome
        text = outcome.message + outcome.detail
        assert kind in text and words in text, text
    else:
        assert outcome.outcome == "passed", outcome
