"""The values and bounds every layer agrees on, named once: for the command line's parser,
the spec's contract, the sandbox's records and the settings table. Import-light on purpose
(the CLI builds its parser from it before anything heavy loads)."""

from __future__ import annotations

from typing import Literal, get_args

Runtime = Literal["runc", "runsc"]
RUNTIMES: tuple[str, ...] = get_args(Runtime)

# How structured answers are asked for (llm/formats.py).
StructuredOutput = Literal["auto", "json-schema", "json-object-schema", "json-object", "off"]
STRUCTURED_CHOICES: tuple[str, ...] = get_args(StructuredOutput)

# How much to ask of the model at once (issue 21): `small` is a short system prompt, the
# code's start given, one instruction per message, shorter answers, temperature 0 first.
# `auto` picks small for a model of 3B parameters or fewer, where its size is known.
Profile = Literal["auto", "standard", "small"]
PROFILES: tuple[str, ...] = get_args(Profile)

# How code is asked for: chat (the answer holds the file), completion (the model continues
# the function's own code, as HumanEval is designed; `kind: function` only), or auto.
Generation = Literal["auto", "chat", "completion"]
GENERATIONS: tuple[str, ...] = get_args(Generation)

# The longest a script may run (seconds): the contract's ceiling and the sandbox's.
MAX_TIMEOUT_S = 3600.0

# What drives the loop's steps (issue 23): `plain`, loop/orchestrator.py's own loop, or
# `langgraph`, the same step functions as the nodes of a LangGraph StateGraph, whose SQLite
# checkpoints let an interrupted run resume (the `langgraph` extra).
Orchestrator = Literal["plain", "langgraph"]
ORCHESTRATORS: tuple[str, ...] = get_args(Orchestrator)

# How a run ended (loop/state.py's Status, whose values these are; a test holds them
# equal): the history's --status filter names them without importing the loop's state,
# whose imports (pydantic models, docker, httpx) cost every command about 0.9 s (issue 36,
# item 8).
RunStatus = Literal["running", "passed", "exhausted", "stopped", "cancelled", "error"]
RUN_STATUSES: tuple[str, ...] = get_args(RunStatus)

# `--mlflow` alone: a SQLite store in the current folder, where `mlflow ui` looks first.
# (MLflow's file store, ./mlruns, is in maintenance mode: MLflow refuses to write to one
# unless MLFLOW_ALLOW_FILE_STORE=true.)
DEFAULT_MLFLOW_STORE = "mlflow.db"
