"""What every mode of the benchmark works with: the options, the engine and the sandbox
image, results.json, and a progress bar on stderr."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from selfcorrect_action.bench.options import BenchOptions
from selfcorrect_action.bench.problems import Problem
from selfcorrect_action.bench.results import Store
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.runs.settings import RunSettings


class Bar:
    """One stage's progress: advance() from any thread."""

    def __init__(self, progress: Progress | None, task: Any) -> None:
        self._progress, self._task = progress, task
        self._lock = threading.Lock()

    def advance(self, count: int = 1) -> None:
        if self._progress is not None:
            with self._lock:
                self._progress.advance(self._task, count)


@dataclass
class BenchContext:
    options: BenchOptions
    engine: Any  # DockerEngine: the Engine seam, and its SDK client for the bare loop
    image: str
    store: Store
    problems: list[Problem]
    console: Console = field(default_factory=lambda: Console(stderr=True, highlight=False))
    secrets: list[str] = field(default_factory=list)
    # Mode model's run: the same settings table, and the token a signal sets, as any run.
    run_settings: RunSettings = field(default_factory=RunSettings)
    cancel: CancelToken = field(default_factory=CancelToken)

    @contextmanager
    def bar(self, label: str, total: int) -> Iterator[Bar]:
        """A progress bar over `total` items on stderr (a plain line where it is not a
        terminal: CI logs)."""
        if not self.console.is_terminal:
            self.console.print(f"{label}: {total} to do", markup=False, highlight=False)
            yield Bar(None, None)
            return
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn())
        with Progress(*columns, console=self.console, transient=False) as progress:
            yield Bar(progress, progress.add_task(escape(label), total=total))

    def say(self, message: str) -> None:
        self.console.print(message, markup=False, highlight=False)
