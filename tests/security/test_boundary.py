"""The tests' boundary (sandbox/boundary/, "The tests' boundary" in sandbox/runner.py), under
runc and runsc: the frozen tests and the candidate run as two users in two processes, the
candidate's a fresh interpreter; the candidate cannot read or change the tests, their
folder or their report, cannot signal, trace or read the tests' process, and its exit,
crash or hang reaches the test as an error of that call. The widening it needs (a runner
that starts as root with CAP_SETUID and CAP_SETGID) runs nothing as root and is refused
for anything but a boundary.

Each property is asserted from inside: the candidate tries, the frozen test checks that it
could not, and the run must report every test passed.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from selfcorrect_action.choices import Runtime
from selfcorrect_action.evaluation.junit import (
    PYTEST_JUNIT_PATH,
    boundary_pytest_argv,
    parse_junit_report,
)
from selfcorrect_action.evaluation.spec_tests import judge_test_run
from selfcorrect_action.sandbox import lifecycle
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.docker_engine import DockerEngine
from selfcorrect_action.sandbox.execution import execute
from selfcorrect_action.sandbox.models import (
    Boundary,
    ExecutionRequest,
    ExecutionResult,
    InputFile,
    Limits,
)

pytestmark = pytest.mark.docker

CANDIDATE = '''
import ctypes, errno, os, signal, sys
def attempt(action, *args):
    """The errno an action failed with, or "done"."""
    try:
        action(*args)
    except OSError as exc:
        return exc.errno
    return "done"


def read(path):
    return attempt(lambda: open(path, "rb").read(1))


def write(path):
    return attempt(lambda: open(path, "w").write("forged"))


def listing(path):
    return attempt(os.listdir, path)


def replace(path):
    return attempt(os.replace, path + ".x", path) if write(path + ".x") == "done" else "no"


def remove(path):
    return attempt(os.unlink, path)


def kill(pid, number):
    return attempt(os.kill, pid, number)


def ptrace(pid):
    libc = ctypes.CDLL(None, use_errno=True)
    return "done" if libc.ptrace(16, pid, None, None) == 0 else ctypes.get_errno()


def identity():
    with open("/proc/self/status") as handle:
        fields = dict(line.split(":", 1) for line in handle if ":" in line)
    return {"uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(),
            "caps": int(fields["CapEff"].strip(), 16), "ppid": os.getppid(),
            "pid": os.getpid(), "cwd": os.getcwd(), "file": __file__}


def users_of_processes():
    found = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/status") as handle:
                    for line in handle:
                        if line.startswith("Uid:"):
                            found[int(pid)] = int(line.split()[1])
            except OSError:
                continue
    return found


def environ_names(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            data = handle.read()
    except OSError as exc:
        return exc.errno
    return sorted(item.split(b"=", 1)[0].decode() for item in data.split(b"\\0") if item)


def writable_descriptors(pid):
    """Another process's descriptors this process can open for writing (none when it may
    not even list them)."""
    found = []
    try:
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return found
    for fd in descriptors:
        try:
            with open(f"/proc/{pid}/fd/{fd}", "wb") as handle:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target != "/dev/null":
                    found.append(f"{fd}:{target}")
        except OSError:
            continue
    return found


def frames():
    names, frame = [], sys._getframe()
    while frame is not None:
        names.append(frame.f_code.co_name)
        frame = frame.f_back
    return names


def modules():
    return sorted(name for name in sys.modules if "test" in name or "pytest" in name)


def write_shared(name):
    with open(name, "w") as out:
        out.write("from the candidate")
    return name
'''

TESTS = '''
import errno, os, signal

import candidate as c

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
DENIED = (errno.EACCES, errno.EPERM)


def test_two_users_no_capabilities_nothing_as_root():
    me = c.identity()
    assert me["uid"] != os.getuid()
    assert 0 not in (me["uid"], me["gid"], os.getuid(), os.getgid())
    assert me["groups"] == [] and os.getgroups() == []
    assert me["caps"] == 0
    with open("/proc/self/status") as handle:
        assert [l for l in handle if l.startswith("CapEff")][0].split()[1] == "0" * 16
    users = c.users_of_processes()
    assert {pid for pid, uid in users.items() if uid == 0} <= {1}


def test_the_candidate_is_a_fresh_interpreter_started_by_the_runner():
    me = c.identity()
    assert me["ppid"] == 1 and me["ppid"] != os.getpid()
    assert not any(name.startswith("test") for name in c.frames())
    assert c.modules() == []


def test_the_candidate_cannot_read_or_list_the_tests():
    assert c.read(__file__) in DENIED
    assert c.listing(TESTS_DIR) in DENIED
    assert c.read(os.path.join(TESTS_DIR, ".selfcorrect", "candidate-source.py")) in DENIED
    assert c.listing("/work") in DENIED


def test_the_report_being_written_cannot_be_opened_by_the_candidate():
    # The report's folder: the one place of the tests' folder they may write (it is sealed).
    with open(os.path.join(TESTS_DIR, ".selfcorrect", "held-report.xml"), "w") as held:
        held.write("<ours/>")
        held.flush()
        assert str(held.fileno()) not in c.writable_descriptors(os.getpid())


def test_the_tests_own_folder_is_sealed_but_for_the_report():
    for path in (__file__, os.path.join(TESTS_DIR, "numpy.py")):
        try:
            open(path, "a").close()
        except PermissionError:
            continue
        raise AssertionError(f"the tests' process could write {path}")


def test_the_candidate_cannot_write_the_tests_or_their_report():
    assert c.write(__file__) in DENIED
    assert c.write(os.path.join(TESTS_DIR, ".selfcorrect", "junit.xml")) in DENIED
    assert c.write(os.path.join(TESTS_DIR, "conftest.py")) in DENIED


def test_the_shared_inputs_cannot_be_changed_replaced_or_removed():
    assert c.write("data.txt") in DENIED
    assert c.remove("data.txt") in DENIED
    assert open("data.txt").read() == "the input"
    assert open(os.path.join(TESTS_DIR, "data.txt")).read() == "the input"


def test_what_the_candidate_writes_in_the_shared_folder_the_tests_read():
    name = c.write_shared("out.txt")
    assert open(name).read() == "from the candidate"


def test_the_candidate_cannot_reach_the_tests_process():
    me = os.getpid()
    assert c.read(f"/proc/{me}/mem") in DENIED
    # gVisor shows another user's environment (Linux does not); it holds nothing but
    # these, set by the image and the runner: no secret ever enters a sandbox.
    shown = c.environ_names(me)
    assert shown in DENIED or set(shown) <= {
        "LANG", "HOME", "PATH", "HOSTNAME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME",
        "MPLCONFIGDIR", "MPLBACKEND", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED",
        "PYTEST_ADDOPTS", "SELFCORRECT_BOUNDARY"}, shown
    # gVisor lists another user's descriptors (Linux does not); none opens for writing
    # but /dev/null.
    assert c.listing(f"/proc/{me}/fd") in DENIED or c.writable_descriptors(me) == []
    assert c.read(f"/proc/{me}/cwd/data.txt") in DENIED
    assert c.ptrace(me) in DENIED
    for number in (signal.SIGSTOP, signal.SIGKILL, signal.SIGTERM):
        assert c.kill(me, number) in DENIED
        assert c.kill(1, number) in DENIED
    c.kill(-1, signal.SIGKILL)  # everything the candidate's uid may signal: not us
    assert c.identity()["uid"] != os.getuid()
'''

CRASHES = '''
import os, sys, time


def fine():
    return "fine"


def exit_now():
    os._exit(0)


def sys_exit():
    sys.exit(0)


def segfault():
    import ctypes
    ctypes.string_at(0)


def hang():
    time.sleep(3600)
'''

CRASH_TESTS = '''
import pytest
import crashes


def test_exit():
    crashes.exit_now()


def test_after_exit():
    assert crashes.fine() == "fine"


def test_sys_exit_is_not_an_exception():
    with pytest.raises(Exception):
        crashes.sys_exit()


def test_segfault():
    crashes.segfault()


def test_after_segfault():
    assert crashes.fine() == "fine"


def test_hang():
    crashes.hang()
'''


def _request(candidate: str, module: str, tests: str, runtime: Runtime, *, timeout_s: float = 30,
             extra: tuple[InputFile, ...] = ()) -> ExecutionRequest:
    return ExecutionRequest(
        argv=boundary_pytest_argv(["test_it.py"]), timeout_s=timeout_s,
        runtime=runtime,
        files=[InputFile(path=f"{module}.py", data=textwrap.dedent(candidate).encode()),
               InputFile(path="test_it.py", data=textwrap.dedent(tests).encode()), *extra],
        boundary=Boundary(candidate=f"{module}.py", module=module, tests=["test_it.py"]),
        artifact_paths=[PYTEST_JUNIT_PATH])


@pytest.fixture(params=["cold", "warm"])
def boundary_box(request: pytest.FixtureRequest, docker_engine: DockerEngine, sandbox_image: str,
                 runtime: Runtime) -> Iterator[Callable[[ExecutionRequest, Path],
                                                       ExecutionResult]]:
    """Run a boundary request with the tests' pytest started cold, or warm: their
    interpreter started before the request, as their uid, with pytest imported (issue 20),
    asserted to have served it."""
    warm = request.param == "warm"
    # One container per request: the fixture fills the pool itself before each.
    with Sandbox(docker_engine, sandbox_image, pool_size=1 if warm else 0, warm=warm,
                 refill="never") as box:

        def run(request: ExecutionRequest, folder: Path) -> ExecutionResult:
            request = request.model_copy(update={"warm_wait_s": 60})
            if warm:
                box.warm(request.limits, request.runtime, boundary=True)
                box.settle()
            result = box.run(request, folder)
            assert result.start == ("warm" if warm else "cold"), result
            return result

        yield run


def test_the_candidate_cannot_reach_the_tests(boundary_box, runtime: Runtime, tmp_path: Path
                                              ) -> None:
    request = _request(CANDIDATE, "candidate", TESTS, runtime,
                       extra=(InputFile(path="data.txt", data=b"the input"),))
    result = boundary_box(request, tmp_path / "artifacts")
    verdict = judge_test_run(result, candidate="candidate.py")
    assert verdict.passed, result.stdout.text[-3000:]
    assert verdict.totals.passed == TESTS.count("\ndef test_")


def test_a_shared_input_replaced_under_the_tests_fails_the_run(
        boundary_box, runtime: Runtime, tmp_path: Path) -> None:
    """gVisor lets a rename replace another user's file in a sticky folder (Linux does not):
    under either runtime a swapped input is found when the tests end, and the run fails
    whatever they concluded from it."""
    tests = """
        import candidate as c


        def test_swap():
            c.replace(os.path.abspath("data.txt"))
            assert True
        """
    request = _request(CANDIDATE, "candidate", "import os\n" + textwrap.dedent(tests),
                       runtime, extra=(InputFile(path="data.txt", data=b"the input"),))
    result = boundary_box(request, tmp_path / "artifacts")
    verdict = judge_test_run(result, candidate="candidate.py")
    if runtime == "runc":
        assert verdict.passed and result.replaced_inputs == [], verdict.evidence
    else:
        assert result.replaced_inputs == ["data.txt"]
        assert not verdict.passed and "replaced" in verdict.evidence


def test_exit_crash_and_hang_are_errors_of_the_call_and_later_tests_still_run(
        boundary_box, runtime: Runtime, tmp_path: Path) -> None:
    request = _request(CRASHES, "crashes", CRASH_TESTS, runtime, timeout_s=12)
    result = boundary_box(request, tmp_path / "artifacts")
    junit = next(a for a in result.artifacts if a.path == PYTEST_JUNIT_PATH)
    assert junit.host_path is not None
    outcomes = {o.test_id.split("::")[1]: o for o in parse_junit_report(junit.host_path).outcomes}
    assert {name for name, o in outcomes.items() if o.outcome == "passed"} == {
        "test_after_exit", "test_after_segfault"}
    assert "CandidateCrashed" in outcomes["test_exit"].message
    assert "exit status 0" in outcomes["test_exit"].message
    assert outcomes["test_sys_exit_is_not_an_exception"].message.startswith("SystemExit")
    assert "signal 11" in outcomes["test_segfault"].message
    assert "CandidateHung" in outcomes["test_hang"].message
    # pytest itself ended normally, with its own status, inside the time limit.
    assert result.exit_code == 1 and not result.timed_out
    verdict = judge_test_run(result, candidate="crashes.py")
    assert not verdict.passed and verdict.category is not None


def test_a_boundary_container_runs_no_single_execution_and_a_single_one_no_boundary(
        docker_engine, sandbox, sandbox_image: str, runtime: Runtime, tmp_path: Path) -> None:
    """The widening is used for the boundary only: the runner of a root container refuses a
    plain request (it would run the script as root), and the runner of an ordinary
    container refuses a boundary request (it cannot split the uids)."""
    boundary = _request(CANDIDATE, "candidate", TESTS, runtime)
    single = ExecutionRequest(argv=["python3", "-c", "print(1)"], runtime=runtime)
    for key_boundary, request, refusal in (
            (True, single, "never runs as root"),
            (False, boundary, "needs its own container")):
        key = sandbox.key(Limits(), runtime, boundary=key_boundary)
        prepared = lifecycle.prepare(docker_engine, key, session=sandbox.session,
                                     owner=sandbox.owner, idle_timeout_s=60)
        try:
            with pytest.raises(Exception, match=refusal):
                execute(prepared, request, tmp_path / f"artifacts-{key_boundary}")
        finally:
            lifecycle.destroy(prepared)


BOMBS = {
    "fork": "import os\nwhile True:\n    try:\n        os.fork()\n"
            "    except OSError:\n        pass\n",
    "memory": "hoard = []\nwhile True:\n    hoard.append(bytearray(16 * 1024 * 1024))\n",
}


@pytest.mark.parametrize("bomb", list(BOMBS))
def test_a_bomb_at_import_ends_the_run_as_a_failure_and_leaves_nothing(
        sandbox, runtime: Runtime, tmp_path: Path, bomb: str) -> None:
    """The candidate's uid shares the container's limits with the tests: a fork or memory
    bomb in its process cannot make the run pass, hang the client, or outlive the run (the
    sandbox fixture checks that no container is left)."""
    tests = "import bombed\n\n\ndef test_it():\n    assert bombed.VALUE == 1\n"
    request = _request(BOMBS[bomb] + "VALUE = 1\n", "bombed", tests, runtime, timeout_s=10)
    result = sandbox.run(request, tmp_path / "artifacts")
    verdict = judge_test_run(result, candidate="bombed.py")
    assert not verdict.passed and verdict.category is not None


# What a second red-team review got past the boundary, each a regression test now.
FORGERIES = {
    # A star import handed pytest the candidate's pytest_plugins: pytest then imported a
    # module the candidate wrote into a shared folder (then linked, whole, into the tests'
    # folder on their sys.path).
    "plugins_through_a_star_import": ('''
import os
__all__ = ["add", "pytest_plugins"]
PLUGIN = """
import pytest
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    report.outcome = "passed"
    report.longrepr = None
