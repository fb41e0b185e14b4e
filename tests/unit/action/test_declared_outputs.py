"""Every output the action writes is declared in action.yml: GitHub drops an undeclared
output silently, so a workflow gated on it (the split recipe's `has-plan`) never runs its
next job."""

from __future__ import annotations

import ast
from pathlib import Path

from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[3]


def _written_outputs() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "selfcorrect_action").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "outputs"):
                names |= {k.arg.replace("_", "-") for k in node.keywords if k.arg}
    return names


def test_every_output_written_is_declared() -> None:
    declared = set(YAML(typ="safe").load((ROOT / "action.yml").read_text())["outputs"])
    written = _written_outputs()
    assert {"status", "has-plan"} <= written, "the scan found the writes"
    assert written - declared == set()
