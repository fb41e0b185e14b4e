"""Publishing a finished run to a folder."""

from __future__ import annotations

from pathlib import Path

from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.runs.publish import write_output
from selfcorrect_action.spec import load_spec_text


def test_a_failed_run_names_what_an_earlier_passing_run_left(tmp_path: Path) -> None:
    loaded = load_spec_text("prompt: p\noutput: scripts/x.py\n", "t.yml", root=tmp_path,
                            name="t.yml")
    out = tmp_path / "out"
    (out / "scripts").mkdir(parents=True)
    (out / "scripts" / "x.py").write_text("print('old')\n")
    (out / "artifacts").mkdir()
    (out / "artifacts" / "chart.png").write_bytes(b"png")
    state = RunState(run_id="r", started_at="t", spec_source="t.yml", spec=loaded.spec,
                     output_name="x.py", contract=loaded.spec.contract, models=ModelTiers(),
                     status=Status.EXHAUSTED, stop_reason="budget")
    written = write_output(state, loaded, out, tmp_path / "work")
    assert written.script is None
    assert written.stale == [out / "scripts" / "x.py", out / "artifacts"]
    assert (out / "scripts" / "x.py").read_text() == "print('old')\n"  # not deleted
