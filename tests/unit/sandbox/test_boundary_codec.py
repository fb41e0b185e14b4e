"""The boundary's codec and the tests' side of it (sandbox/boundary/selfcorrect_boundary/),
in this process: what crosses as itself, and what the tests' side refuses to build from a
reply, whatever the candidate's process wrote. (numpy and pandas round trips run in the
sandbox image, which has them: tests/integration/test_boundary_crossing.py. The time-zone
tests below use pandas where the development environment has it, and skip its cases
where it does not; tests/security/test_boundary.py runs them against the image's.)"""

from __future__ import annotations

import collections
import datetime
import decimal
import fractions
import importlib.util
import math
import pathlib
import shutil
import socket
import sys
import tempfile
import uuid
import zoneinfo
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BOUNDARY = Path(__file__).parents[3] / "sandbox" / "boundary"


@pytest.fixture(scope="module")
def boundary() -> Iterator[dict[str, ModuleType]]:
    sys.path.insert(0, str(BOUNDARY))
    try:
        import selfcorrect_boundary
        from selfcorrect_boundary import client, codec

        yield {"errors": selfcorrect_boundary, "codec": codec, "client": client}
    finally:
        sys.path.remove(str(BOUNDARY))


def round_trip(codec: ModuleType, value: object) -> Any:
    peer = codec.Peer()
    frame = codec.dump_frame(codec.encode(value, peer))
    return codec.decode(codec.load_frame_body(frame[codec.HEADER_SIZE:]), peer)


@pytest.mark.parametrize("value", [
    None, True, False, 0, -1, 2**63, -(2**70), 1.5, -0.0, float("inf"), 1 + 2j, "",
    "é\u2603\U0001f600", "lone \ud800", b"\x00\xff", bytearray(b"ab"), [1, [2, [3]]], (1, (2,)),
    {"a": {1: [None]}}, {1, 2}, frozenset({3}), collections.deque([1, 2], maxlen=4),
    collections.OrderedDict(b=1, a=2), collections.Counter("aab"), range(1, 9, 3),
    datetime.datetime(2024, 1, 2, 3, 4, 5, 6), datetime.date(2020, 2, 29),
    datetime.time(23, 59, 1), datetime.timedelta(days=-1, seconds=5),
    datetime.datetime(2024, 1, 2, tzinfo=datetime.timezone(datetime.timedelta(hours=-5))),
    decimal.Decimal("1.10"), decimal.Decimal("-Infinity"), fractions.Fraction(-1, 3),
    uuid.UUID(int=7), pathlib.Path("/tmp/x"), pathlib.PurePosixPath("a/b"),
])
def test_plain_data_crosses_as_itself(boundary: dict[str, ModuleType], value: object) -> None:
    back = round_trip(boundary["codec"], value)
    assert back == value and type(back) is type(value)
    if isinstance(value, decimal.Decimal):
        assert str(back) == str(value)
    if isinstance(value, collections.deque):
        assert isinstance(back, collections.deque) and back.maxlen == value.maxlen


def test_subclasses_of_plain_types_cross_as_their_base(boundary: dict[str, ModuleType]) -> None:
    class Liar(int):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = int.__hash__

    back = round_trip(boundary["codec"], [Liar(3), collections.defaultdict(int, a=1)])
    assert back == [3, {"a": 1}] and type(back[0]) is int and type(back[1]) is dict
    assert math.isnan(round_trip(boundary["codec"], float("nan")))


def test_what_is_not_plain_data_is_refused_by_name(boundary: dict[str, ModuleType]) -> None:
    codec, errors = boundary["codec"], boundary["errors"]

    class Mine:
        pass

    with pytest.raises(errors.NotPlainData, match="Mine object is not plain data"):
        codec.encode([1, Mine()], codec.Peer())
    nested: list[object] = []
    for _ in range(codec.MAX_DEPTH + 5):
        nested = [nested]
    with pytest.raises(errors.NotPlainData, match="nested more than"):
        codec.encode(nested, codec.Peer())
    with pytest.raises(errors.NotPlainData, match="time zone"):
        codec.encode(datetime.datetime(2024, 1, 1, tzinfo=_OddZone(None)), codec.Peer())
    moment = datetime.datetime(2024, 1, 1, 12, tzinfo=_OddZone(2))
    back = round_trip(codec, moment)
    assert back == moment and back.utcoffset() == datetime.timedelta(hours=2)


class _OddZone(datetime.tzinfo):
    """Another library's zone: crosses as the offset it gives the moment, if it gives one."""

    def __init__(self, hours: int | None) -> None:
        self.hours = hours

    def utcoffset(self, moment: object) -> datetime.timedelta | None:
        return None if self.hours is None else datetime.timedelta(hours=self.hours)

    def dst(self, moment: object) -> None:
        return None

    def tzname(self, moment: object) -> None:
        return None


