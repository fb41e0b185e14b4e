"""One run as the history lists it: the figures `selfcorrect history` shows and filters on,
taken from the run state. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from selfcorrect_action.loop.state import RunState
from selfcorrect_action.report import text
from selfcorrect_action.report.view import replayed

SOURCE_RUN = "run"  # recorded by the run itself, at its end
SOURCE_IMPORT = "import"  # read from a run.json (`history import`)


@dataclass(frozen=True)
class HistoryEntry:
    run_id: str
    started_at: str  # as the run recorded it (ISO 8601)
    started_utc: str  # "YYYY-MM-DDTHH:MM:SS" in UTC: what --since and prune compare
    finished_at: str
    status: str
    spec: str  # the spec's source: a file, "issue #12"
    title: str  # the script the task asked for
    attempts: int
    max_attempts: int
    tokens: int
    cost_usd: float
    cost_known: bool
    replayed: bool
    repository: str  # "" when the run named none
    visibility: str  # public, private, internal, or "" when unknown
    source: str  # SOURCE_RUN or SOURCE_IMPORT
    location: str  # the folder its run.json was written to or read from ("" when none)
    recorded_at: str

    @property
    def cost(self) -> str:
        return text.money(self.cost_usd, known=self.cost_known)

    @property
    def wall_time(self) -> str:
        return text.wall_time(self.started_at, self.finished_at or None)

    @property
    def private(self) -> bool:
        """Shown to fewer people than anyone: a private or an internal repository's run."""
        return self.visibility in ("private", "internal")


def entry_for(state: RunState, *, source: str, location: str, now: datetime | None = None
              ) -> HistoryEntry:
    recorded = now or datetime.now(UTC)
    origin = state.origin
    return HistoryEntry(
        run_id=state.run_id, started_at=state.started_at,
        started_utc=utc_stamp(state.started_at) or utc_stamp(recorded.isoformat()),
        finished_at=state.finished_at or "", status=state.status.value,
        spec=state.spec_source, title=state.spec.output or state.output_name,
        attempts=len(state.attempts), max_attempts=state.max_attempts,
        tokens=state.usage.tokens, cost_usd=state.usage.cost_usd,
        cost_known=state.usage.cost_known, replayed=replayed(state),
        repository=origin.repository if origin else "",
        visibility=origin.visibility if origin else "", source=source, location=location,
        recorded_at=utc_stamp(recorded.isoformat()))


def utc_stamp(moment: str) -> str:
    """`moment` (ISO 8601) as UTC "YYYY-MM-DDTHH:MM:SS", naive taken as UTC; "" when it does
    not parse (an imported run.json may hold anything there)."""
    try:
        parsed = datetime.fromisoformat(moment)
    except (TypeError, ValueError):
        return ""
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")
