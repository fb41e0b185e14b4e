"""Which modules a warm interpreter imports before its script arrives (sandbox/warm.py).

A pooled container starts before the attempt it will serve is written, so what it preloads
comes from what the task's latest script imported (an AST scan: cheap, and no code is run),
or a default for a task's first attempt. Only libraries of the sandbox image that are worth
it and safe to import early are candidates: big (seconds of imports under gVisor), and
reading nothing at import that a request could change without the runner noticing (the
variables it does watch are in WARM_UNSAFE_ENV in sandbox/runner.py). A module the script
imports that was not preloaded simply loads as it would cold; one preloaded that it does not
import costs memory, which is why a warm attempt that runs out of memory or time with such a
module is run again cold (client.py) and a small memory limit preloads nothing.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from selfcorrect_action.sandbox.models import ExecutionRequest, Limits

# Top-level packages of the sandbox image worth preloading.
PRELOADABLE = frozenset({
    "numpy", "pandas", "matplotlib", "PIL", "scipy", "sklearn", "openpyxl", "lxml", "bs4",
    "yaml", "requests", "dateutil", "tabulate",
})
# A task's first attempt: the data-script libraries most scripts import.
DEFAULT_PRELOAD = ("numpy", "pandas", "matplotlib", "matplotlib.pyplot", "PIL", "PIL.Image")
# Below this memory limit nothing is preloaded: pandas and matplotlib alone hold about
# 110 MB, which a script that does not import them would lose.
MIN_MEMORY_MB = 384
MAX_MODULES = 24
# How a task's words name a preloadable package (its import name, or what people call it),
# and what a warm interpreter then imports for it.
_NAMED = (
    (r"numpy", ("numpy",)),
    (r"pandas", ("pandas",)),
    (r"matplotlib|pyplot", ("matplotlib", "matplotlib.pyplot")),
    (r"PIL|Pillow", ("PIL", "PIL.Image")),
    (r"scipy", ("scipy",)),
    (r"sklearn|scikit-learn", ("sklearn",)),
    (r"openpyxl", ("openpyxl",)),
    (r"lxml", ("lxml",)),
    (r"bs4|BeautifulSoup", ("bs4",)),
    (r"yaml|PyYAML", ("yaml",)),
    (r"requests", ("requests",)),
    (r"dateutil", ("dateutil",)),
    (r"tabulate", ("tabulate",)),
)


def imports_of(source: str) -> list[str]:
    """The dotted modules a source imports anywhere (functions included), in order, without
    duplicates: `from a.b import c` gives "a.b" and "a.b.c" (c may be a submodule). Empty
    for a source that does not parse."""
    return _imports(source) or []


def _imports(source: str) -> list[str] | None:
    """imports_of's list, None for a source that does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    found: dict[str, None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                _add_with_parents(found, alias.name)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            _add_with_parents(found, node.module)
            for alias in node.names:
                if alias.name != "*":
                    found.setdefault(f"{node.module}.{alias.name}")
    return list(found)


def _add_with_parents(found: dict[str, None], dotted: str) -> None:
    parts = dotted.split(".")
    for end in range(1, len(parts) + 1):
        found.setdefault(".".join(parts[:end]))


def preloadable(modules: Iterable[str]) -> tuple[str, ...]:
    """The modules among these that a warm interpreter may import early."""
    chosen = [name for name in modules if name.split(".")[0] in PRELOADABLE
              and all(part.isidentifier() for part in name.split("."))]
    return tuple(chosen[:MAX_MODULES])


def script_source(request: ExecutionRequest) -> str | None:
    """The source of the script a request runs as `python3 [--] SCRIPT`, or None when it
    runs anything else (frozen tests, a repository's test command)."""
    argv = request.argv
    script = argv[2:3] if argv[1:2] == ["--"] else argv[1:2]
    if argv[0] != "python3" or not script or script[0].startswith("-"):
        return None
    for item in request.files:
        if item.path == script[0]:
            return item.data.decode("utf-8", "replace")
    return None


def next_preload(request: ExecutionRequest) -> tuple[str, ...] | None:
    """What the containers made after this request should preload: what its script imports,
    () for a request a warm interpreter would not serve, None to keep the current choice
    (a frozen tests' run says nothing about the next script)."""
    if request.boundary is not None:
        return None
    source = script_source(request)
    if source is None or not request.warm:
        return ()
    imported = _imports(source)
    if imported is None:
        return None  # its fix will most likely import what the last script that parsed did
    return preloadable(imported)


def named_in(text: str) -> tuple[str, ...]:
    """The preloadable modules a task's text names (`import numpy as np` in its code, or
    "use pandas" in its words): a function's first attempt imports what its task names, not
    the data libraries a script's would. Whole words only: "requests" in "HTTP requests"
    counts (a wrong guess costs a container's idle imports, nothing else)."""
    chosen: list[str] = []
    for pattern, modules in _NAMED:
        if re.search(rf"(?<![\w.])(?:{pattern})(?!\w)", text, re.IGNORECASE):
            chosen.extend(modules)
    return preloadable(chosen)


def for_limits(preload: tuple[str, ...], limits: Limits) -> tuple[str, ...]:
    """Under MIN_MEMORY_MB the warm interpreter imports nothing: it still saves the script
    an interpreter's start, at no memory the script would not use itself."""
    return preload if limits.memory_mb >= MIN_MEMORY_MB else ()


def worth_waiting_for(preloaded: Iterable[str], source: str | None) -> bool:
    """Whether a script should wait for a warm interpreter that preloads `preloaded`: not
    when it imports none of them (its own start is then a bare interpreter's, and the
    container's imports, still running or done, would only take its CPU and memory). A
    source that does not parse says nothing of what its fix will import: it waits."""
    chosen = list(preloaded)
    imported = _imports(source) if source is not None else None
    return not chosen or imported is None or any(name in imported for name in chosen)


def unused(preloaded: Iterable[str], source: str) -> list[str]:
    """Preloaded modules the script does not import itself (it may still through another)."""
    wanted = set(imports_of(source))
    return [name for name in preloaded if name not in wanted]
