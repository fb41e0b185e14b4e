"""Where the history lives: XDG_DATA_HOME, else ~/.local/share, moved by SELFCORRECT_HISTORY
or --history, turned off by --no-history; through the one settings table."""

from __future__ import annotations

from pathlib import Path

from selfcorrect_action.history.location import default_history_dir
from selfcorrect_action.runs import settings


def test_the_default_follows_the_xdg_base_directory_rules() -> None:
    assert default_history_dir({"HOME": "/home/me"}) == Path(
        "/home/me/.local/share/selfcorrect")
    assert default_history_dir({"HOME": "/home/me", "XDG_DATA_HOME": "/data"}) == Path(
        "/data/selfcorrect")
    # A relative XDG_DATA_HOME is invalid (the spec says to ignore it).
    assert default_history_dir({"HOME": "/home/me", "XDG_DATA_HOME": "rel"}) == Path(
        "/home/me/.local/share/selfcorrect")
    assert default_history_dir({}) is None


def test_flag_then_variable_then_default() -> None:
    environ = {"HOME": "/home/me", "SELFCORRECT_HISTORY": "/env/h"}
    flag = settings.flag_values({"history": "/flag/h"})
    resolved = settings.resolve(environ, flag)
    assert resolved.settings.history_dir == Path("/flag/h")
    assert resolved.sources["history"] == "--history"
    resolved = settings.resolve(environ, {})
    assert (resolved.settings.history, resolved.sources["history"]) == (
        Path("/env/h"), "SELFCORRECT_HISTORY")
    resolved = settings.resolve({"HOME": "/home/me"}, {})
    assert resolved.settings.history == Path("/home/me/.local/share/selfcorrect")
    assert resolved.sources["history"] == "default"
    assert settings.history_folder(environ, None) == Path("/env/h")
    assert settings.history_folder(environ, "/flag/h") == Path("/flag/h")
    assert settings.history_folder({"HOME": "/h"}, None) == Path("/h/.local/share/selfcorrect")


def test_no_history_turns_recording_off_and_says_so() -> None:
    resolved = settings.resolve({"HOME": "/home/me"},
                                settings.flag_values({"keep_history": "yes"}))
    assert resolved.settings.history_dir is None
    assert resolved.sources["keep_history"] == "--no-history"
    assert "keep_history=False (--no-history)" in settings.described(resolved)
    assert settings.RunSettings().history_dir is None  # settings made in code record nothing
