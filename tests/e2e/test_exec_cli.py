"""`selfcorrect exec` end to end: real Docker, the example script, every exit code."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from selfcorrect_action.choices import Runtime
from selfcorrect_action.cli import main

EXAMPLE = Path(__file__).parents[2] / "examples" / "exec"
JSON_KEYS = {
    "passed", "failed_layer", "category", "evidence", "exit_code", "timed_out", "oom_killed",
    "duration_ms", "stdout", "stderr", "artifacts", "checks",
}


def _exec(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["exec", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.usefixtures("sandbox_image")
def test_passing_script_prints_the_documented_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = _exec(
        capsys, str(EXAMPLE / "sales_chart.py"), "--contract", str(EXAMPLE / "contract.yml"),
        "--input", str(EXAMPLE / "sales.csv"), "--json", "--artifacts-dir", str(tmp_path),
    )
    report = json.loads(out)
    assert code == 0, report
    assert set(report) >= JSON_KEYS
    assert report["passed"] is True and report["failed_layer"] is None
    assert report["category"] is None
    kinds = {a["path"]: a["kind"] for a in report["artifacts"]}
    assert kinds == {"chart.png": "png", "summary.json": "json"}
    assert all(check["passed"] for check in report["checks"])
    assert (tmp_path / "chart.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.usefixtures("sandbox_image")
@pytest.mark.parametrize("runtime", ["runc", "runsc"])
def test_missing_input_fails_as_external(
    capsys: pytest.CaptureFixture[str], runtime: Runtime
) -> None:
    code, out, _ = _exec(
        capsys, str(EXAMPLE / "sales_chart.py"), "--contract", str(EXAMPLE / "contract.yml"),
        "--json", "--runtime", runtime,
    )
    report = json.loads(out)
    assert code == 1
    assert (report["failed_layer"], report["category"]) == ("execution", "external")
    assert "sales_chart.py:8" in report["evidence"]


@pytest.mark.usefixtures("sandbox_image")
def test_contract_miss_fails_at_the_contract_layer(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    script = tmp_path / "quiet.py"
    script.write_text("open('chart.png', 'w').write('not an image')\n")
    contract = tmp_path / "c.yml"
    contract.write_text("artifacts:\n  - path: chart.png\n    kind: png\n")
    code, out, _ = _exec(capsys, str(script), "--contract", str(contract))
    assert code == 1
    assert "FAILED  quiet.py  at the contract layer: contract" in out
    assert "chart.png" in out and "text" in out


@pytest.mark.usefixtures("sandbox_image")
def test_timeout_flag_overrides_the_contract(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    script = tmp_path / "slow.py"
    script.write_text("import time\ntime.sleep(30)\n")
    code, out, _ = _exec(capsys, str(script), "--timeout", "1", "--json")
    report = json.loads(out)
    assert code == 1 and report["timed_out"] is True and report["category"] == "resource"
    assert report["duration_ms"] < 5000


def test_bad_contract_is_a_usage_error_with_its_location(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    contract = tmp_path / "bad.yml"
    contract.write_text("artifacts:\n  - path: a.png\n    kind: gif\nnetwork: maybe\n")
    code, _, err = _exec(capsys, str(EXAMPLE / "sales_chart.py"), "--contract", str(contract))
    assert code == 2
    assert f"{contract}:3:5: artifacts.0.kind" in err
    assert f"{contract}:4:1: network" in err


@pytest.mark.usefixtures("sandbox_image")
def test_a_script_named_like_an_option_runs_as_the_script(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    script = tmp_path / "-cexit().py"  # without `--`, python3 would run `exit().py` as code
    script.write_text("raise SystemExit(5)\n")
    code, out, _ = _exec(capsys, str(script), "--json")
    assert code == 1 and json.loads(out)["exit_code"] == 5


@pytest.mark.usefixtures("sandbox_image")
def test_an_input_required_as_output_but_left_unchanged_is_said_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    contract = tmp_path / "c.yml"
    contract.write_text("artifacts:\n  - path: sales.csv\n    kind: csv\n")
    script = tmp_path / "noop.py"
    script.write_text("print('nothing to do')\n")
    code, out, _ = _exec(capsys, str(script), "--contract", str(contract), "--input",
                         str(EXAMPLE / "sales.csv"), "--json")
    report = json.loads(out)
    assert code == 1 and report["failed_layer"] == "contract"
    assert "the script left it as it was" in report["evidence"]


def test_a_non_empty_artifacts_dir_is_refused_before_running(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "chart.png").write_bytes(b"from an earlier run")
    code, _, err = _exec(capsys, str(EXAMPLE / "sales_chart.py"), "--artifacts-dir",
                         str(tmp_path))
    assert code == 2 and "is not empty" in err
    assert (tmp_path / "chart.png").read_bytes() == b"from an earlier run"


def test_missing_script_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _exec(capsys, "/nonexistent/script.py")
    assert code == 2 and "no such file" in err


@pytest.mark.parametrize("flag", ["--input", "--contract"])
def test_a_device_as_input_or_contract_is_refused_not_read_forever(
    capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    code, _, err = _exec(capsys, str(EXAMPLE / "sales_chart.py"), flag, "/dev/zero")
    assert code == 2 and "/dev/zero" in err and "not a regular file" in err


def test_same_input_name_twice_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    other = tmp_path / "sales.csv"
    shutil.copy(EXAMPLE / "sales.csv", other)
    code, _, err = _exec(
        capsys, str(EXAMPLE / "sales_chart.py"), "--input", str(EXAMPLE / "sales.csv"),
        "--input", str(other),
    )
    assert code == 2 and "same place" in err


def test_no_engine_exits_3_with_how_to_start_one(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")
    code, _, err = _exec(capsys, str(EXAMPLE / "sales_chart.py"))
    assert code == 3
    assert "no Docker engine answers" in err and "docker-up" in err


@pytest.mark.usefixtures("sandbox_image")
@pytest.mark.usefixtures("sandbox_image")
def test_open_network_runs_under_a_network_less_runsc(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """It used to be refused (runsc registered with --network=none has no bridge); the
    egress tunnel rides the attach stream, so the runtime's network flag no longer
    matters."""
    contract = tmp_path / "c.yml"
    contract.write_text("network: open\n")
    code, _, err = _exec(capsys, str(EXAMPLE / "sales_chart.py"), "--contract", str(contract),
                         "--runtime", "runsc", "--input", str(EXAMPLE / "sales.csv"),
                         "--artifacts-dir", str(tmp_path / "a"))
    assert code == 0, err


@pytest.mark.parametrize("value", ["inf", "nan", "0", "-1", "1e9"])
def test_impossible_timeouts_are_usage_errors(
    capsys: pytest.CaptureFixture[str], value: str
) -> None:
    code, _, err = _exec(capsys, str(EXAMPLE / "sales_chart.py"), "--timeout", value)
    assert code == 2 and "--timeout" in err


def test_an_unusable_artifacts_dir_is_refused_before_running(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    a_file = tmp_path / "f"
    a_file.write_text("x")
    code, _, err = _exec(capsys, str(EXAMPLE / "sales_chart.py"), "--artifacts-dir", str(a_file))
    assert code == 2 and "not a folder" in err


@pytest.mark.usefixtures("sandbox_image")
def test_control_characters_never_reach_the_terminal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    script = tmp_path / "esc.py"
    script.write_text('import sys\nsys.stdout.write("\\x1b]0;pwned\\x07\\x1b[2Jhi")\n'
                      'open("x\\x1b[31m.txt", "w").write("x")\n')
    code, out, _ = _exec(capsys, str(script))
    assert code == 0
    assert "\x1b" not in out and "\x07" not in out
    assert "?]0;pwned??[2Jhi" in out


def test_json_mode_reports_errors_on_stdout_too(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")
    code, out, _ = _exec(capsys, str(EXAMPLE / "sales_chart.py"), "--json")
    assert code == 3
    report = json.loads(out)
    assert report["exit_code"] == 3 and "no Docker engine answers" in report["error"]
