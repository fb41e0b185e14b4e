"""The shipped workflows (examples/workflows/, .github/workflows/) and the workflow snippets
in the docs pin every third-party action to the commit in .github/action-pins.yml, with its
version in a comment; check out without keeping credentials; and grant permissions per job.
Each rule is also run over a workflow that breaks it, so none passes by finding nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.shipped_workflows import (
    DOCS,
    PIN_TABLE,
    ROOT,
    label,
    load_pins,
    pin_problems,
    project_version,
    shipped_pins,
    uses_lines,
    workflow_files,
    workflow_problems,
    yaml_blocks,
)

CHECKOUT = "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1  # v7.0.1"
PINS = load_pins("""
actions:
  actions/checkout: {version: v7.0.1, commit: 3d3c42e5aac5ba805825da76410c181273ba90b1}
  actions/upload-artifact: {version: v7.0.0, commit: bbbca2ddaa5d8feaa63e36b76fdaad77386f024f}
""")


def _problems(text: str) -> list[str]:
    return workflow_problems(text, "w.yml", PINS, "0.1.0")


def _workflow(steps: str, *, top: str = "permissions: {}\n", job: str = "") -> str:
    return (f"on: push\n{top}jobs:\n  a:\n    runs-on: ubuntu-latest\n{job}"
            f"    steps:\n{steps}")


GOOD_STEPS = (f"      - uses: {CHECKOUT}\n        with:\n          persist-credentials: false\n"
              "      - uses: OWNER/selfcorrect@v0.1.0\n"
              "      - uses: actions/upload-artifact/merge@bbbca2ddaa5d8feaa63e36b76fdaad77386f024f"
              "  # v7.0.0\n"
              "      - uses: ./local-action\n")


def test_the_shipped_workflows_are_found() -> None:
    names = {path.name for path in workflow_files()}
    assert {"selfcorrect-issues.yml", "selfcorrect-split.yml", "selfcorrect-validate.yml",
            "selfcorrect-dispatch.yml", "selfcorrect-matrix.yml"} <= names


@pytest.mark.parametrize("path", workflow_files(), ids=lambda path: label(path))
def test_a_shipped_workflow_keeps_every_rule(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert workflow_problems(text, label(path), shipped_pins(), project_version()) == []


def test_the_docs_show_pinned_uses() -> None:
    uses = [use for doc in DOCS for line, block in yaml_blocks(doc.read_text(encoding="utf-8"))
            for use in uses_lines(block, label(doc), line)]
    assert any(use.action == "actions/checkout" for use in uses), "README shows a checkout"
    assert pin_problems(uses, shipped_pins(), project_version()) == []


def test_every_pin_is_used_or_says_what_it_waits_for() -> None:
    used = {use.action for path in workflow_files()
            for use in uses_lines(path.read_text(encoding="utf-8"), label(path))}
    pins = shipped_pins()
    unused = sorted(action for action, pin in pins.items()
                    if action not in used and pin.pending is None)
    stale = sorted(action for action, pin in pins.items()
                   if action in used and pin.pending is not None)
    assert unused == [], f"{label(PIN_TABLE)}: no workflow uses these: drop them"
    assert stale == [], f"{label(PIN_TABLE)}: used now, drop their `pending:`"


def test_a_workflow_that_keeps_every_rule_has_no_problem() -> None:
    assert _problems(_workflow(GOOD_STEPS)) == []


@pytest.mark.parametrize(("uses", "wanted"), [
    ("actions/checkout@v7", f"w.yml:7: write `uses: {CHECKOUT}`"),
    ("actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1  # v7",
     f"w.yml:7: write `uses: {CHECKOUT}`"),
    ("actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1",
     f"w.yml:7: write `uses: {CHECKOUT}`"),
    ("actions/checkout@bbbca2ddaa5d8feaa63e36b76fdaad77386f024f  # v7.0.1",
     f"w.yml:7: write `uses: {CHECKOUT}`"),
    ("actions/cache@0400d5f644dc74513175e3cd8d07132dd4860809  # v4.2.4",
     "w.yml:7: actions/cache@0400d5f644dc74513175e3cd8d07132dd4860809 is not in "
     ".github/action-pins.yml"),
    ("OWNER/selfcorrect@main", "w.yml:7: the placeholder for the user's copy of this action "
     "is OWNER/selfcorrect@v0.1.0"),
], ids=["tag", "short-version-comment", "no-comment", "other-commit", "not-in-table",
        "placeholder-elsewhere"])
def test_a_use_off_the_table_is_named_with_its_fix(uses: str, wanted: str) -> None:
    steps = f"      - uses: {uses}\n        with:\n          persist-credentials: false\n"
    problems = _problems(_workflow(steps))
    assert len(problems) == 1 and problems[0].startswith(wanted), problems


def test_a_use_the_line_scan_cannot_check_is_refused() -> None:
    problems = _problems(_workflow("      - {uses: actions/checkout@v4}\n"))
    assert problems == ["w.yml: actions/checkout@v4: write each `uses:` on a line of its own "
                        "(block style), where its pin and version comment can be checked",
                        "w.yml: job a: a checkout without `with: {persist-credentials: false}`"]


@pytest.mark.parametrize("given", ["", "        with:\n          fetch-depth: 0\n",
                                   "        with:\n          persist-credentials: true\n"])
def test_a_checkout_that_keeps_credentials_is_refused(given: str) -> None:
    assert _problems(_workflow(f"      - uses: {CHECKOUT}\n{given}")) == [
        "w.yml: job a: a checkout without `with: {persist-credentials: false}`"]


def test_persist_credentials_may_be_the_string_false() -> None:
    steps = f"      - uses: {CHECKOUT}\n        with:\n          persist-credentials: 'false'\n"
    assert _problems(_workflow(steps)) == []


@pytest.mark.parametrize(("top", "job", "wanted"), [
    ("", "", "w.yml: no workflow-level `permissions:`"),
    ("permissions:\n  contents: write\n", "",
     "w.yml: workflow-level permissions {'contents': 'write'}: move them to the jobs"),
    ("permissions: read-all\n", "", "w.yml: workflow-level permissions 'read-all'"),
    ("permissions: {}\n", "    permissions: write-all\n",
     "w.yml: job a: permissions 'write-all': name each scope"),
])
def test_permissions_beyond_none_for_the_workflow_are_refused(top: str, job: str,
                                                              wanted: str) -> None:
    problems = _problems(_workflow(GOOD_STEPS, top=top, job=job))
    assert len(problems) == 1 and problems[0].startswith(wanted), problems


def test_a_zizmor_ignore_needs_its_reason_above_it() -> None:
    bare = "on:\n  issue_comment:  # zizmor: ignore[dangerous-triggers]\npermissions: {}\n"
    reasoned = ("on:\n  # Safe here: the action checks the commenter's permission.\n"
                "  issue_comment:  # zizmor: ignore[dangerous-triggers]\npermissions: {}\n")
    assert _problems(bare) == ["w.yml:2: a zizmor ignore without its reason in a comment "
                               "above it"]
    assert _problems(reasoned) == []


@pytest.mark.parametrize("entry", [
    "{version: v7.0.1, commit: 3d3c42e}",
    "{version: v7, commit: 3d3c42e5aac5ba805825da76410c181273ba90b1}",
    "{version: v7.0.1, commit: 3D3C42E5AAC5BA805825DA76410C181273BA90B1}",
    "{version: v7.0.1, commit: 3d3c42e5aac5ba805825da76410c181273ba90b1, sha: x}",
])
def test_a_pin_that_is_not_a_release_and_a_full_commit_is_refused(entry: str) -> None:
    with pytest.raises(AssertionError, match=r"^pins\.yml: 1 validation error"):
        load_pins(f"actions:\n  actions/checkout: {entry}\n", "pins.yml")


def test_the_table_is_where_the_docs_say() -> None:
    assert PIN_TABLE == ROOT / ".github/action-pins.yml" and PIN_TABLE.is_file()
