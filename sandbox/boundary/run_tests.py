"""pytest over a spec's frozen tests, with the candidate's module served from its own process.

Started by sandbox/runner.py as the tests' uid: `python3 -I -S -B run_tests.py PYTEST-ARGS`,
with SELFCORRECT_BOUNDARY in the environment (JSON: the control descriptor the runner
talks on, the module's name and path, where a copy of its source is, the deadline) and
the control socket open. See selfcorrect_boundary/__init__.py.
"""

from __future__ import annotations

import json
import os
import sys


def main() -> int:
    # -I leaves this folder off sys.path: ours for the import, and off it again after it, as
    # the tests import from their own folder (pytest puts it on sys.path), never from ours.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    from selfcorrect_boundary import startup

    startup.site_packages()
    from selfcorrect_boundary import client, plain, temporary, trusted

    sys.path.remove(here)
    trusted.install()
    settings = json.loads(os.environ.pop("SELFCORRECT_BOUNDARY"))
    source = ""
    try:
        with open(settings["source"], encoding="utf-8", errors="replace") as handle:
            source = handle.read()
    except OSError:
        pass
    link = client.Link(int(settings["control_fd"]), settings["module"], settings["path"],
                       source, float(settings["deadline"]), float(settings["reserve_s"]))
    sys.meta_path.insert(0, client.CandidateFinder(link))
    temporary.share()
    args = sys.argv[1:]
    first: dict | None = None
    if args[:1] == [plain.PLAIN_FLAG]:
        # The host found nothing of pytest's in the tests: a pass needs no pytest (plain.py).
        args = args[1:]
        options = plain.parse(args)
        if options is not None:
            outcome = plain.run_forked(options, link.forget_callbacks)
            if outcome["outcome"] == plain.PASSED:
                return 0
            link.reset()
            first = outcome if outcome["outcome"] == plain.FAILED else None
    temporary.share_pytests()
    import pytest
    from selfcorrect_boundary import plugin

    return plain.after_pytest(int(pytest.main(args, plugins=[plugin.Plugin(link)])), args,
                              first)


if __name__ == "__main__":
    sys.exit(main())