# A zone name the tests' side looks up (issue 34): pandas hands "dateutil/..." names to
# dateutil, which opens the path after "dateutil/" or "dateutil/:", so a name that was looked
# up told the candidate whether a file the tests' uid can read exists. "{zone}" is a real
# zone file outside the database, which such a name made the tests' process load.
FORGED_ZONES = ["dateutil/:{zone}", "dateutil/{zone}", "dateutil/:/etc/passwd",
                "dateutil/:/nonexistent", "dateutil//x", "Europe/Paris\x00", "Not/AZone",
                "posix/Europe/Paris", "../zoneinfo/UTC"]
DATABASE_ZONES = ["Europe/Paris", "UTC", "Etc/GMT-2"]  # Etc/GMT-2: a fixed offset, +02:00
NOON_UTC = datetime.datetime(2024, 6, 1, 12, tzinfo=datetime.UTC)


class _OpenWatch:
    """The opens of one path by this process, seen by an audit hook: it sees every open,
    dateutil's included. A hook lasts as long as the process, so one is added, on first
    use, and is idle whenever no path is watched."""

    def __init__(self) -> None:
        self.path = ""
        self.seen: list[str] = []
        self.installed = False

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "open" and self.path and str(args[0]) == self.path:
            self.seen.append(self.path)

    def start(self, path: Path) -> None:
        if not self.installed:
            sys.addaudithook(self)
            self.installed = True
        self.path, self.seen = str(path), []

    def stop(self) -> list[str]:
        self.path = ""
        return self.seen


_OPENS = _OpenWatch()


@pytest.fixture
def zone_file() -> Iterator[Path]:
    """A copy of a real zone file, outside the database, at a path as short as an attacker
    would pick (the old check refused names of more than 64 characters; tmp_path's are)."""
    source = next(Path(root, "Europe", "Paris") for root in zoneinfo.TZPATH
                  if Path(root, "Europe", "Paris").is_file())
    with tempfile.TemporaryDirectory(prefix="z") as folder:
        shutil.copyfile(source, Path(folder, "zone"))
        yield Path(folder, "zone")


@pytest.fixture
def unopened_zone_file(zone_file: Path) -> Iterator[Path]:
    """`zone_file`, asserted afterwards never to have been opened by this process."""
    _OPENS.start(zone_file)
    try:
        yield zone_file
    finally:
        opened = _OPENS.stop()
    assert opened == [], f"the tests' side opened {opened}"


def _zone_wire(codec: ModuleType, shape: str, name: object) -> object:
    """NOON_UTC in a zone called `name`, as the candidate's process could write it."""
    nanos = int(NOON_UTC.timestamp()) * 10**9
    if shape == "zi":  # a datetime's wall time, in its zone (+02:00 for the forged ones)
        known = name if name in DATABASE_ZONES else "Europe/Paris"
        wall = NOON_UTC.astimezone(zoneinfo.ZoneInfo(str(known))).replace(tzinfo=None)
        return {"dt": [wall.isoformat(), {"zi": name}]}
    pytest.importorskip("pandas")
    if shape == "pdts":
        return {"pdts": [nanos, name]}
    import numpy as np

    values = codec.encode(np.array([nanos], dtype="<i8"), codec.Peer())
    return {"pds": [None, ["datetime64tz", [name, values]], ["range", [0, 1, 1], None]]}


def _zone_and_instant(value: Any) -> tuple[str, datetime.datetime]:
    if isinstance(value, datetime.datetime):  # pandas' Timestamp too
        return str(value.tzinfo), value
    return str(value.dt.tz), value.iloc[0]


@pytest.mark.parametrize("shape", ["zi", "pdts", "datetime64tz"])
def test_the_tests_side_looks_up_only_the_zone_databases_names(
        boundary: dict[str, ModuleType], unopened_zone_file: Path, shape: str) -> None:
    """A datetime's zone (zi), a pandas Timestamp's (pdts) and a tz-aware column's: a name
    of the zone database (fixed offsets among them: Etc/GMT-2) or UTC, and nothing else,
    refused before anything looks it up."""
    codec, errors = boundary["codec"], boundary["errors"]
    for name in DATABASE_ZONES:
        back = codec.decode(_zone_wire(codec, shape, name), codec.Peer())
        assert _zone_and_instant(back) == (name, NOON_UTC)
    for forged in FORGED_ZONES:
        name = forged.format(zone=unopened_zone_file)
        with pytest.raises(errors.ProtocolBroken,
                           match="is not a time zone name of the zone database"):
            codec.decode(_zone_wire(codec, shape, name), codec.Peer())
    fixed = {"dt": ["2024-06-01T17:30:00", {"off": [19800, 0]}]}
    assert codec.decode(fixed, codec.Peer()) == NOON_UTC


