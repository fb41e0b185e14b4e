"""Every known-failure gallery case read as the task spec a user would have written for it.

The sidecar's `prompt` and `contract` (if any) make a spec; it must load like one from a
file or an issue, so the gallery's prompts and contracts stay valid task specs.
"""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from ruamel.yaml import YAML
from ruamel.yaml.scalarstring import LiteralScalarString

from selfcorrect_action.spec import LoadedSpec, load_spec_text
from tests.unit.evaluation.test_gallery import CASES, Case


def _sidecar(case: Case) -> dict[str, Any]:
    return YAML(typ="safe").load(case.script.with_suffix(".yaml").read_text())


def spec_text(case: Case) -> str:
    """The spec as YAML: the prompt (a `|` block when it has line breaks) and the contract."""
    sidecar = _sidecar(case)
    prompt = sidecar["prompt"].strip()
    data: dict[str, Any] = {
        "prompt": LiteralScalarString(prompt + "\n") if "\n" in prompt else prompt
    }
    if sidecar.get("contract") is not None:
        data["contract"] = sidecar["contract"]
    yaml = YAML(typ="rt")
    yaml.default_flow_style = False
    yaml.width = 4096  # one line per single-line prompt, as a person would write it
    out = StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def load_case_spec(case: Case) -> LoadedSpec:
    return load_spec_text(spec_text(case), source=f"gallery/{case.id}", check_files=False)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_gallery_case_is_a_valid_task_spec(case: Case) -> None:
    loaded = load_case_spec(case)
    assert loaded.spec.prompt == case.prompt.strip()
    assert loaded.spec.contract == case.contract
    assert loaded.spec.kind == "script"
    assert loaded.spec.output == f"scripts/{case.script.stem}.py"


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.contract.artifacts], ids=lambda case: case.id
)
def test_gallery_prompt_names_every_required_artifact(case: Case) -> None:
    # A contract may only demand files the user asked for: the model sees the prompt.
    prompt = load_case_spec(case).spec.prompt
    assert [a.path for a in case.contract.artifacts if a.path not in prompt] == []


def test_spec_text_keeps_a_multi_line_prompt_as_a_block() -> None:
    case = next(c for c in CASES if "\n" in c.prompt.strip())
    assert spec_text(case).startswith("prompt: |")
