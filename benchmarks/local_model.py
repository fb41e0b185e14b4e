"""What a tiny local model achieves with selfcorrect: the seven examples and 20 HumanEval
problems (HumanEval/0..19 as `kind: function` specs with their own tests frozen, see
tests/fixtures/real_model/specs/) run for real against an OpenAI-compatible server, not
replayed. Per task: status, attempts (of the budget's maximum), tokens, wall time, and the
time spent waiting on the model (the sum of every LLMCall.latency_ms in run.json), the
failure category of each failed attempt; then totals. Prints a Markdown table.

Not in CI: it needs the server. Here it is llama-cpp-python serving SmolLM2-135M-Instruct:

    python -m llama_cpp.server --model SmolLM2-135M-Instruct.Q4_1.gguf --model_alias smollm2 \\
        --host 127.0.0.1 --port 8765 --n_ctx 4096 --n_threads 2
    .venv/bin/python benchmarks/local_model.py [--api-base http://127.0.0.1:8765/v1] \\
        [--model openai/smollm2] [--only two_sum humaneval_3 ...] [--label TEXT] \\
        [--table FILE] [--keep DIR]

About 55 minutes for all 27 tasks on this 2-core machine. --keep DIR keeps each run's
output folder (run.json, AUDIT.md) and progress log under DIR/<task>/.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

from record_real_model import (  # noqa: E402
    add_server_arguments,
    chosen_names,
    markdown_table,
    run_task,
    spec_for,
    write_humaneval_specs,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_server_arguments(parser, "run")
    parser.add_argument("--label", default="",
                        help='what the model is, for the table title, e.g. "SmolLM2-135M-'
                        'Instruct Q4_1 on llama-cpp-python 0.3.36"')
    parser.add_argument("--table", type=Path, default=None,
                        help="also write the table here, rewritten after every task (a run "
                        "stopped early leaves the table of the tasks done)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="keep each run's output folder and progress log here")
    args = parser.parse_args(argv)

    write_humaneval_specs()
    names = chosen_names(parser, args.only)
    rows = []
    label = f" ({args.label})" if args.label else ""
    title = f"`benchmarks/local_model.py`: {args.model}{label} at {args.api_base}"
    with tempfile.TemporaryDirectory(prefix="local-model-bench-") as tmp:
        base = (args.keep or Path(tmp)).resolve()
        for name in names:
            folder = base / name
            folder.mkdir(parents=True, exist_ok=True)
            row, _ = run_task(name, spec_for(name), api_base=args.api_base,
                              model=args.model, out_dir=folder / "out", record=None,
                              log=folder / "progress.log")
            rows.append(row)
            print(f"{name}: {row.status}, {row.attempts} attempts, {row.tokens:,} tokens, "
                  f"{row.wall_s:.0f} s, {row.llm_wait_s:.0f} s on the model", file=sys.stderr,
                  flush=True)
            if args.table:
                args.table.write_text(markdown_table(rows, title=title))
    print(markdown_table(rows, title=title))
    return 0 if all(row.exit_code in (0, 1) for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
