"""The audit trail of a run: run.json (the whole state, versioned) and AUDIT.md, plus the
one-screen summary that comments and job summaries reuse."""

from __future__ import annotations

from selfcorrect_action.report.audit import audit_markdown, summary_markdown
from selfcorrect_action.report.run_json import RunJsonError, load_run_json, run_json
from selfcorrect_action.report.writer import ReportPaths, write_reports

__all__ = [
    "ReportPaths",
    "RunJsonError",
    "audit_markdown",
    "load_run_json",
    "run_json",
    "summary_markdown",
    "write_reports",
]
