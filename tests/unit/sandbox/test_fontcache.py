"""The start-up hook baked into the sandbox image (sandbox/site/selfcorrect_fontcache.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from selfcorrect_action.resources import sandbox_context


@pytest.fixture(scope="module")
def hook() -> ModuleType:
    path = sandbox_context() / "site" / "selfcorrect_fontcache.py"
    spec = importlib.util.spec_from_file_location("selfcorrect_fontcache_under_test", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # its import-time seed() finds no baked dir here: a no-op
    return module


@pytest.fixture
def baked(tmp_path: Path) -> Path:
    folder = tmp_path / "baked"
    folder.mkdir()
    (folder / "fontlist-v330.json").write_text('{"_version": 330}')
    (folder / "unrelated.txt").write_text("")
    return folder


def test_seeds_an_empty_cache_dir(hook: ModuleType, baked: Path, tmp_path: Path) -> None:
    target = tmp_path / "tmpfs" / "matplotlib"
    hook.seed(str(baked), {"MPLCONFIGDIR": str(target)})
    assert sorted(p.name for p in target.iterdir()) == ["fontlist-v330.json"]
    assert (target / "fontlist-v330.json").read_text() == '{"_version": 330}'


def test_leaves_an_existing_cache_alone(hook: ModuleType, baked: Path, tmp_path: Path) -> None:
    (tmp_path / "fontlist-v330.json").write_text("mine")
    hook.seed(str(baked), {"MPLCONFIGDIR": str(tmp_path)})
    assert (tmp_path / "fontlist-v330.json").read_text() == "mine"


def test_never_raises(hook: ModuleType, baked: Path, tmp_path: Path) -> None:
    hook.seed(str(baked), {})
    hook.seed(str(tmp_path / "missing"), {"MPLCONFIGDIR": str(tmp_path / "c")})
    blocker = tmp_path / "file"
    blocker.write_text("")
    hook.seed(str(baked), {"MPLCONFIGDIR": str(blocker / "sub")})
    assert not (tmp_path / "c").exists()
