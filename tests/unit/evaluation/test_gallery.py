"""Every script in the known-failure gallery, classified from its captured result.

The sidecar states the prompt the script answers, the category and substrings the evidence
must contain; the captured `<name>.result.json` is what the script really printed under
sandbox-like limits (see the gallery's README). The Docker integration suite runs the same
scripts for real.
"""

from __future__ import annotations

import ast
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from selfcorrect_action.contract import ExecutionContract
from selfcorrect_action.evaluation.classify import EVIDENCE_MAX_CHARS, classify_execution_failure
from selfcorrect_action.evaluation.layers import evaluate
from selfcorrect_action.sandbox.models import ExecutionResult
from selfcorrect_action.taxonomy import Category

GALLERY = Path(__file__).parents[2] / "fixtures" / "known_failure_gallery"
CATEGORIES = ["environment", "syntax", "runtime", "resource", "external", "contract"]
PROMPT_MAX_CHARS = 600


@dataclass(frozen=True)
class Case:
    script: Path
    prompt: str
    category: Category
    evidence_contains: list[str]
    failed_layer: str
    contract: ExecutionContract

    @property
    def id(self) -> str:
        return f"{self.script.parent.name}/{self.script.stem}"

    def result(self) -> ExecutionResult:
        raw = json.loads(self.script.with_suffix(".result.json").read_text())
        store = self.script.with_suffix(".artifacts")
        for record in raw["artifacts"]:
            if record.get("host_path"):
                record["host_path"] = str(store / record["host_path"])
        return ExecutionResult.model_validate(raw)


def load_cases() -> list[Case]:
    cases = []
    for script in sorted(GALLERY.glob("*/*.py")):
        sidecar = YAML(typ="safe").load(script.with_suffix(".yaml").read_text())
        cases.append(
            Case(
                script=script,
                prompt=sidecar["prompt"],
                category=Category(sidecar["category"]),
                evidence_contains=list(sidecar["evidence_contains"]),
                failed_layer=sidecar.get("failed_layer", "execution"),
                contract=ExecutionContract.model_validate(sidecar.get("contract") or {}),
            )
        )
    return cases


CASES = load_cases()


def test_every_category_but_semantic_has_at_least_four_cases() -> None:
    # Semantic is the one category left out: whether a script does what was asked is decided
    # by the LLM judge, so no captured run can fix its expected classification.
    expected = [category for category in Category if category is not Category.SEMANTIC]
    assert sorted(CATEGORIES) == sorted(category.value for category in expected)
    counts = Counter(case.category for case in CASES)
    assert {c.value: counts[c] for c in expected if counts[c] < 4} == {}
    assert all(case.category.value == case.script.parent.name for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_gallery_case_has_a_prompt(case: Case) -> None:
    # The task a model might have answered with this script, as a user writes it in a spec.
    assert isinstance(case.prompt, str)
    assert case.prompt.strip()
    assert len(case.prompt) <= PROMPT_MAX_CHARS


def test_every_script_has_a_sidecar_and_a_capture() -> None:
    for script in GALLERY.glob("*/*.py"):
        if script.parent == GALLERY:
            continue
        assert script.with_suffix(".yaml").is_file(), script
        assert script.with_suffix(".result.json").is_file(), script


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_gallery_case_is_classified_as_recorded(case: Case) -> None:
    verdict = evaluate(case.result(), case.contract, script_name=case.script.name)
    assert not verdict.passed
    assert (verdict.failed_layer, verdict.category) == (case.failed_layer, case.category), (
        verdict.evidence
    )
    for expected in case.evidence_contains:
        assert expected in verdict.evidence
    assert len(verdict.evidence) <= EVIDENCE_MAX_CHARS


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.failed_layer == "execution"], ids=lambda case: case.id
)
def test_classifier_agrees_with_a_sandbox_path_for_the_script(case: Case) -> None:
    # The orchestrator may name the script by its path in the sandbox rather than its basename.
    category, evidence = classify_execution_failure(
        case.result(), script_name=f"/work/{case.script.name}", contract=case.contract
    )
    assert category is case.category
    assert case.evidence_contains[0] in evidence


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_only_syntax_scripts_fail_to_compile(case: Case) -> None:
    source = case.script.read_text()
    if case.category is Category.SYNTAX:
        with pytest.raises(SyntaxError):
            ast.parse(source)
    else:
        ast.parse(source)


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.failed_layer == "contract"], ids=lambda case: case.id
)
def test_contract_cases_pass_layer_one(case: Case) -> None:
    verdict = evaluate(case.result(), case.contract, script_name=case.script.name)
    assert [c.passed for c in verdict.checks[:5]] == [True] * 5
