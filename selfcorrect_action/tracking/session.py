"""A run's tracking as the pipeline sees it, whatever the settings say: nothing without
`--mlflow` (or MLFLOW_TRACKING_URI); with it, an MLflow run opened before the loop (so
the model calls' traces can name it) and filled once the reports are written. A store that
fails costs the run nothing: its reports are on disk, and a progress line says why it is
not tracked, as for the run history."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from selfcorrect_action.history.artifacts import KeptArtifact
from selfcorrect_action.llm.base import LLM
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.report.writer import Reports
from selfcorrect_action.tracking.record import run_name, run_tags, tracked_run

if TYPE_CHECKING:
    from selfcorrect_action.tracking.mlflow_tracker import MlflowTracker

DEFAULT_EXPERIMENT = "selfcorrect"
Say = Callable[[str, str], None]


class Tracking:
    def __init__(self, tracker: MlflowTracker | None, say: Say,
                 tags: Mapping[str, str]) -> None:
        self._tracker = tracker
        self._say = say
        self._tags = dict(tags)

    @property
    def mlflow_run_id(self) -> str | None:
        return self._tracker.run_id if self._tracker is not None else None

    def traced(self, llm: LLM, run_id: str) -> LLM:
        return self._tracker.traced(llm, run_id) if self._tracker is not None else llm

    def finish(self, state: RunState, reports: Reports, kept: tuple[KeptArtifact, ...]
               ) -> None:
        if self._tracker is None:
            return
        from selfcorrect_action.tracking.mlflow_tracker import TrackingError

        try:
            self._tracker.finish(tracked_run(state, reports, kept, tags=self._tags),
                                 status=mlflow_status(state))
        except TrackingError as exc:
            self._say("mlflow", f"this run is not in MLflow: {exc}")


MLFLOW_STATUSES = {Status.CANCELLED: "KILLED", Status.ERROR: "FAILED"}


def mlflow_status(state: RunState) -> str:
    """A run that ended on its own finished, whether its task passed or not (`passed` says
    which); a cancelled one was killed; one stopped by its infrastructure failed."""
    return MLFLOW_STATUSES.get(state.status, "FINISHED")


@contextlib.contextmanager
def tracking(uri: str | None, state: RunState, say: Say,
             tags: Mapping[str, str] | None = None, *, experiment: str | None = None,
             traces: bool = False) -> Iterator[Tracking]:
    """The run's tracking in the store at `uri` (None: none) while the block runs: `tags`
    name what it is part of (a benchmark's problem). Handed the settings it reads, not
    runs/settings.py's RunSettings: runs/ imports tracking/, never the reverse."""
    if uri is None:
        yield Tracking(None, say, {})
        return
    from selfcorrect_action.tracking.mlflow_tracker import MlflowTracker, TrackingError

    experiment = experiment or DEFAULT_EXPERIMENT
    tracker = MlflowTracker(uri, experiment, traces=traces)
    try:
        tracker.start(run_name(state), {**run_tags(state), **(tags or {})})
    except TrackingError as exc:
        say("mlflow", f"this run is not tracked: {exc}")
        yield Tracking(None, say, {})
        return
    say("mlflow", f"tracked in {uri}, experiment {experiment!r}, run "
        f"{tracker.run_id}" + (" (every model call a trace)" if tracker.traces else ""))
    try:
        yield Tracking(tracker, say, tags or {})
    finally:
        tracker.close()
