"""The final contract and the frozen tests as the audit shows them, with who set each field:
the user (kept as written), the planner (filled a gap), or the default."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from selfcorrect_action.contract import ArtifactSpec
from selfcorrect_action.loop.state import RunState
from selfcorrect_action.network_rules import describe
from selfcorrect_action.report import text

TEST_FILE_LINES = 300
TEST_FILE_CHARS = 40_000
CRITERION_CHARS = 500


@dataclass(frozen=True)
class FieldRow:
    name: str
    value: str
    set_by: str


@dataclass(frozen=True)
class TestFile:
    name: str
    content: str
    size: str  # "6 lines"
    more: str


@dataclass(frozen=True)
class ContractView:
    fields: list[FieldRow]
    artifacts: list[FieldRow]  # name: the path, value: what it must be
    stdout_contains: list[str]
    success_criteria: list[str]
    criteria_set_by: str
    user_fields: list[str]
    tests: list[TestFile]
    tests_by: str


def contract_view(state: RunState) -> ContractView:
    contract = state.contract
    set_by = _set_by(state)
    return ContractView(
        fields=[
            FieldRow("network", describe(contract.network), set_by("network")),
            FieldRow("timeout", f"{contract.timeout_s:g} s", set_by("timeout_s")),
            FieldRow("memory", f"{contract.memory_mb} MB", set_by("memory_mb")),
            FieldRow("interpreter", "warm allowed" if contract.warm else "always cold",
                     set_by("warm")),
            FieldRow("artifacts", str(len(contract.artifacts)), set_by("artifacts")),
            FieldRow(
                "stdout expectations", str(len(contract.stdout_contains)), set_by("stdout_contains")
            ),
            FieldRow(
                "success criteria", str(len(contract.success_criteria)), set_by("success_criteria")
            ),
        ],
        artifacts=[FieldRow(a.path, _artifact_needs(a), "") for a in contract.artifacts],
        stdout_contains=[text.clip(item, CRITERION_CHARS) for item in contract.stdout_contains],
        success_criteria=[text.clip(item, CRITERION_CHARS)
                          for item in contract.success_criteria],
        criteria_set_by=set_by("success_criteria"),
        user_fields=sorted(state.user_contract_fields),
        tests=[_test_file(name, content) for name, content in sorted(state.tests.items())],
        tests_by=_tests_by(state),
    )


def _set_by(state: RunState) -> Callable[[str], str]:
    user = {name.split(".", 1)[0] for name in state.user_contract_fields}
    planner = set(state.plan.filled_fields) if state.plan else set()

    def who(name: str) -> str:
        if name in user:
            return "you"
        return "planner" if name in planner else "default"

    return who


def _artifact_needs(artifact: ArtifactSpec) -> str:
    needs: list[str] = [artifact.kind if artifact.kind != "any" else "any kind"]
    if artifact.min_bytes is not None:
        needs.append(f"at least {text.number(artifact.min_bytes)} bytes")
    if artifact.max_bytes is not None:
        needs.append(f"at most {text.number(artifact.max_bytes)} bytes")
    if artifact.non_blank:
        needs.append("not blank")
    if artifact.columns:
        needs.append("columns " + ", ".join(artifact.columns))
    if artifact.min_rows is not None:
        needs.append(f"at least {text.number(artifact.min_rows)} rows")
    if artifact.required_keys:
        needs.append("keys " + ", ".join(artifact.required_keys))
    return "; ".join(needs)


def _test_file(name: str, content: str) -> TestFile:
    shown, more = text.head_lines(content, TEST_FILE_LINES)
    return TestFile(
        name,
        text.clip(shown, TEST_FILE_CHARS),
        text.plural(len(content.splitlines()), "line"),
        f"{text.number(more)} more lines, in run.json" if more else "",
    )


def _tests_by(state: RunState) -> str:
    if not state.tests:
        return ""
    if state.tests_written_by_plan:
        return "written by the planner from the task, before any code, then frozen"
    return "given in the spec, frozen"
