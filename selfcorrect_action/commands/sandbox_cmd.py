"""`selfcorrect sandbox build`: make sure the sandbox image exists and is current;
`selfcorrect sandbox prune`: remove the ones that no longer are (sandbox/prune.py)."""

from __future__ import annotations

import contextlib

from rich.console import Console
from rich.markup import escape
from rich.status import Status

from selfcorrect_action.resources import sandbox_context
from selfcorrect_action.sandbox import engine
from selfcorrect_action.sandbox.image import context_hash, ensure_image, image_tag
from selfcorrect_action.sandbox.progress import NOTE


def build_image(*, force: bool) -> int:
    """Progress goes to stderr, the tag alone to stdout, so `$(selfcorrect sandbox build)`
    captures just the tag."""
    console = Console(stderr=True, highlight=False)
    with (contextlib.closing(engine.connect()) as client,
          console.status("checking the sandbox image") as status):
        tag = ensure_image(client, force=force, progress=_Reporter(console, status))
    print(tag)
    return 0


def prune(*, dry_run: bool) -> int:
    """What was removed (or would be) on stdout, one name a line, then what stayed."""
    from selfcorrect_action.sandbox.prune import prune_images

    current = image_tag(wanted_hash=context_hash(sandbox_context()))
    with contextlib.closing(engine.connect()) as client:
        pruned = prune_images(client, current_tag=current, dry_run=dry_run)
    verb = "would remove" if dry_run else "removed"
    for name in pruned.plan.remove if dry_run else pruned.removed:
        print(f"{verb} {name}")
    for name in pruned.in_use:
        print(f"kept {name}: a container still uses it")
    for name, why in pruned.plan.keep:
        print(f"kept {name}: {why}")
    if not pruned.plan.remove:
        print("nothing to remove")
    return 0


class _Reporter:
    """On a terminal: our notes and the build steps stay on screen, every other line only
    flashes by in the status line. Elsewhere (CI logs) every line is printed: there is no
    status line to show it, and the full log is what one reads after a failure."""

    def __init__(self, console: Console, status: Status) -> None:
        self._console = console
        self._status = status

    def __call__(self, line: str) -> None:
        if line.startswith(NOTE):
            self._console.print(f"[bold]{escape(line[len(NOTE) :])}[/bold]")
        elif line.startswith("Step ") or not self._console.is_terminal:
            self._console.print(escape(line), style="dim", soft_wrap=True)
        else:
            self._status.update(escape(line[: self._console.width - 4]))
