"""The issue form's fields (what .github/ISSUE_TEMPLATE/selfcorrect.yml asks for, as GitHub
writes it into the body) and the guards every value read from an issue body passes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from selfcorrect_action.spec_files import Loc

# GitHub refuses issue bodies longer than this; a longer one did not come from GitHub.
MAX_BODY_CHARS = 65_536
NO_RESPONSE = "_No response_"

Shape = Literal["text", "line", "choice", "paths", "yaml"]


@dataclass(frozen=True)
class FormField:
    """One field of the issue form: `key` is the spec field and the form element's id,
    `label` the heading GitHub writes above its value."""

    key: str
    label: str
    shape: Shape


_TASK = FormField("prompt", "Task", "text")
_KIND = FormField("kind", "Kind", "choice")
_CONTRACT = FormField("contract", "Execution contract", "yaml")
_BUDGET = FormField("budget", "Budget", "yaml")
# In the order of each form (.github/ISSUE_TEMPLATE/selfcorrect.yml and
# selfcorrect-repair.yml; a test keeps each equal to its template).
SCRIPT_FORM_FIELDS: tuple[FormField, ...] = (
    _TASK,
    _KIND,
    FormField("output", "Output file", "line"),
    FormField("inputs", "Input files", "paths"),
    FormField("tests", "Test files", "paths"),
    _CONTRACT,
    _BUDGET,
    FormField("judge", "LLM judge", "choice"),
)
# The repair variant (kind: repair, docs/repair.md): what is broken, which tests show it,
# which files may change. The same parser reads both: a section one form lacks is empty.
REPAIR_FORM_FIELDS: tuple[FormField, ...] = (
    _TASK,
    _KIND,
    FormField("files", "Files to rewrite", "paths"),
    FormField("failing_tests", "Failing tests", "paths"),
    FormField("test_command", "Test command", "line"),
    FormField("requirements", "Requirements file", "line"),
    _CONTRACT,
    _BUDGET,
    FormField("review", "Reviewer", "choice"),
)
FORM_FIELDS: tuple[FormField, ...] = tuple(dict.fromkeys(
    (*SCRIPT_FORM_FIELDS, *REPAIR_FORM_FIELDS)))
KIND_OPTIONS = ("script", "function")
REPAIR_KIND_OPTIONS = ("repair",)
# The judge dropdown's options; its first word says which (an edited body may say yes/no).
JUDGE_OPTIONS = ("Yes (default)", "No: stop after the execution and contract checks")
REVIEW_OPTIONS = ("Yes (default)", "No: run every change without a review")
# Dropdowns whose first word is yes or no, and their options.
YES_NO_FIELDS = {"judge": JUDGE_OPTIONS, "review": REVIEW_OPTIONS}
JUDGE_WORDS = {"yes": True, "true": True, "no": False, "false": False}

BY_KEY = {f.key: f for f in FORM_FIELDS}
BY_HEADING = {f.label.casefold(): f for f in FORM_FIELDS}
ORDER = {f.key: i for i, f in enumerate(FORM_FIELDS)}
TASK = FORM_FIELDS[0]

USE_FORM_HINT = ("open the issue with the selfcorrect issue form, or put the whole task spec "
                 "in a ```yaml block that starts with `prompt: |`")
# What YAML's reader refuses (ruamel.yaml.reader.Reader.NON_PRINTABLE), refused in every
# form field too: a NUL or a lone surrogate is not text, and would reach the model's prompt.
# A single character class: linear, whatever the text.
NOT_TEXT = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# A contract or budget is a few levels deep; far deeper is hostile, and copying it back into
# YAML recurses per level.
MAX_FIELD_DEPTH = 20
# int() refuses to print more than 4,300 digits, but YAML reads 0x... of any length.
MAX_INT_BITS = 14_000


def hazard(document: Any, *, depth_limit: int | None) -> tuple[Loc, str, str] | None:
    """Where the YAML nests deeper than `depth_limit`, or holds an int too long to print."""
    stack: list[tuple[Loc, Any]] = [((), document)]
    while stack:
        loc, node = stack.pop()
        if depth_limit is not None and len(loc) > depth_limit:
            return loc, f"nested more than {depth_limit} levels deep", (
                "a contract or budget needs a few levels of lists and mappings")
        if isinstance(node, int) and node.bit_length() > MAX_INT_BITS:
            return loc, "a number too long to print (more than 4,000 digits)", (
                "write a number of sensible size")
        if isinstance(node, dict):
            stack.extend(((*loc, k), v) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend(((*loc, i), v) for i, v in reversed(list(enumerate(node))))
    return None


def dotted(loc: Loc) -> str:
    return ".".join(str(part) for part in loc) or "(top level)"
