"""`selfcorrect run` end to end on every example: its recorded replay played back through
litellm's replay provider, the real loop and the real sandbox, reaching the status and the
failure categories the recording implies, with run.json and AUDIT.md written; and the same
run.json under `--orchestrator langgraph` (issue 23)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from selfcorrect_action.cli import main
from selfcorrect_action.loop.state import Strategy
from selfcorrect_action.report.run_json import load_run_json
from tests.orchestration import comparable

ROOT = Path(__file__).parents[2]
# example: (exit code, status, the category of each failed attempt, strategy of each attempt)
EXPECTED = {
    "bar_chart": (0, "passed", ["contract"], ["initial", "patch"]),
    "csv_report": (0, "passed", [], ["initial"]),
    "two_sum": (0, "passed", ["contract"], ["initial", "patch"]),
    "missing_package": (0, "passed", ["environment"], ["initial", "patch"]),
    "timeout": (0, "passed", ["resource"], ["initial", "rethink"]),
    "judge_rejection": (0, "passed", ["semantic"], ["initial", "rethink"]),
    "budget_exhausted": (1, "exhausted", ["runtime", "runtime"], ["initial", "patch"]),
}


@pytest.fixture(autouse=True)
def _no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SELFCORRECT_MODEL"):
        monkeypatch.delenv(name, raising=False)


ExampleRun = Callable[[str, str], tuple[int, Path]]


@pytest.fixture(scope="module")
def example_run(sandbox_image: str, tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[ExampleRun]:
    """An example's run under an orchestrator, made once for the module: (exit code, the
    output folder). The plain runs serve both the outcome test and the comparison."""
    made: dict[tuple[str, str], tuple[int, Path]] = {}

    def run(name: str, orchestrator: str) -> tuple[int, Path]:
        if (name, orchestrator) not in made:
            out = tmp_path_factory.mktemp(f"{name}-{orchestrator}")
            code = main(["run", f"examples/tasks/{name}.yml", "--replay",
                         f"examples/replays/{name}.jsonl", "--out", str(out),
                         "--orchestrator", orchestrator,
                         "--checkpoints", str(out.parent / f"{out.name}.sqlite")])
            made[name, orchestrator] = code, out
        return made[name, orchestrator]

    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)
        yield run


@pytest.mark.parametrize("name", list(EXPECTED))
def test_example_replays_to_its_recorded_outcome(name: str, example_run: ExampleRun) -> None:
    code, tmp_path = example_run(name, "plain")
    exit_code, status, categories, strategies = EXPECTED[name]
    state = load_run_json((tmp_path / "run.json").read_text())
    assert (code, state.status.value) == (exit_code, status), state.stop_reason
    failed = [a for a in state.attempts if not (a.verdict and a.verdict.passed)]
    assert [a.verdict.category.value for a in failed if a.verdict and a.verdict.category] == \
        categories
    assert [a.strategy.value for a in state.attempts] == strategies
    assert state.replayed
    audit = (tmp_path / "AUDIT.md").read_text()
    assert "replay" in audit.splitlines()[2].lower()
    script = tmp_path / str(state.spec.output)
    assert script.exists() == (status == "passed")
    if script.exists():
        assert script.read_text() == state.attempts[-1].code
    for attempt in state.attempts[:-1]:
        assert attempt.packet is not None  # every failure fed a repair packet forward
        assert attempt.strategy is not Strategy.INITIAL or attempt.index == 1


@pytest.mark.parametrize("name", list(EXPECTED))
def test_langgraph_gives_every_example_the_same_run_json(name: str,
                                                          example_run: ExampleRun) -> None:
    (plain_code, plain), (graph_code, graph) = (example_run(name, orchestrator)
                                                for orchestrator in ("plain", "langgraph"))
    assert graph_code == plain_code
    graph_json = json.loads((graph / "run.json").read_text())
    assert graph_json["orchestrator"] == "langgraph"
    assert comparable(graph_json) == comparable(json.loads((plain / "run.json").read_text()))
    assert sorted(p.name for p in graph.iterdir()) == sorted(p.name for p in plain.iterdir())


@pytest.mark.usefixtures("sandbox_image")
def test_two_sum_tests_stay_frozen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    main(["run", "examples/tasks/two_sum.yml", "--replay", "examples/replays/two_sum.jsonl",
          "--out", str(tmp_path)])
    state = load_run_json((tmp_path / "run.json").read_text())
    frozen = (ROOT / "examples" / "tests" / "test_two_sum.py").read_text()
    assert state.tests == {"test_two_sum.py": frozen}
    assert state.attempts[-1].tests and all(t.outcome == "passed" for t in state.attempts[-1].tests)


def test_no_model_and_no_replay_says_how_to_configure_one(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    code = main(["run", "examples/tasks/bar_chart.yml"])
    err = capsys.readouterr().err
    assert code == 2
    assert "no model is configured" in err and "--model" in err and "--replay" in err


def test_a_bad_spec_exits_2_with_its_location(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    spec = tmp_path / "bad.yml"
    spec.write_text("prompt: x\nkind: scirpt\nbudget: {patch_attempts: -1}\n")
    code = main(["run", str(spec), "--replay", str(ROOT / "examples/replays/bar_chart.jsonl")])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{spec}:2:1: kind" in err and f"{spec}:3:" in err


@pytest.mark.usefixtures("sandbox_image")
def test_a_replay_that_runs_out_is_an_error_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    short = tmp_path / "short.jsonl"
    lines = (ROOT / "examples/replays/bar_chart.jsonl").read_text().splitlines(keepends=True)
    short.write_text("".join(lines[:3]))  # header, plan, first generation: no repair
    code = main(["run", "examples/tasks/bar_chart.yml", "--replay", str(short),
                 "--out", str(tmp_path / "out")])
    state = load_run_json((tmp_path / "out" / "run.json").read_text())
    # exit 2, like every other replay that does not fit the run (it was 3, infrastructure)
    assert code == 2 and state.status.value == "error" and state.error_exit_code == 2
    assert "exchange" in state.stop_reason
    assert len(state.attempts) == 1  # the attempt that ran is kept


def test_bad_output_places_are_refused_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    replay = ["--replay", "examples/replays/bar_chart.jsonl"]
    for extra, expected in ((["--out", str(a_file)], "not a folder"),
                            (["--out", "/proc/nope/out"], "cannot create"),
                            (["--record", str(tmp_path)], "is a folder"),
                            (["--record", "/proc/nope/r.jsonl"], "not writable")):
        code = main(["run", "examples/tasks/bar_chart.yml", *replay, *extra])
        assert code == 2, extra
        assert expected in capsys.readouterr().err


def test_a_binary_replay_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    junk = tmp_path / "junk.jsonl"
    junk.write_bytes(b"\xff\xfe\x00garbage\n")
    code = main(["run", "examples/tasks/bar_chart.yml", "--replay", str(junk)])
    assert code == 2 and "not UTF-8" in capsys.readouterr().err


def test_a_recording_of_another_task_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    code = main(["run", "examples/tasks/bar_chart.yml", "--replay",
                 "examples/replays/two_sum.jsonl"])
    assert code == 2 and "different task" in capsys.readouterr().err


@pytest.mark.usefixtures("sandbox_image")
def test_the_judge_that_sees_images_was_sent_the_chart(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 8: the bar-chart recording (made through the real provider path against a local
    server, examples/record_replays.py) carries the chart itself in the judge's request,
    downscaled; the prompt names it. Replaying it runs the same code path."""
    import base64
    import io

    from PIL import Image

    from selfcorrect_action.llm.recording import read_recording

    recording = read_recording(ROOT / "examples/replays/bar_chart.jsonl")
    (judge,) = [e.request for e in recording.exchanges if e.request.purpose == "judge"]
    (image,) = judge.messages[-1].images
    assert image.media_type == "image/png" and image.label.startswith("chart.png (")
    shown = Image.open(io.BytesIO(base64.b64decode(image.data)))
    assert max(shown.size) <= 768
    assert "attached to this message" in judge.messages[-1].content
    monkeypatch.chdir(ROOT)
    assert main(["run", "examples/tasks/bar_chart.yml", "--replay",
                 "examples/replays/bar_chart.jsonl", "--out", str(tmp_path)]) == 0
