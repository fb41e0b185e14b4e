"""The command line itself: help where there is nothing to do, usage errors as JSON under
--json, bad flag values named before any work starts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfcorrect_action.cli import main


def test_a_bare_command_prints_help_not_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    assert "run" in capsys.readouterr().out
    assert main(["sandbox"]) == 0
    out = capsys.readouterr().out
    assert "build" in out and "required" not in out


def test_a_usage_error_under_json_is_a_json_object(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["run", "--json", "--runtime", "kata", "spec.yml"])
    assert caught.value.code == 2
    printed = json.loads(capsys.readouterr().out)
    assert printed["exit_code"] == 2 and "kata" in printed["error"]


@pytest.mark.parametrize(("flag", "value", "says"), [
    ("--api-base", "localhost:8080", "--api-base: 'localhost:8080' is not an http(s) URL"),
    ("--llm-timeout", "soon", "--llm-timeout: expected seconds"),
    ("--llm-retries", "-2", "--llm-retries: expected a whole number"),
])
def test_bad_flag_values_are_bad_usage_up_front(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str, says: str
) -> None:
    spec = tmp_path / "t.yml"
    spec.write_text("prompt: p\n")
    assert main(["run", str(spec), flag, value, "--model", "openai/x"]) == 2
    assert says in capsys.readouterr().err


def test_an_unknown_provider_is_bad_usage_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "t.yml"
    spec.write_text("prompt: p\n")
    assert main(["run", str(spec), "--model", "nosuchprovider/model", "--json"]) == 2
    printed = json.loads(capsys.readouterr().out)
    assert "litellm cannot tell which provider" in printed["error"]


def test_record_never_replaces_a_recording_unless_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # the model's key is checked first
    spec = tmp_path / "t.yml"
    spec.write_text("prompt: p\n")
    recording = tmp_path / "run.jsonl"
    recording.write_text("precious\n")
    code = main(["run", str(spec), "--model", "openai/x", "--record", str(recording),
                 "--out", str(tmp_path / "out")])
    assert code == 2 and "exists, and would be replaced" in capsys.readouterr().err
    assert recording.read_text() == "precious\n"


def test_progress_lines_are_not_hard_wrapped_outside_a_terminal() -> None:
    import io

    from rich.console import Console

    from selfcorrect_action.commands.run_cmd import progress_printer

    out = io.StringIO()
    show = progress_printer(Console(file=out, width=80, force_terminal=False), secrets=[])
    show("evaluate", "attempt 1: " + "word " * 40)
    assert len(out.getvalue().strip().splitlines()) == 1  # one line in a CI log


def test_an_internal_error_prints_a_short_message_and_keeps_the_traceback_redacted(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    """A bug (an exception that is not ours) used to print its traceback, secrets and all,
    into a log that is often public (issue 16, item 5)."""
    from selfcorrect_action.cli import main
    from selfcorrect_action.commands import config_cmd

    secret = "sk-proj-" + "a1" * 20
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)

    def broken(*args: object, **kwargs: object) -> int:
        raise RuntimeError(f"bad state with {secret}")

    monkeypatch.setattr(config_cmd, "show_config", broken)
    assert main(["config"]) == 3
    err = capsys.readouterr().err
    assert "internal error (RuntimeError)" in err and "Traceback" not in err
    assert secret not in err
    (log,) = (tmp_path / "cache" / "selfcorrect").glob("crash-*.log")
    text = log.read_text()
    assert "RuntimeError: bad state with" in text and "Traceback" in text
    assert secret not in text and str(log) in err


@pytest.mark.parametrize("args", [["run"], ["run", "t.yml", "--prompt", "Print hello."]])
def test_run_takes_a_spec_or_a_prompt(args: list[str],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "give a spec file or --prompt TEXT" in err and "--prompt" in err


def test_a_prompt_is_refused_like_a_spec_before_any_work(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SELFCORRECT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    assert main(["run", "--prompt", "Print the first 10 primes"]) == 2
    assert "no model is configured" in capsys.readouterr().err
    assert main(["run", "--prompt", " "]) == 2
    assert "--prompt: the prompt is empty" in capsys.readouterr().err
    assert not (tmp_path / "out").exists(), "nothing was written"


def test_the_parser_is_built_without_the_heavy_modules() -> None:
    """Every command, `--version` too, builds the whole parser first: the loop's state,
    pydantic, docker and httpx imported there cost each one about 0.9 s (issue 36, item 8).
    A fresh interpreter, since this one has imported them all already."""
    import subprocess
    import sys

    listing = ("import sys; from selfcorrect_action.cli import build_parser; build_parser(); "
               "print(' '.join(sorted(sys.modules)))")
    found = subprocess.run([sys.executable, "-c", listing], capture_output=True, text=True,
                           check=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    loaded = set(found.stdout.split())
    heavy = {"selfcorrect_action.loop.state", "pydantic", "docker", "httpx", "rich", "jinja2"}
    assert not loaded & heavy


def test_a_missing_provider_key_is_refused_before_anything_is_made(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """It used to surface 14 s into the run as exit 3, after a history entry and an out/
    folder were made (issue 38, item 7)."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE",
                 "SELFCORRECT_API_BASE", "SELFCORRECT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "")  # a workflow's unset secret
    spec = tmp_path / "t.yml"
    spec.write_text("prompt: Print hello.\n")
    history = tmp_path / "history"
    code = main(["run", str(spec), "--model", "openai/gpt-4o-mini", "--out",
                 str(tmp_path / "out"), "--history", str(history)])
    err = capsys.readouterr().err
    assert code == 2
    assert "needs an API key: OPENAI_API_KEY is not set" in err
    assert "export OPENAI_API_KEY=<your key>;" in err  # left as it is by the redaction
    assert not (tmp_path / "out").exists() and not history.exists()
