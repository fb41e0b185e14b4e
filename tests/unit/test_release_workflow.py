"""The release workflow (.github/workflows/release.yml) read as data: the rules it was written
to (least privilege per job, third-party code pinned, no expression spliced into a shell, no
credentials left in a checkout), and zizmor's audits. What its steps compute is
scripts/release.py's, tested in test_release.py and against a real registry in
tests/integration/test_prebuilt_images.py."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
PINNED = re.compile(r"[a-z0-9-]+/[a-z0-9._-]+@[0-9a-f]{40}")


@pytest.fixture(scope="module")
def workflow() -> dict[str, Any]:
    loaded: dict[str, Any] = YAML(typ="safe").load(WORKFLOW.read_text())
    return loaded


def _steps(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for job in workflow["jobs"].values() for step in job["steps"]]


def test_no_permission_is_granted_but_per_job(workflow: dict[str, Any]) -> None:
    assert workflow["permissions"] == {}
    assert workflow["jobs"]["images"]["permissions"] == {"contents": "read",
                                                         "packages": "write"}
    assert workflow["jobs"]["release"]["permissions"] == {"contents": "write"}


def test_every_action_is_pinned_by_commit_with_its_version_beside_it() -> None:
    lines = [line.strip() for line in WORKFLOW.read_text().splitlines()
             if line.strip().startswith(("uses:", "- uses:"))]
    assert lines
    for line in lines:
        reference, _, comment = line.split("uses:", 1)[1].strip().partition(" # ")
        assert PINNED.fullmatch(reference), line
        assert re.fullmatch(r"v[0-9]+\.[0-9]+\.[0-9]+", comment), line


def test_no_checkout_keeps_credentials(workflow: dict[str, Any]) -> None:
    checkouts = [s for s in _steps(workflow) if s.get("uses", "").startswith("actions/checkout@")]
    assert len(checkouts) == 2
    assert all(step["with"]["persist-credentials"] is False for step in checkouts)


def test_no_expression_is_spliced_into_a_shell(workflow: dict[str, Any]) -> None:
    """Inputs and outputs reach run: blocks through env only (the version is typed by a
    person; an output could carry anything a build printed)."""
    for step in _steps(workflow):
        assert "${{" not in step.get("run", ""), step.get("name")


def test_the_tag_is_made_once_and_never_forced(workflow: dict[str, Any]) -> None:
    runs = "\n".join(step.get("run", "") for step in _steps(workflow))
    assert "git push origin \"refs/tags/$TAG\"" in runs
    assert "--force" not in runs and "push -f" not in runs and "+refs/" not in runs


def test_zizmor_finds_nothing() -> None:
    zizmor = shutil.which("zizmor", path=str(Path(sys.executable).parent))
    assert zizmor, "zizmor is in the test extras: pip install -e '.[test]'"
    done = subprocess.run([zizmor, "--offline", "--persona", "pedantic", str(WORKFLOW)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
