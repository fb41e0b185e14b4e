"""pytest over a batch item's tests after their plain run failed (sandbox/runner.py's
_plain_here), in a container whose zygote did not import pytest: `python3 -I batch_pytest.py
PYTEST-ARGS`, the plain run's failure in SELFCORRECT_FIRST_FAILURE (JSON). As `python3 -I -m
pytest`, except that pytest's pass does not stand when the plain run had seen a failure
(selfcorrect_boundary/plain.py's record_first_failure)."""

from __future__ import annotations

import json
import os
import sys


def main() -> int:
    first = json.loads(os.environ.pop("SELFCORRECT_FIRST_FAILURE"))
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    from selfcorrect_boundary import plain

    sys.path.remove(here)
    import pytest

    return plain.after_pytest(int(pytest.console_main()), sys.argv[1:], first)


if __name__ == "__main__":
    sys.exit(main())
