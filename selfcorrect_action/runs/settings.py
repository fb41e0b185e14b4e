"""What a run is configured with, whatever front end started it: a command line, the action's
inputs, or a benchmark. Values from the environment are read here, once, with errors that name
the variable; nothing below this module reads os.environ."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from selfcorrect_action.choices import (
    DEFAULT_MLFLOW_STORE,
    GENERATIONS,
    ORCHESTRATORS,
    PROFILES,
    RUNTIMES,
    STRUCTURED_CHOICES,
    Generation,
    Orchestrator,
    Profile,
    Runtime,
    StructuredOutput,
)
from selfcorrect_action.errors import UsageError
from selfcorrect_action.history.location import ENV_HISTORY, default_history_dir
from selfcorrect_action.llm.client import DEFAULT_TIMEOUT_S

ENV_MODEL = "SELFCORRECT_MODEL"
ENV_API_BASE = "SELFCORRECT_API_BASE"
ENV_LLM_TIMEOUT = "SELFCORRECT_LLM_TIMEOUT_S"
ENV_LLM_RETRIES = "SELFCORRECT_LLM_RETRIES"
ENV_STRUCTURED = "SELFCORRECT_STRUCTURED_OUTPUT"
ENV_RUNTIME = "SELFCORRECT_RUNTIME"
ENV_SANDBOX_IMAGE = "SELFCORRECT_SANDBOX_IMAGE"
ENV_PROFILE = "SELFCORRECT_PROFILE"
ENV_GENERATION = "SELFCORRECT_GENERATION"
ENV_ORCHESTRATOR = "SELFCORRECT_ORCHESTRATOR"
ENV_CHECKPOINTS = "SELFCORRECT_CHECKPOINTS"
ENV_RECORD_EXCHANGES = "SELFCORRECT_RECORD_EXCHANGES"
# MLflow's own variables: a team that tracks with MLflow has them set already.
ENV_MLFLOW = "MLFLOW_TRACKING_URI"
ENV_MLFLOW_EXPERIMENT = "MLFLOW_EXPERIMENT_NAME"
ENV_MLFLOW_TRACES = "SELFCORRECT_MLFLOW_TRACES"
TRACKING_SCHEMES = ("http", "https", "file", "sqlite", "postgresql", "mysql", "mssql",
                    "databricks", "databricks-uc", "uc")
CHECKPOINTS_FILE = "checkpoints.sqlite"  # in the history folder, unless --checkpoints says
DEFAULT_LLM_RETRIES = 3
MAX_LLM_TIMEOUT_S = 3600.0
MAX_LLM_RETRIES = 10


class RunSettings(BaseModel):
    """Everything about a run that is not in the task spec."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str | None = None  # every tier, over the spec's `models:`
    strong_model: str | None = None  # the strong tier, over `model` (the action's input)
    judge_model: str | None = None  # the judge tier, over `model`
    fallback_model: str | None = None  # the tiers the spec leaves out (SELFCORRECT_MODEL)
    api_base: str | None = None  # an OpenAI-compatible gateway, a LiteLLM proxy, Ollama...
    replay: Path | None = None
    record: Path | None = None
    runtime: Runtime = "runc"
    guidance: str = ""
    # A hanging API used to block 4 x 180 s with nothing on screen and no way to shorten it.
    llm_timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0, le=MAX_LLM_TIMEOUT_S)
    llm_retries: int = Field(default=DEFAULT_LLM_RETRIES, ge=0, le=MAX_LLM_RETRIES)
    sandbox_image: str | None = None  # a prebuilt image to use instead of building ours
    # How structured answers are asked for (llm/formats.py): "auto" sends a JSON Schema
    # where litellm says the model enforces one; OpenAI-compatible servers opt in.
    structured_output: StructuredOutput = "auto"
    profile: Profile = "auto"
    # None: not given, so the spec's `generation:` applies (a flag or input still wins).
    generation: Generation | None = None
    # The run history (history/store.py): where it is kept, and whether this run goes in.
    # None: nowhere (no HOME to find the default under, or settings built in code).
    history: Path | None = None
    keep_history: bool = True
    # What drives the loop's steps (issue 23), where LangGraph keeps each step's checkpoint
    # (None: in the history folder), and the run an interrupted one is resumed as.
    orchestrator: Orchestrator = "plain"
    checkpoints: Path | None = None
    # Resumable runs (issue 37): a run id or a checkpoint folder to go on from, and the
    # budget given beyond the spec's (for a run that ended spent); whether the model
    # exchanges are recorded into the run's checkpoint folder, which is in the history
    # folder unless a front end chose one (the action: a folder it keeps in a ref); the
    # digest of the approved issue body a checkpoint is bound to (the action's).
    resume: str | None = None
    more_attempts: int = Field(default=0, ge=0, le=40)
    more_tokens: int = Field(default=0, ge=0, le=100_000_000)
    more_usd: float = Field(default=0.0, ge=0, le=100_000, allow_inf_nan=False)
    record_exchanges: bool = True
    checkpoint_dir: Path | None = None
    approval_sha256: str | None = None
    # MLflow tracking (issue 23): the tracking URI (None: none), the experiment (None: the
    # front end's: "selfcorrect", the benchmark's own), and every model call as a trace.
    mlflow: str | None = None
    mlflow_experiment: str | None = None
    mlflow_traces: bool = False

    @property
    def replaying(self) -> bool:
        return self.replay is not None

    @property
    def checkpoints_file(self) -> Path | None:
        """The SQLite file of a LangGraph run's checkpoints; None: none are kept (no
        history folder to keep them in, and no --checkpoints)."""
        if self.checkpoints is not None:
            return self.checkpoints
        return self.history / CHECKPOINTS_FILE if self.history is not None else None

    @property
    def history_dir(self) -> Path | None:
        """Where this run is recorded, or None when it is not."""
        return self.history if self.keep_history else None


