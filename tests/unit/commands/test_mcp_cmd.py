"""`selfcorrect mcp` checks what it was given before serving, and without the optional
`mcp` extra says how to install it instead of failing on an import."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from selfcorrect_action.cli import main


def test_without_the_extra_it_says_how_to_install_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # None in sys.modules makes `import mcp` fail as an absent package does; its submodules
    # go too, or an earlier test's `mcp.server` would still import (the whole suite's order).
    for module in [name for name in sys.modules
                   if name.startswith(("selfcorrect_action.mcp", "mcp."))]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, "mcp", None)
    assert main(["mcp", "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "`selfcorrect mcp` needs the mcp package" in err
    assert "pip install 'selfcorrect-action[mcp]'" in err


@pytest.mark.parametrize(("args", "says"), [
    (["--root", "/no/such/folder"], "--root /no/such/folder: not a folder"),
    (["--root", "/"], "--root /: is the whole file system"),
    (["--max-runs", "0"], "--max-runs 0: at least 1"),
    (["--runtime", "kata"], "invalid choice"),
])
def test_bad_arguments_are_refused_before_serving(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
        says: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    try:
        code = main(["mcp", *args])
    except SystemExit as exit_:  # argparse's own refusals
        code = int(str(exit_.code))
    assert code == 2
    assert says in capsys.readouterr().err
