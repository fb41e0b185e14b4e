"""Where the files shipped beside the code live: the sandbox image context and the templates.

A wheel carries them under selfcorrect_action/_data/ (see pyproject's force-include); a source
checkout (editable install, tests) has them at the repository root.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def resource_dir(name: str) -> Path:
    for candidate in (_PACKAGE_DIR / "_data" / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"selfcorrect's {name}/ folder is missing from {_PACKAGE_DIR}; reinstall the package"
    )


def sandbox_context() -> Path:
    return resource_dir("sandbox")


def templates_dir() -> Path:
    return resource_dir("templates")