def llm_timeout(raw: str, where: str) -> float:
    """A request timeout in seconds, from a flag, an input or a variable named `where`."""
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not 0 < value <= MAX_LLM_TIMEOUT_S:
        raise UsageError(f"{where}: expected seconds in (0, {MAX_LLM_TIMEOUT_S:g}], got {raw!r}",
                         hint=f"for example {where}=120")
    return value


def llm_retries(raw: str, where: str) -> int:
    """How many times a failed model call is retried (0 = never)."""
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_LLM_RETRIES:
        raise UsageError(f"{where}: expected a whole number from 0 to {MAX_LLM_RETRIES}, "
                         f"got {raw!r}", hint=f"for example {where}=3")
    return value


def api_base(raw: str, where: str) -> str:
    """An http(s) URL with a host: a typo here used to surface only after every retry."""
    parts = urlsplit(raw.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"{where}: {raw!r} is not an http(s) URL with a host",
                         hint="for example http://127.0.0.1:11434 (Ollama) or "
                         "https://my-gateway.example.com/v1")
    try:
        parts.port  # noqa: B018  # raises on a port that is not a number
    except ValueError as exc:
        raise UsageError(f"{where}: {raw!r} has an invalid port",
                         hint="write the port as a number, e.g. :8080") from exc
    return raw.strip()


def structured_output(raw: str, where: str) -> str:
    value = raw.strip().lower()
    if value not in STRUCTURED_CHOICES:
        raise UsageError(f"{where}: expected one of {', '.join(STRUCTURED_CHOICES)}, got "
                         f"{raw!r}", hint="json-object-schema for llama.cpp's server, "
                         "json-schema for vLLM, Ollama and LM Studio, auto for hosted models")
    return value


def _one_of(choices: tuple[str, ...], example: str) -> Callable[[str, str], str]:
    def parse(raw: str, where: str) -> str:
        value = raw.strip().lower()
        if value not in choices:
            raise UsageError(f"{where}: expected one of {', '.join(choices)}, got {raw!r}",
                             hint=f"for example {where}={example}")
        return value
    return parse


def _model_name(raw: str, where: str) -> str | None:
    return raw.strip() or None


def history_dir(raw: str, where: str) -> Path:
    return Path(raw.strip()).expanduser()


def tracking_uri(raw: str, where: str) -> str:
    """An MLflow tracking URI; a path is a local store (*.db: SQLite, else a folder: a
    file store), made absolute so a run started elsewhere logs to the same one."""
    value = raw.strip()
    scheme = urlsplit(value).scheme
    if scheme in TRACKING_SCHEMES or value in ("databricks", "databricks-uc", "uc"):
        return value
    if len(scheme) > 1:  # "C:" is a drive, not a scheme
        raise UsageError(f"{where}: {raw!r} is not a tracking URI MLflow takes",
                         hint="for example http://127.0.0.1:5000 (a tracking server), "
                         "sqlite:///mlflow.db, or a path (FILE.db: SQLite; a folder: a file "
                         "store)")
    path = Path(value).expanduser().resolve()
    return f"sqlite:///{path}" if path.suffix == ".db" else path.as_uri()


