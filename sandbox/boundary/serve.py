"""The candidate's module in an interpreter of its own, answering the tests over one socket.

Started by sandbox/runner.py as the candidate's uid, never forked from pytest:
`python3 -I -B serve.py FD MODULE-PATH MODULE-NAME EAGER` (EAGER 1: import the module at
once, while pytest starts; 0: when the tests first import it). See
selfcorrect_boundary/server.py.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":
    # -I leaves this folder off sys.path; server.main puts the candidate's first instead.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from selfcorrect_boundary import server

    sys.exit(server.main(sys.argv))
