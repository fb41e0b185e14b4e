"""Run selfcorrect's pytest argv on the host, as the sandbox image runs it: with the image's
`_selfcorrect_collected` plugin (sandbox/pytest_collected.py) importable. The argv starts
`python3 -I -m pytest`, and -I keeps PYTHONPATH out, so the interpreter puts the plugin's
folder on sys.path itself before pytest reads its arguments."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

PLUGIN_SOURCE = Path(__file__).resolve().parents[1] / "sandbox" / "pytest_collected.py"


def plugin_folder(folder: Path) -> Path:
    """`folder` holding the plugin under the name the image gives it."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(PLUGIN_SOURCE, folder / "_selfcorrect_collected.py")
    return folder


def host_argv(argv: list[str], plugins: Path) -> list[str]:
    """`argv` (`python3 -I -m pytest ARGS`) for this interpreter, the plugin importable."""
    if argv[1:4] != ["-I", "-m", "pytest"]:
        raise ValueError(f"not selfcorrect's pytest argv: {argv[:4]}")
    boot = (f"import sys; sys.path.insert(0, {str(plugins)!r}); import pytest; "
            "sys.exit(pytest.console_main())")
    return [sys.executable, "-I", "-c", boot, *argv[4:]]
