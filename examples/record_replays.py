"""Re-record the example replays (examples/replays/*.jsonl).

No LLM API is reachable where selfcorrect is developed, so each example's model answers are
scripted (examples/scripted/NAME.yml, in call order) and served by a local server that speaks
the OpenAI chat API (tests/fakes/openai_server.py). The run itself is real: the real loop,
litellm's real OpenAI provider path, the real sandbox, and `--record` writing the exchanges.
`selfcorrect run examples/tasks/NAME.yml --replay examples/replays/NAME.jsonl` then plays
them back offline. Token counts are estimated (4 characters a token) and priced at the
reported model's list price.

    python examples/record_replays.py [NAME ...]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selfcorrect_action.commands.run_cmd import RunOptions, run_spec  # noqa: E402
from selfcorrect_action.llm.recording import read_recording  # noqa: E402
from selfcorrect_action.runs.settings import RunSettings  # noqa: E402
from tests.fakes.openai_server import FakeOpenAIServer, Reply  # noqa: E402

EXPECTED_EXIT = {
    "bar_chart": 0, "csv_report": 0, "two_sum": 0, "missing_package": 0, "timeout": 0,
    "judge_rejection": 0, "budget_exhausted": 1, "repair_calc": 0,
}
# Repair examples run in a repository of their own: a copy of it, made a git repository
# (as a user's checkout is), holds the spec (found by name under the copy).
REPAIR_EXAMPLES = {"repair_calc": ("calc", "fix_mean.yml")}
MODEL_REPORTED = "gpt-4o-mini-2024-07-18"


def record(name: str) -> None:
    answers = YAML(typ="safe").load((ROOT / "examples" / "scripted" / f"{name}.yml").read_text())
    replay = ROOT / "examples" / "replays" / f"{name}.jsonl"
    replay.unlink(missing_ok=True)
    with FakeOpenAIServer() as server, tempfile.TemporaryDirectory() as out:
        server.script(*(Reply(content=item["answer"], prompt_tokens=None,
                              completion_tokens=max(1, len(item["answer"]) // 4),
                              model=MODEL_REPORTED) for item in answers))
        code = run_spec(
            RunOptions(task=spec_path(name, Path(out)),
                       settings=RunSettings(record=replay, api_base=server.api_base),
                       out_dir=Path(out)),
            environ={"OPENAI_API_KEY": "sk-local-scripted-server"},
        )
        if server.pending or server.overruns:
            raise SystemExit(f"{name}: {server.pending} scripted answers unused, "
                             f"{server.overruns} calls unanswered")
    purposes = [exchange.request.purpose for exchange in read_recording(replay).exchanges]
    scripted = [item["purpose"] for item in answers]
    if purposes != scripted:
        raise SystemExit(f"{name}: the run asked for {purposes}, the script answers {scripted}")
    if code != EXPECTED_EXIT[name]:
        raise SystemExit(f"{name}: exit {code}, expected {EXPECTED_EXIT[name]}")
    print(f"{name}: recorded {len(purposes)} exchanges, exit {code}")


def spec_path(name: str, scratch: Path) -> Path:
    if name not in REPAIR_EXAMPLES:
        return ROOT / "examples" / "tasks" / f"{name}.yml"
    folder, spec = REPAIR_EXAMPLES[name]
    copy = repository_copy(ROOT / "examples" / "repair" / folder, scratch / folder)
    return next(copy.rglob(spec))


def repository_copy(source: Path, target: Path) -> Path:
    """The example repository as a fresh git checkout: a copy, one commit."""
    shutil.copytree(source, target)
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=example", "-c", "user.email=example@invalid",
                  "commit", "-q", "-m", "the example repository"]):
        subprocess.run(["git", "-C", str(target), *args], check=True, capture_output=True)
    return target


def main(names: list[str]) -> None:
    # litellm reads provider keys from the process environment; the local server ignores it.
    os.environ["OPENAI_API_KEY"] = "sk-local-scripted-server"
    for name in names or list(EXPECTED_EXIT):
        record(name)


if __name__ == "__main__":
    main(sys.argv[1:])
