"""junit XML shaped as pytest writes it under selfcorrect's argv: the suite's own counts and
the record of selfcorrect's pytest plugin (sandbox/pytest_collected.py), for fakes at the
sandbox seam. A report without them is read as a run that did not finish (issue 34)."""

from __future__ import annotations

from collections.abc import Iterable


def suite_xml(cases: Iterable[tuple[str, str]], *, collected: int | None = None,
              not_run: int = 0) -> str:
    """`cases`: (outcome, the `<testcase>` element's XML) in order; outcome is one of
    passed, failed, error, skipped. `collected` defaults to one test per case."""
    cases = list(cases)
    kinds = [outcome for outcome, _ in cases]
    counts = {kind: kinds.count(kind) for kind in ("passed", "failed", "error", "skipped")}
    record = (
        '<properties><property name="selfcorrect.collected" '
        f'value="{len(cases) if collected is None else collected}" />'
        f'<property name="selfcorrect.not_run" value="{not_run}" /></properties>')
    return ('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" '
            f'errors="{counts["error"]}" failures="{counts["failed"]}" '
            f'skipped="{counts["skipped"]}" tests="{len(cases)}">{record}'
            f'{"".join(xml for _, xml in cases)}</testsuite></testsuites>')
