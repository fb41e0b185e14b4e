"""The process boundary between a spec's frozen tests and the candidate they judge.

Inside a test container the runner (sandbox/runner.py, root with CAP_SETUID and CAP_SETGID
only) starts two processes under two uids: pytest over the frozen tests (`run_tests.py`),
and the candidate's module in a fresh interpreter of its own (`serve.py`). They share no
memory, no descriptors but one socket, and no private folder; only plain data crosses,
rebuilt as built-in types on the side that reads it (`codec.py`). What the tests get for
`import <candidate>` is a stand-in module whose functions, classes and objects forward every
use to the candidate's process (`proxies.py`); `==` on the tests' side is never the
candidate's to decide. See docs/sandbox.md ("The process boundary").

The errors below are how the boundary itself fails a test. They derive from BaseException,
not Exception, so `pytest.raises(Exception)` or a bare `except Exception` in a test cannot
take a candidate that crashed, hung or sent garbage for one that raised as asked.
"""

from __future__ import annotations


class BoundaryError(BaseException):
    """The call could not be completed across the boundary."""


class CandidateCrashed(BoundaryError):
    """The candidate's process ended (exit, signal, os._exit) during the call or its import."""


class CandidateHung(BoundaryError):
    """The candidate did not answer in time; its process was killed."""


class NotPlainData(BoundaryError):
    """A value that cannot cross the boundary (see the message for what and how to fix)."""


class ProtocolBroken(BoundaryError):
    """The candidate's process answered with something that is not a well-formed reply."""


class CandidateRefused(BoundaryError):
    """The candidate raised something a test must never see as its own outcome (SystemExit,
    KeyboardInterrupt, a pytest outcome such as skip, unittest's SkipTest)."""