"""
for folder in ("data", "/work/shared/data", "/work/tests/data"):
    try:
        with open(os.path.join(folder, "planted_plugin.py"), "w") as out:
            out.write(PLUGIN)
    except OSError:
        pass
pytest_plugins = ["data.planted_plugin"]


def add(a, b):
    return a - b
''', '''
from cand import *


def test_add():
    assert add(2, 2) == 4
'''),
    # The environment followed the tests' into the candidate's process, pytest's own
    # PYTEST_CURRENT_TEST with it: a parametrized test's id spells its expected value.
    "expected_value_from_the_environment": ('''
import ast, os, re


def add(a, b):
    found = re.search(r"\\[(.*)\\] \\(", os.environ.get("PYTEST_CURRENT_TEST", ""))
    return ast.literal_eval(found.group(1).split("-")[-1]) if found else None
''', '''
import pytest
from cand import add


@pytest.mark.parametrize(("a", "b", "total"), [(1, 2, 3), (2, 5, 7)])
def test_add(a, b, total):
    assert add(a, b) == total
'''),
    # The candidate's own server, patched to send StopIteration for a call: the tests'
    # side must refuse it itself.
    "forged_stop_iteration": ('''
import sys
server = sys.modules["selfcorrect_boundary.server"]
plain = server.Server.perform


def perform(self, message):
    try:
        return plain(self, message)
    except StopIteration:
        return {"raised": {"name": "StopIteration", "module": "builtins",
                           "builtin": "StopIteration", "args": [], "text": "",
                           "attrs": {}, "frames": []}}


server.Server.perform = perform


def add(a, b):
    raise StopIteration
''', '''
from cand import add

CASES = [((1, 2), 3), ((2, 5), 7)]


def test_add():
    assert all(map(lambda case: add(*case[0]) == case[1], CASES))
'''),
}


@pytest.mark.parametrize("forgery", list(FORGERIES))
def test_a_forgery_the_second_review_found_fails(sandbox, runtime: Runtime, tmp_path: Path,
                                                 forgery: str) -> None:
    candidate, tests = FORGERIES[forgery]
    request = _request(candidate, "cand", tests, runtime,
                       extra=(InputFile(path="data/values.csv", data=b"a,b\n1,2\n"),))
    result = sandbox.run(request, tmp_path / "artifacts")
    verdict = judge_test_run(result, candidate="cand.py")
    assert not verdict.passed, result.stdout.text[-2000:]


# Issue 34: a zone name the tests' side looked up opened a file the candidate chose. pandas
# hands "dateutil/..." names to dateutil, which opens the path after "dateutil/" or
# "dateutil/:", so whether a reply was refused told the candidate whether a file the tests'
# uid can read exists. This candidate rewrites its own encoder to send any name it likes.
ZONE_CANDIDATE = '''
import datetime, sys, zoneinfo

# numpy and pandas are imported where they are used: a refused reply ends this process,
# and each forged case starts a fresh one.
codec = sys.modules["selfcorrect_boundary.codec"]
honest_encode = codec.encode
NOON_UTC_NS = 1717243200 * 10**9


class Forged:
    def __init__(self, shape, name):
        self.shape, self.name = shape, name


def encode(value, peer, depth=0):
    if not isinstance(value, Forged):
        return honest_encode(value, peer, depth)
    if value.shape == "pdts":
        return {"pdts": [NOON_UTC_NS, value.name]}
    if value.shape == "zi":
        return {"dt": ["2024-06-01T14:00:00", {"zi": value.name}]}
    import numpy as np

    nanos = honest_encode(np.array([NOON_UTC_NS], dtype="<i8"), peer)
    return {"pds": [None, ["datetime64tz", [value.name, nanos]], ["range", [0, 1, 1], None]]}


codec.encode = encode


def forged(shape, name):
    return Forged(shape, name)


def in_the_database():
    import pandas as pd

    return (pd.Timestamp("2024-06-01 12:00", tz="Europe/Paris"),
            pd.Series(pd.date_range("2024-06-01", periods=2, tz="Etc/GMT-2")),
            datetime.datetime(2024, 6, 1, tzinfo=zoneinfo.ZoneInfo("UTC")))


def outside_the_database():
    import pandas as pd

    with open("/usr/share/zoneinfo/Europe/Paris", "rb") as handle:
        zone = zoneinfo.ZoneInfo.from_file(handle, key="Not/AZone")
    return pd.Timestamp("2024-06-01 12:00", tz=zone)
'''

ZONE_TESTS = '''
import datetime, os, shutil, sys, tempfile

import pandas as pd
import pytest

import cand

# A real zone file only the tests' uid can read, at a path short enough for the old check.
FOLDER = tempfile.mkdtemp(prefix="z")
PROBE = os.path.join(FOLDER, "probe")
shutil.copyfile("/usr/share/zoneinfo/Europe/Paris", PROBE)
OPENED = []
sys.addaudithook(lambda event, args: OPENED.append(args[0])
                 if event == "open" and str(args[0]).startswith(FOLDER) else None)


@pytest.mark.parametrize(("shape", "name"), [
    pytest.param("pdts", "dateutil/:" + PROBE, id="pdts-colon-probe"),
    pytest.param("pdts", "dateutil/:/etc/passwd", id="pdts-passwd"),
    pytest.param("pdts", "dateutil/:/nonexistent", id="pdts-missing"),
    pytest.param("datetime64tz", "dateutil/:" + PROBE, id="column-colon-probe"),
    pytest.param("zi", "posix/Europe/Paris", id="zi-outside-the-database"),
])
def test_forged(shape, name):
    OPENED.clear()
    try:
        cand.forged(shape, name)
    finally:
        assert OPENED == [], OPENED


def test_zones_of_the_database_cross():
    stamp, column, moment = cand.in_the_database()
    assert stamp == pd.Timestamp("2024-06-01 10:00", tz="UTC")
    assert str(stamp.tz) == "Europe/Paris" and str(column.dt.tz) == "Etc/GMT-2"
    assert moment == datetime.datetime(2024, 6, 1, tzinfo=datetime.timezone.utc)


def test_a_zone_named_outside_the_database_is_refused_where_it_is_sent():
    cand.outside_the_database()
'''


def test_a_forged_zone_name_is_refused_before_the_tests_look_it_up(
        sandbox, runtime: Runtime, tmp_path: Path) -> None:
    """Whatever name a reply carries, the tests' side refuses it, with one message for a
    file that exists and one that does not, before anything opens the file it names; an
    honest candidate's zone outside the database is refused in its own process."""
    request = _request(ZONE_CANDIDATE, "cand", ZONE_TESTS, runtime)
    result = sandbox.run(request, tmp_path / "artifacts")
    junit = next(a for a in result.artifacts if a.path == PYTEST_JUNIT_PATH)
    assert junit.host_path is not None, result.stdout.text[-3000:]
    outcomes = {o.test_id.split("::")[1]: o for o in parse_junit_report(junit.host_path).outcomes}
    assert outcomes.pop("test_zones_of_the_database_cross").outcome == "passed"
    refused = outcomes.pop("test_a_zone_named_outside_the_database_is_refused_where_it_is_sent")
    assert refused.outcome == "failed"
    assert "NotPlainData: a time zone named 'Not/AZone' cannot cross" in refused.message
    assert len(outcomes) == 5
    for name, outcome in outcomes.items():
        text = outcome.message + outcome.detail
        assert outcome.outcome == "failed", (name, outcome)
        assert "ProtocolBroken" in text, (name, text)
        assert "is not a time zone name of the zone database" in text, (name, text)
