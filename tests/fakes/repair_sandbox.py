"""A test suite at the sandbox seam, for the repair loop's unit tests: each run's outcomes
are decided from the files placed (a function of the rewritten code), and reported as
pytest would, in a junit XML file among the artifacts and an exit status that agrees."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from selfcorrect_action.repair.test_run import REPORT_PATH
from selfcorrect_action.sandbox.models import ArtifactRecord, ExecutionRequest, ExecutionResult
from tests.fakes.junit_report import suite_xml

# test id -> (outcome, message)
Outcomes = dict[str, tuple[str, str]]
_FRAME = re.compile(r"\S+:\d+: in \S")


class SuiteSandbox:
    def __init__(self, outcomes: Callable[[dict[str, str]], Outcomes], *,
                 changed: Callable[[dict[str, str]], list[str]] | None = None) -> None:
        self.outcomes = outcomes
        self.changed = changed or (lambda files: [])
        self.requests: list[ExecutionRequest] = []

    def run(self, request: ExecutionRequest, artifact_dir: Path) -> ExecutionResult:
        self.requests.append(request)
        files = {f.path: f.data.decode() for f in request.files}
        results = self.outcomes(files)
        artifact_dir.mkdir(parents=True, exist_ok=True)
        report = artifact_dir / "junit.xml"
        report.write_text(junit(results))
        records = [ArtifactRecord(path=REPORT_PATH, size=report.stat().st_size,
                                  host_path=report)]
        records += [ArtifactRecord(path=path, size=1, host_path=report)
                    for path in self.changed(files)]
        bad = any(outcome in ("failed", "error") for outcome, _ in results.values())
        return ExecutionResult(exit_code=1 if bad else 0, artifacts=records)


def junit(results: Outcomes) -> str:
    """A failure's message is its one `E` line under a frame of the test; a message that is
    pytest's whole `--tb=short` text (it starts with a frame) is the failure's text as it
    is, and its `E` lines the message, as pytest writes them."""
    cases = []
    for test_id, (outcome, message) in results.items():
        path, _, name = test_id.partition("::")
        module = path.removesuffix(".py").replace("/", ".")
        text = f"{path}:1: in {name}\nE   {message}"
        if _FRAME.match(message):
            text, message = message, "\n".join(
                line[4:] for line in message.splitlines() if line.startswith("E   "))
        inner = {"passed": "", "failed": f"<failure message={quoteattr(message)}>"
                 f"{escape(text)}</failure>", "error": f"<error message="
                 f"{quoteattr(message)}/>", "skipped": "<skipped/>"}[outcome]
        cases.append((outcome, f'<testcase classname="{module}" name="{name}" file="{path}" '
                      f'line="1">{inner}</testcase>'))
    return suite_xml(cases)