class _NamedZone(datetime.tzinfo):
    """A zone that names itself as pytz's do (`zone`), with any name: pytz builds such
    classes from any zone file (pytz.tzfile.build_tzinfo)."""

    def __init__(self, name: str) -> None:
        self.zone = name

    def utcoffset(self, moment: object) -> datetime.timedelta:
        return datetime.timedelta(hours=2)

    def dst(self, moment: object) -> datetime.timedelta:
        return datetime.timedelta(0)

    def tzname(self, moment: object) -> str:
        return self.zone


def test_a_zone_named_outside_the_database_is_refused_before_it_is_sent(
        boundary: dict[str, ModuleType], zone_file: Path) -> None:
    """The encoder sends only names the decoder accepts: a zone read from a file can carry
    any name, and would otherwise reach the other side as a broken reply."""
    codec, errors = boundary["codec"], boundary["errors"]
    with zone_file.open("rb") as handle:
        from_file = zoneinfo.ZoneInfo.from_file(handle, key="Not/AZone")
    odd: list[object] = [datetime.datetime(2024, 6, 1, tzinfo=from_file),
                         datetime.time(12, tzinfo=from_file),
                         datetime.datetime(2024, 6, 1, tzinfo=_NamedZone("dateutil//x"))]
    if importlib.util.find_spec("pandas") is not None:
        import pandas as pd

        odd += [pd.Timestamp("2024-06-01", tz=from_file),
                pd.Series(pd.date_range("2024-06-01", periods=2, tz=from_file, unit="ns"))]
    for value in odd:
        with pytest.raises(errors.NotPlainData, match=r"a time zone named .+ cannot cross"):
            codec.encode(value, codec.Peer())
    for name in DATABASE_ZONES:
        moment = datetime.datetime(2024, 6, 1, 12, tzinfo=zoneinfo.ZoneInfo(name))
        back = round_trip(codec, moment)
        assert back == moment and back.tzinfo is moment.tzinfo


