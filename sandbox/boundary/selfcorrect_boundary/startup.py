"""Start-up of the boundary's two interpreters, which run with -S: the site module costs
~45 ms per interpreter under gVisor, and all it gives them is the image's dist-packages
folders on sys.path (and, to the candidate, the exit() and quit() builtins)."""

from __future__ import annotations

import os
import sys

_VERSION = f"python{sys.version_info[0]}.{sys.version_info[1]}"
# Debian's site folders, in the order its site.py puts them (what `python3` sees).
SITE_FOLDERS = (f"/usr/local/lib/{_VERSION}/dist-packages", "/usr/lib/python3/dist-packages",
                f"/usr/lib/{_VERSION}/dist-packages")


def site_packages() -> None:
    for folder in SITE_FOLDERS:
        if folder not in sys.path and os.path.isdir(folder):
            sys.path.append(folder)


def site_builtins() -> None:
    """What site adds to builtins for a script: exit(), quit() and help()."""
    import _sitebuiltins
    import builtins

    builtins.exit = _sitebuiltins.Quitter("exit", "Ctrl-D (i.e. EOF)")
    builtins.quit = _sitebuiltins.Quitter("quit", "Ctrl-D (i.e. EOF)")
    builtins.help = _sitebuiltins._Helper()
