"""Where the MCP server keeps its runs (issue 38, item 6): in the history folder, where
`selfcorrect history` and `view` find them, one folder per root; never in the user's
repository, which an MCP run leaves untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfcorrect_action.commands.mcp_cmd import serve_mcp
from selfcorrect_action.errors import UsageError
from selfcorrect_action.mcp.run_folder import run_folder, runs_folder
from selfcorrect_action.runs.settings import from_environment


def test_a_roots_runs_are_in_the_history_folder_one_folder_per_root(tmp_path: Path) -> None:
    history = tmp_path / "history"
    (tmp_path / "a" / "project").mkdir(parents=True)
    (tmp_path / "b" / "project").mkdir(parents=True)
    first = runs_folder(history, tmp_path / "a" / "project")
    second = runs_folder(history, tmp_path / "b" / "project")
    assert first.parent == second.parent == history / "mcp-runs"
    assert first.name.startswith("project-") and second.name.startswith("project-")
    assert first != second, "two projects of one name keep their runs apart"
    assert runs_folder(history, tmp_path / "a" / "project") == first, "stable across servers"
    assert run_folder(first, "0123456789ab") == first / "0123456789ab"
    with pytest.raises(UsageError, match="not a run id"):
        run_folder(first, "../../x")


def test_an_odd_folder_name_makes_a_plain_runs_folder_name(tmp_path: Path) -> None:
    odd = tmp_path / "my project: (v2) ünïcode"
    odd.mkdir()
    name = runs_folder(tmp_path / "history", odd).name
    assert name.startswith("my_project_v2_n_code-"), name


def test_the_server_refuses_to_start_without_a_history_folder(tmp_path: Path) -> None:
    """No HOME, no XDG_DATA_HOME, no --history (a bare container): the runs would have
    nowhere to go but the user's repository."""
    settings = from_environment({})
    assert settings.history is None
    with pytest.raises(UsageError) as refused:
        serve_mcp(root=tmp_path, settings=settings, max_runs=1, environ={})
    assert "history folder" in refused.value.message
    assert "--history" in (refused.value.hint or "")
    assert list(tmp_path.iterdir()) == []