def _switch(raw: str, where: str) -> bool:
    """A flag that turns something on (--mlflow-traces), or a variable saying yes or no."""
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise UsageError(f"{where}: expected yes or no, got {raw!r}", hint=f"for example {where}=1")


def file_path(raw: str, where: str) -> Path:
    return Path(raw.strip()).expanduser()


def _no(raw: str, where: str) -> bool:
    """A flag that turns something off (--no-history): given at all, it is off."""
    return False


def runtime(raw: str, where: str) -> str:
    value = raw.strip()
    if value not in RUNTIMES:
        raise UsageError(f"{where}: expected one of {', '.join(RUNTIMES)}, got {raw!r}",
                         hint="runc for Docker's default runtime, runsc for gVisor")
    return value


@dataclass(frozen=True)
class Setting:
    """One row of the precedence table: where a front end takes the value from, first to
    last. A flag (the CLI) or an input (the action) wins over the environment variable,
    which wins over the default; a blank value is not given."""

    name: str
    flag: str | None
    action_input: str | None
    variable: str | None
    parse: Callable[[str, str], object]
    default: str  # as shown by `selfcorrect config`
    # A default that depends on the environment (the XDG data folder), else the field's own.
    default_of: Callable[[Mapping[str, str]], object] | None = None


SETTINGS: tuple[Setting, ...] = (
    Setting("model", "--model", "model", None, _model_name, "the spec's `models:`"),
    Setting("strong_model", None, "strong-model", None, _model_name, "the spec's, or model"),
    Setting("judge_model", None, "judge-model", None, _model_name, "the spec's, or model"),
    Setting("fallback_model", None, None, ENV_MODEL, _model_name,
            "openai/gpt-4o-mini (cheap, judge), openai/gpt-4o (strong)"),
    Setting("api_base", "--api-base", "api-base", ENV_API_BASE, api_base,
            "the provider's own"),
    Setting("llm_timeout_s", "--llm-timeout", "llm-timeout", ENV_LLM_TIMEOUT, llm_timeout,
            f"{DEFAULT_TIMEOUT_S:g}"),
    Setting("llm_retries", "--llm-retries", "llm-retries", ENV_LLM_RETRIES, llm_retries,
            f"{DEFAULT_LLM_RETRIES}"),
    Setting("structured_output", "--structured-output", "structured-output", ENV_STRUCTURED,
            structured_output, "auto"),
    Setting("profile", "--profile", "profile", ENV_PROFILE, _one_of(PROFILES, "small"),
            "auto (small for a model of 3B parameters or fewer, where its size is known)"),
    Setting("generation", "--generation", "generation", ENV_GENERATION,
            _one_of(GENERATIONS, "completion"), "the spec's `generation:`, else auto"),
    Setting("runtime", "--runtime", "sandbox-runtime", ENV_RUNTIME, runtime, "runc"),
    Setting("sandbox_image", "--sandbox-image", "sandbox-image", ENV_SANDBOX_IMAGE,
            _model_name, "built from sandbox/ (reused while current)"),
    Setting("history", "--history", None, ENV_HISTORY, history_dir,
            "$XDG_DATA_HOME/selfcorrect, else ~/.local/share/selfcorrect",
            default_of=default_history_dir),
    Setting("keep_history", "--no-history", None, None, _no, "True: every run is recorded"),
    Setting("orchestrator", "--orchestrator", None, ENV_ORCHESTRATOR,
            _one_of(ORCHESTRATORS, "langgraph"), "plain"),
    Setting("checkpoints", "--checkpoints", None, ENV_CHECKPOINTS, file_path,
            f"{CHECKPOINTS_FILE} in the history folder"),
    Setting("record_exchanges", "--no-record-exchanges", "record-exchanges",
            ENV_RECORD_EXCHANGES, _switch,
            "True: every model exchange is kept with the run's checkpoint"),
    Setting("mlflow", "--mlflow", None, ENV_MLFLOW, tracking_uri,
            f"no tracking (--mlflow alone: {DEFAULT_MLFLOW_STORE} in the current folder)"),
    Setting("mlflow_experiment", "--mlflow-experiment", None, ENV_MLFLOW_EXPERIMENT,
            _model_name, "selfcorrect (the benchmark's: selfcorrect-bench)"),
    Setting("mlflow_traces", "--mlflow-traces", None, ENV_MLFLOW_TRACES, _switch,
            "False: no traces"),
)
SETTING = {setting.name: setting for setting in SETTINGS}


