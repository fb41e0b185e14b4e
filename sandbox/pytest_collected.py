"""Records in pytest's junit report what was collected and what never ran (issue 34).

Installed in the image as the module `_selfcorrect_collected` and loaded with
`-p _selfcorrect_collected` wherever selfcorrect runs pytest: the frozen spec tests
(evaluation/junit.py's argv) and a repository's own suite (repair/test_run.py, through
PYTEST_ADDOPTS). pytest's report lists only the tests that reported something: a test that
calls `pytest.exit(..., returncode=0)` ends the session with exit status 0 and a report in
which the tests after it simply do not appear, so a wrong answer would pass. The host reads
these properties (evaluation/run_record.py) and passes a run only when every collected test
ran.

Properties written (junit `<properties>` of the test suite):
- `selfcorrect.collected`: how many tests were collected (after deselection);
- `selfcorrect.not_run`: how many of them never finished (no teardown reported);
- `selfcorrect.not_run_ids`: the first of those node ids, one a line;
- `selfcorrect.stopped`: why the session ended early, if it did (pytest.exit, Ctrl-C,
  -x/--maxfail).

Works with pytest 7 to 9 and pytest-xdist (the controller learns the collection from its
workers). It reads nothing of the tests and changes no outcome: it only reports.
"""

from __future__ import annotations

from typing import Any

import pytest

MAX_IDS = 10
_PREFIX = "selfcorrect."


class _Recorder:
    def __init__(self) -> None:
        self.collected: list[str] = []
        self.reported: set[str] = set()
        self.stopped = ""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: Any) -> None:
        if not self.collected:
            # A path given twice (`pytest . tests/test_a.py`) collects its tests twice under
            # one node id: a test is one test, however often it was collected.
            self.collected = list(dict.fromkeys(item.nodeid for item in session.items))

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        # Each worker collects the whole session; the controller collects nothing itself.
        known = set(self.collected)
        self.collected.extend(nodeid for nodeid in ids if nodeid not in known)

    def pytest_runtest_logreport(self, report: Any) -> None:
        # A test has run when its teardown reported: a setup that failed still tears down,
        # a pytest.exit in the call or the setup never does.
        if report.when == "teardown":
            self.reported.add(report.nodeid)

    def pytest_keyboard_interrupt(self, excinfo: Any) -> None:
        # pytest calls this for pytest.exit too: the session ends, whatever its exit status.
        name = getattr(excinfo, "typename", "") or "interrupted"
        message = getattr(getattr(excinfo, "value", None), "msg", "") or str(excinfo.value)
        self.stopped = f"{name}: {message}"[:300]

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: Any) -> None:
        xml = _log_xml(session.config)
        if xml is None:  # no junit report asked for, or an xdist worker
            return
        missing = [nodeid for nodeid in self.collected if nodeid not in self.reported]
        stopped = self.stopped or _stop_reason(session)
        xml.add_global_property(_PREFIX + "collected", str(len(self.collected)))
        xml.add_global_property(_PREFIX + "not_run", str(len(missing)))
        if missing:
            xml.add_global_property(_PREFIX + "not_run_ids", "\n".join(missing[:MAX_IDS]))
        if stopped:
            xml.add_global_property(_PREFIX + "stopped", stopped)


def _stop_reason(session: Any) -> str:
    for reason in (session.shouldfail, session.shouldstop):
        if reason:
            return str(reason)[:300]
    return ""


def _log_xml(config: Any) -> Any:
    """pytest's junit writer: in its stash since pytest 7, in `_store` before."""
    try:
        from _pytest.junitxml import xml_key
    except ImportError:
        return None
    stash = getattr(config, "stash", None) or getattr(config, "_store", None)
    if stash is None:
        return None
    try:
        return stash[xml_key]
    except KeyError:
        return None


def pytest_configure(config: Any) -> None:
    config.pluginmanager.register(_Recorder(), "selfcorrect-collected")
