"""The candidate's module in an interpreter of its own, answering the tests over one socket.

Started by sandbox/runner.py as the candidate's uid, never forked from pytest:
`python3 -I -S -B serve.py FD MODULE-PATH MODULE-NAME EAGER` (EAGER 1: import the module at
once, while pytest starts; 0: when the tests first import it), or `serve.py FD --wait`,
started before the request arrives, which reads the module from the runner's first
message on FD. See selfcorrect_boundary/server.py.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":
    # -I leaves this folder off sys.path; server.main puts the candidate's first instead.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from selfcorrect_boundary import server, startup

    startup.site_packages()
    startup.site_builtins()
    sys.exit(server.main(sys.argv))