@dataclass(frozen=True)
class Given:
    """A value a front end was given, already checked, and what it was given as (a flag
    such as --model, an input such as `input model`), for `selfcorrect config`."""

    value: object
    source: str


@dataclass(frozen=True)
class Resolved:
    settings: RunSettings
    sources: dict[str, str]  # setting name -> "--model", "SELFCORRECT_MODEL", "default"...


def resolve(environ: Mapping[str, str], given: Mapping[str, Given | None]) -> Resolved:
    """The one reading of a run's settings: what a front end was `given` (None = not
    given), then the environment variables of the table, then the defaults (the history's
    from the environment too: XDG_DATA_HOME or HOME). Settings that are not in the table
    (replay, record, guidance, resume, more_*, checkpoint_dir, approval_sha256) come only
    from `given`."""
    values: dict[str, object] = {}
    sources: dict[str, str] = {}
    for name, item in given.items():
        if item is not None and item.value is not None:
            values[name], sources[name] = item.value, item.source
    for setting in SETTINGS:
        raw = environ.get(setting.variable, "") if setting.variable else ""
        if setting.name not in values and raw.strip():
            parsed = setting.parse(raw, setting.variable or setting.name)
            if parsed is not None:
                values[setting.name], sources[setting.name] = parsed, setting.variable or ""
        if setting.name not in values and setting.default_of is not None:
            values[setting.name] = setting.default_of(environ)
    try:
        settings = RunSettings.model_validate(values)
    except ValidationError as exc:
        problem = exc.errors()[0]
        name = str(problem["loc"][0]) if problem["loc"] else "settings"
        raise UsageError(f"{sources.get(name, name)}: {problem['msg']}",
                         hint="see `selfcorrect config` for every setting and its source"
                         ) from exc
    for setting in SETTINGS:
        sources.setdefault(setting.name, "default")
    return Resolved(settings, sources)


def described(resolved: Resolved) -> str:
    """The settings that are not at their defaults, each with its source, on one line: what
    a log shows so "why did it use that model?" is answered where the run is."""
    parts = []
    for setting in SETTINGS:
        source = resolved.sources.get(setting.name, "default")
        if source != "default":
            value = getattr(resolved.settings, setting.name)
            if setting.name == "api_base":  # a gateway URL may carry credentials
                value = _without_credentials(str(value))
            parts.append(f"{setting.name}={value} ({source})")
    return "; ".join(parts)


def _without_credentials(url: str) -> str:
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return parts._replace(netloc="***@" + parts.netloc.rpartition("@")[2]).geturl()


def flag_values(raw: Mapping[str, str | None]) -> dict[str, Given | None]:
    """A command line's raw values (setting name -> text or None), each checked and named by
    its flag; the values argparse already checked (choices) go through the same parse."""
    return {name: _given(SETTING[name].parse, text, SETTING[name].flag or name)
            for name, text in raw.items()}


def input_values(raw: Mapping[str, str | None]) -> dict[str, Given | None]:
    """The action's raw inputs (setting name -> text or None), named as `input NAME`."""
    return {name: _given(SETTING[name].parse, text, f"input {SETTING[name].action_input}")
            for name, text in raw.items()}


def argument_values(raw: Mapping[str, str | None]) -> dict[str, Given | None]:
    """Values a program passed (the Python API's keyword arguments), named as `argument
    NAME`: they win over the environment, as flags do."""
    return {name: _given(SETTING[name].parse, text, f"argument {name}")
            for name, text in raw.items()}


def _given(parse: Callable[[str, str], object], text: str | None, source: str
           ) -> Given | None:
    if text is None or not text.strip():
        return None
    return Given(parse(text, source), source)


def history_folder(environ: Mapping[str, str], flag: str | None) -> Path | None:
    """The history folder alone, by the table's precedence (--history, SELFCORRECT_HISTORY,
    the XDG default): what `history`, `show` and `view` read, whatever else is set."""
    row = SETTING["history"]
    for raw, where in ((flag, row.flag), (environ.get(ENV_HISTORY), ENV_HISTORY)):
        if raw is not None and raw.strip():
            return history_dir(raw, where or "")
    return default_history_dir(environ)


def from_environment(environ: Mapping[str, str], **given: object) -> RunSettings:
    """Settings from already-checked values (None = not given) and the environment: for
    callers that do not report where a value came from (tests, benchmarks)."""
    return resolve(environ, {name: Given(value, name) for name, value in given.items()
                             if value is not None}).settings
