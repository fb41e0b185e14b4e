"""How run_task and prepare_task take a task (issue 38, item 5): `spec=` a spec file (a str
or a Path) or a loaded spec, `prompt=` plain words; a str naming a spec file is never run as
a prompt; the old positional str still works, with a warning that names the new call. Every
refusal here comes before a token is spent or a container starts."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from selfcorrect_action import api
from selfcorrect_action.errors import SpecError, UsageError

EXAMPLES = Path(__file__).parents[3] / "examples"
TWO_SUM = EXAMPLES / "tasks" / "two_sum.yml"
TWO_SUM_REPLAY = EXAMPLES / "replays" / "two_sum.jsonl"
KEYED = {"OPENAI_API_KEY": "sk-test-not-a-key"}  # a hosted model's key is checked up front


@pytest.fixture
def in_a_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A current folder holding a spec file, as a user's project would."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "hello.yml").write_text("prompt: Print hello.\n")
    return tmp_path


def _unwritable(tmp_path: Path) -> Path:
    """An out_dir that is a file: run_task refuses it after the task is prepared, before
    anything runs, so what prepare accepted shows without Docker or a model."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    return blocker


def test_a_str_naming_a_spec_file_runs_as_that_spec_with_a_warning(tmp_path: Path) -> None:
    """The trap: `api.run_task("examples/tasks/two_sum.yml", replay=...)` took the path as
    a prompt, and the replay was refused as "made for a different task"."""
    with pytest.warns(DeprecationWarning) as warned, \
            pytest.raises(UsageError, match="out_dir"):
        api.run_task(str(TWO_SUM), replay=str(TWO_SUM_REPLAY), out_dir=_unwritable(tmp_path),
                     environ={})
    (warning,) = warned
    assert f"api.run_task(spec={str(TWO_SUM)!r})" in str(warning.message)
    assert warning.filename == __file__, "the warning points at the caller's line"


def test_spec_takes_a_path_as_a_str_or_a_path(in_a_folder: Path) -> None:
    settings = api.run_settings({}, model="openai/gpt-4o-mini")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for given in ("hello.yml", Path("hello.yml"), in_a_folder / "hello.yml"):
            prepared = api.prepare_task(spec=given, settings=settings, environ=KEYED)
            assert prepared.run.loaded is not None
            assert prepared.run.loaded.path == Path(given)
            assert prepared.run.state.spec.prompt == "Print hello."
        loaded = api.spec_from_text("prompt: Print hi.\n", root=in_a_folder)
        prepared = api.prepare_task(spec=loaded, settings=settings, environ=KEYED)
        assert prepared.run.state.spec.prompt == "Print hi."


def test_a_prompt_that_names_a_spec_file_is_refused(in_a_folder: Path) -> None:
    settings = api.run_settings({}, model="openai/gpt-4o-mini")
    with pytest.raises(UsageError) as refused:
        api.run_task(prompt="hello.yml", settings=settings, environ={})
    assert refused.value.message == (
        "prompt 'hello.yml' names the spec file hello.yml: a prompt is the task in words")
    assert refused.value.hint == "to run that spec, call api.run_task(spec='hello.yml')"
    prepared = api.prepare_task(prompt="Print hello.", settings=settings, environ=KEYED)
    assert prepared.run.state.spec_source == "prompt"


def test_a_str_that_looks_like_a_missing_spec_file_is_refused(in_a_folder: Path) -> None:
    """Not a file: a typo in a spec's name must not run the name as a prompt."""
    with pytest.raises(UsageError) as refused:
        api.run_task("tasks/helo.yml", model="openai/gpt-4o-mini", environ={})
    assert refused.value.message == "tasks/helo.yml: no such spec file"
    assert "api.run_task(prompt=" in (refused.value.hint or "")


def test_a_positional_prompt_still_runs_and_says_the_new_call(tmp_path: Path) -> None:
    with pytest.warns(DeprecationWarning, match=r"api\.run_task\(prompt=\.\.\.\)") as warned, \
            pytest.raises(UsageError, match="out_dir"):
        api.run_task("Print hello.", model="openai/gpt-4o-mini",
                     out_dir=_unwritable(tmp_path), environ=KEYED)
    assert warned[0].filename == __file__


def test_a_missing_spec_says_its_hint_apart(tmp_path: Path) -> None:
    """`.hint` holds the hint, as every other error's does; `.message` holds none of it."""
    for call in (lambda: api.run_task(spec=tmp_path / "nope.yml", environ={}),
                 lambda: api.run_task(Path(tmp_path / "nope.yml"), environ={}),
                 lambda: api.spec_from_file(tmp_path / "nope.yml")):
        with pytest.raises(SpecError) as missing:
            call()
        assert missing.value.message == f"{tmp_path / 'nope.yml'}:1:1: no such file"
        assert missing.value.hint == "check the path and its spelling"
        assert str(missing.value) == (f"{tmp_path / 'nope.yml'}:1:1: no such file\n"
                                      "  hint: check the path and its spelling")


def test_the_task_is_given_once(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="give the task once") as twice:
        api.run_task(spec=TWO_SUM, prompt="Print hello.", environ={})
    assert twice.value.hint is not None and "spec=" in twice.value.hint
    with pytest.raises(UsageError, match="give the task once"):
        api.run_task(environ={})
    with pytest.raises(UsageError, match=r"spec: expected a spec file's path \(str or Path\) "
                       "or a loaded spec, got int"):
        api.run_task(spec=5, environ={})  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="prompt: expected the task in words"):
        api.run_task(prompt=TWO_SUM, environ={})  # type: ignore[arg-type]


def test_replay_and_folders_take_a_str_and_refuse_what_is_not_a_path(tmp_path: Path) -> None:
    chosen = api.run_settings({}, replay="r.jsonl")
    assert chosen.replay == Path("r.jsonl")
    with pytest.raises(UsageError, match=r"replay: expected a path \(str or Path\), got int"):
        api.run_task(spec=TWO_SUM, replay=5, environ={})  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="out_dir"):
        api.run_task(spec=TWO_SUM, replay=str(TWO_SUM_REPLAY),
                     out_dir=str(_unwritable(tmp_path)), environ={})


def test_run_task_takes_api_base(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="argument api_base: 'localhost' is not"):
        api.run_task(prompt="Print hello.", api_base="localhost", environ={})
    # A local server needs no key: with api_base, "no model is configured" does not apply.
    with pytest.raises(UsageError, match="out_dir"):
        api.run_task(prompt="Print hello.", model="openai/local",
                     api_base="http://127.0.0.1:9/v1", out_dir=_unwritable(tmp_path),
                     environ={})
    with pytest.raises(UsageError, match="either settings or model"):
        api.run_task(prompt="Print hello.", settings=api.run_settings({}),
                     api_base="http://127.0.0.1:9/v1", environ={})


def test_no_model_is_said_in_the_apis_terms() -> None:
    with pytest.raises(api.NoModelConfigured) as refused:
        api.run_task(prompt="Print hello.", environ={})
    hint = refused.value.hint or ""
    assert "model=" in hint and "replay=" in hint and "api_base=" in hint
    assert "--" not in hint, "no command-line flags in a Python caller's hint"
    assert isinstance(refused.value, UsageError)