def test_only_a_zone_other_than_utc_reads_the_zone_database(
        boundary: dict[str, ModuleType], monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading the database's names costs 830 ms under gVisor: a value without a zone, or
    in UTC, never pays it, and the names are read once."""
    codec = boundary["codec"]
    monkeypatch.setattr(codec, "_zone_database", None)
    plain = [datetime.datetime(2024, 6, 1), NOON_UTC, datetime.time(12),
             datetime.datetime(2024, 6, 1, tzinfo=zoneinfo.ZoneInfo("UTC"))]

    def names() -> frozenset[str] | None:
        database: frozenset[str] | None = codec._zone_database
        return database

    assert round_trip(codec, plain) == plain
    assert names() is None
    paris = datetime.datetime(2024, 6, 1, tzinfo=zoneinfo.ZoneInfo("Europe/Paris"))
    assert round_trip(codec, paris) == paris
    read = names()
    assert read is not None and "Europe/Paris" in read
    round_trip(codec, paris)
    assert names() is read


@pytest.mark.parametrize("data", [
    1.5,  # a raw JSON float: floats always come tagged
    {"a": 1, "b": 2},  # not one tag
    {"zz": 1},  # an unknown tag
    {"x": "not hex"},
    {"b": "not base64!"},
    {"t": "not a list"},
    {"d": [[1]]},  # not pairs
    {"d": [[[1], 2]]},  # an unhashable key
    {"dq": [[1], -1]},
    {"dec": "1" * 20_000},
    {"dt": ["2024-13-45", None]},
    {"dt": ["2024-01-01", {"zi": "../../etc/passwd"}]},
    {"path": ["/x", "yes"]},
    {"h": {"id": 1}},  # a handle, to a peer that holds none
    {"cb": 1},
])
def test_the_tests_side_refuses_anything_malformed(boundary: dict[str, ModuleType],
                                                   data: object) -> None:
    codec, errors = boundary["codec"], boundary["errors"]
    with pytest.raises(errors.ProtocolBroken):
        codec.decode(data, codec.Peer())


def test_decoding_is_depth_capped(boundary: dict[str, ModuleType]) -> None:
    codec, errors = boundary["codec"], boundary["errors"]
    deep: object = 1
    for _ in range(codec.MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(errors.ProtocolBroken, match="too deeply"):
        codec.decode(deep, codec.Peer())


@pytest.mark.parametrize("body", [b"", b"{", b"[1] 2", b"NaN", b"[" * 100_000, b'{"a" 1}'])
def test_a_frame_that_is_not_one_json_value_is_refused(boundary: dict[str, ModuleType],
                                                       body: bytes) -> None:
    with pytest.raises(ValueError):
        boundary["codec"].load_frame_body(body)


def test_changes_made_in_place_are_applied_to_the_original(
        boundary: dict[str, ModuleType]) -> None:
    codec = boundary["codec"]
    cases: list[tuple[object, object]] = [
        ([1], [2, 3]), ({"a": 1}, {"b": 2}), ({1}, {2}), (bytearray(b"a"), b"bc"),
        (collections.deque([1]), collections.deque([2]))]
    for original, changed in cases:
        kept = id(original)
        assert codec.mutable(original)
        assert codec.update_in_place(original, changed)
        assert original == changed and id(original) == kept
    assert not codec.mutable((1, 2)) and not codec.update_in_place([1], (2,))


def test_a_peer_may_claim_values_that_look_plain(boundary: dict[str, ModuleType]) -> None:
    codec = boundary["codec"]

    class Claims(codec.Peer):  # type: ignore[name-defined, misc]
        def owns(self, value: object) -> bool:
            return isinstance(value, list) and type(value) is not list

        def export(self, value: object, depth: int) -> dict[str, object]:
            return {"h": {"id": 9}}

    class Stack(list):  # type: ignore[type-arg]
        pass

    assert codec.encode([Stack()], Claims()) == [{"h": {"id": 9}}]


@pytest.fixture
def link(boundary: dict[str, ModuleType]) -> Iterator[Any]:
    ours, theirs = socket.socketpair()
    made = boundary["client"].Link(theirs.detach(), "cand", "/work/candidate/cand.py", "",
                                   deadline=1e12, reserve_s=1.0)
    yield made
    # The Link owns its control socket and lives as long as the candidate's process does, so
    # it has no close(); a test's Link must not leave the socket to the garbage collector.
    made.control.close()
    if made.sock is not None:
        made.sock.close()
    ours.close()


def described(name: str, module: str, builtin: str, text: str = "boom") -> dict[str, object]:
    return {"name": name, "module": module, "builtin": builtin, "args": [text], "text": text,
            "attrs": {}, "frames": [[3, "f"]]}


@pytest.mark.parametrize(("name", "module", "builtin"), [
    ("KeyboardInterrupt", "builtins", "KeyboardInterrupt"),
    ("GeneratorExit", "builtins", "GeneratorExit"),
    ("Skipped", "_pytest.outcomes", "BaseException"),
    ("SkipTest", "unittest.case", "Exception"),  # an Exception, but pytest reads it as a skip
    ("Failed", "_pytest.outcomes", "BaseException"),
    ("Anything", "selfcorrect_boundary", "Exception"),
])
def test_outcomes_a_test_must_not_take_as_its_own_are_refused(
        boundary: dict[str, ModuleType], link: Any, name: str, module: str,
        builtin: str) -> None:
    made = link.rebuild(described(name, module, builtin))
    assert isinstance(made, boundary["errors"].CandidateRefused)
    assert not isinstance(made, Exception)  # pytest.raises(Exception) cannot swallow it


def test_sys_exit_in_a_call_is_the_candidates_answer(link: Any) -> None:
    """argparse on bad arguments: pytest.raises(SystemExit) catches it; uncaught, it fails
    the test (pytest reads no outcome into it)."""
    made = link.rebuild({**described("SystemExit", "builtins", "SystemExit"), "args": [2]})
    assert type(made) is SystemExit and made.code == 2
    forged = link.rebuild({**described("SystemExit", "mine", "SystemExit"), "args": [0]})
    assert type(forged) is not SystemExit


def test_the_candidates_exceptions_are_rebuilt_with_their_classes(
        boundary: dict[str, ModuleType], link: Any) -> None:
    link._exception_class({"name": "ParseError", "builtin": "ValueError", "bases": []})
    link._exception_class({"name": "EmptyError", "builtin": "ValueError",
                           "bases": ["ParseError"]})
    raised = link.rebuild({**described("EmptyError", "cand", "ValueError", "nothing"),
                           "attrs": {"line": 7, "_private": 1}})
    assert type(raised).__name__ == "EmptyError" and isinstance(raised, ValueError)
    assert isinstance(raised, link.exceptions["ParseError"])
    assert str(raised) == "nothing" and raised.line == 7 and not hasattr(raised, "_private")
    assert raised.__traceback__ is not None
    assert raised.__traceback__.tb_frame.f_code.co_filename == "/work/candidate/cand.py"
    assert type(link.rebuild(described("KeyError", "builtins", "KeyError"))) is KeyError
    odd = link.rebuild(described("Weird", "elsewhere.mod", "OSError"))
    assert isinstance(odd, OSError) and type(odd).__module__ == "elsewhere.mod"
    assert isinstance(link.rebuild("garbage"), boundary["errors"].ProtocolBroken)
