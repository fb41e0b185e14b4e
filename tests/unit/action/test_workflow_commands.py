"""Workflow commands, outputs and the step summary, written as the runner parses them."""

from __future__ import annotations

from pathlib import Path

from selfcorrect_action.action.workflow_commands import append_summary, command, set_outputs


def test_an_annotation_points_at_file_line_and_column() -> None:
    line = command("error", "bad value", properties={"file": "t.yml", "line": 3, "col": 5})
    assert line == "::error file=t.yml,line=3,col=5::bad value"


def test_messages_cannot_forge_commands_or_lines() -> None:
    line = command("error", "x\n::set-output name=a::b %0A", properties={"title": "a,b:c"})
    assert "\n" not in line
    assert line == "::error title=a%2Cb%3Ac::x%0A::set-output name=a::b %250A"


def test_secrets_never_reach_the_log() -> None:
    token = "ghs_" + "b" * 36
    line = command("warning", f"failed with {token}", properties={"file": token},
                   secrets_=[token])
    assert token not in line and "REDACTED" in line


def test_outputs_use_a_delimiter_so_values_may_span_lines(tmp_path: Path) -> None:
    path = tmp_path / "out"
    set_outputs(path, {"pr-url": "https://x/1\nhttps://x/2", "status": "passed"})
    text = path.read_text()
    assert "pr-url<<selfcorrect_" in text and "https://x/1\nhttps://x/2\n" in text
    lines = text.splitlines()
    delimiter = lines[0].split("<<")[1]
    assert lines[3] == delimiter and lines[4].startswith("status<<")


def test_no_file_means_no_writes(tmp_path: Path) -> None:
    set_outputs(None, {"a": "b"})
    append_summary(None, "x")
    append_summary(tmp_path / "s.md", "# one")
    append_summary(tmp_path / "s.md", "# two")
    assert (tmp_path / "s.md").read_text() == "# one\n\n# two\n\n"


def test_the_older_command_syntax_is_defused_too() -> None:
    line = command("warning", "boom ##[add-mask]secret ##[error]fake")
    assert "##[" not in line


def test_the_job_log_cannot_carry_runner_commands(capsys) -> None:
    from selfcorrect_action.commands.action_cmd import log_printer

    log_printer(["sekret-value-123"])("evaluate", "Exception: ##[add-mask]x\n::error::fake "
                                      "sekret-value-123")
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith("[selfcorrect] evaluate: ")
    assert "##[" not in out and "sekret-value-123" not in out
