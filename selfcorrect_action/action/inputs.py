"""The action's inputs, as GitHub's runner passes them to a Docker action: INPUT_<NAME> with
the name upper-cased and spaces turned into `_` (hyphens stay: INPUT_GITHUB-TOKEN). The
runner fills in action.yml's defaults, so an empty value means "not set" here. Each value
is checked with the input's own name in the error, the way a maintainer wrote it."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict

from selfcorrect_action.choices import Generation, Profile, Runtime, StructuredOutput
from selfcorrect_action.errors import UsageError
from selfcorrect_action.runs import settings as run_settings

Mode = Literal["run", "plan", "publish"]
Update = Literal["check", "regenerate"]
DEFAULT_TASKS = ".selfcorrect/tasks/*.yml"
DEFAULT_PLAN_DIR = "selfcorrect-plan"


class ActionInputs(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    github_token: str
    bot_login: str | None = None
    model: str | None = None
    strong_model: str | None = None
    judge_model: str | None = None
    api_base: str | None = None
    tasks: str = DEFAULT_TASKS
    trigger_label: str = "selfcorrect"
    sandbox_runtime: Runtime | None = None
    sandbox_image: str | None = None
    patch_attempts: int | None = None
    rethink_attempts: int | None = None
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    draft_on_failure: bool = False
    base_branch: str | None = None
    replay: str | None = None
    llm_timeout_s: float | None = None
    llm_retries: int | None = None
    mode: Mode = "run"
    structured_output: StructuredOutput | None = None
    profile: Profile | None = None
    generation: Generation | None = None
    # Issue 37: whether the run's model exchanges are kept with its checkpoint (None: the
    # SELFCORRECT_RECORD_EXCHANGES variable, else yes). Without them a resumed run pays
    # every call again.
    record_exchanges: bool | None = None
    plan_dir: str = DEFAULT_PLAN_DIR
    # The scheduled update (action/autoupdate.py): on a `schedule` event (default check), or a
    # workflow_dispatch that sets it.
    update: Update | None = None

    def run_settings(self) -> dict[str, object]:
        """The inputs that are run settings, by the settings' own names (None: not given,
        so the SELFCORRECT_* variable or the default applies)."""
        return {"model": self.model, "strong_model": self.strong_model,
                "judge_model": self.judge_model, "api_base": self.api_base,
                "llm_timeout_s": self.llm_timeout_s, "llm_retries": self.llm_retries,
                "structured_output": self.structured_output, "runtime": self.sandbox_runtime,
                "profile": self.profile, "generation": self.generation,
                "sandbox_image": self.sandbox_image,
                "record_exchanges": self.record_exchanges}


def raw_input(environ: Mapping[str, str], name: str) -> str:
    return environ.get("INPUT_" + name.upper().replace(" ", "_"), "").strip()


def read_inputs(environ: Mapping[str, str]) -> ActionInputs:
    def get(name: str) -> str | None:
        return raw_input(environ, name) or None

    token = get("github-token")
    if token is None:
        raise UsageError("input github-token is empty",
                         hint="leave it at its default (${{ github.token }}) or pass a token "
                         "with contents, pull-requests and issues write access")
    def setting(name: str) -> object:
        row = run_settings.SETTING[name]
        assert row.action_input is not None
        raw = get(row.action_input)
        return row.parse(raw, f"input {row.action_input}") if raw is not None else None

    values: dict[str, object] = {
        "github_token": token,
        "bot_login": _login(get("bot-login")),
        **{name: setting(name) for name in ("model", "strong_model", "judge_model",
                                            "api_base", "llm_timeout_s", "llm_retries",
                                            "structured_output", "sandbox_image",
                                            "profile", "generation",
                                            "record_exchanges")},
        "sandbox_runtime": setting("runtime"),
        "tasks": get("tasks") or DEFAULT_TASKS,
        "trigger_label": get("trigger-label") or "selfcorrect",
        "patch_attempts": _whole(get("patch-attempts"), "patch-attempts", 0, 20),
        "rethink_attempts": _whole(get("rethink-attempts"), "rethink-attempts", 0, 10),
        "max_tokens": _whole(get("max-tokens"), "max-tokens", 1, 100_000_000),
        "max_cost_usd": _money(get("max-cost-usd")),
        "draft_on_failure": _flag(get("draft-on-failure"), "draft-on-failure"),
        "base_branch": get("base-branch"),
        "replay": _repo_path(get("replay"), "replay"),
        "mode": _choice(get("mode") or "run", "mode", ("run", "plan", "publish")),
        "plan_dir": _repo_path(get("plan-dir"), "plan-dir") or DEFAULT_PLAN_DIR,
        "update": _choice(get("update") or "", "update", ("check", "regenerate"))
        if get("update") else None,
    }
    return ActionInputs.model_validate(values)


# GitHub logins: letters, digits and single hyphens; a GitHub App's bot adds "[bot]".
_LOGIN = re.compile(r"[A-Za-z0-9](?:-?[A-Za-z0-9])*(?:\[bot\])?")


def _login(raw: str | None) -> str | None:
    if raw is None:
        return None
    if len(raw) > 60 or not _LOGIN.fullmatch(raw):
        raise UsageError(f"input bot-login: {raw!r} is not a GitHub login",
                         hint="pass the app's bot account, e.g. bot-login: "
                         "${{ steps.app-token.outputs.app-slug }}[bot]")
    return raw


def _choice(raw: str, name: str, options: tuple[str, ...]) -> str:
    if raw not in options:
        raise UsageError(f"input {name}: expected one of {', '.join(options)}, got {raw!r}",
                         hint=f"set {name}: {options[0]} in the workflow's `with:`")
    return raw


def _whole(raw: str | None, name: str, low: int, high: int) -> int | None:
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = low - 1
    if not low <= value <= high:
        raise UsageError(f"input {name}: expected a whole number from {low} to {high:,}, "
                         f"got {raw!r}", hint=f"for example {name}: {max(low, 3)}")
    return value


def _money(raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        value = float(raw.removeprefix("$"))
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not 0 <= value <= 100_000:
        raise UsageError(f"input max-cost-usd: expected dollars such as 0.50, got {raw!r}",
                         hint="write a number of US dollars, e.g. max-cost-usd: 1.00")
    return value


def _flag(raw: str | None, name: str) -> bool:
    if raw is None:
        return False
    lowered = raw.lower()
    if lowered not in ("true", "false"):
        raise UsageError(f"input {name}: expected true or false, got {raw!r}",
                         hint=f"{name}: true")
    return lowered == "true"


def _repo_path(raw: str | None, name: str) -> str | None:
    if raw is None:
        return None
    pure = PurePosixPath(raw)
    if pure.is_absolute() or ".." in pure.parts:
        raise UsageError(f"input {name}: {raw!r} must be a path inside the repository",
                         hint="write it relative to the repository root, e.g. "
                         "examples/replays/bar_chart.jsonl")
    return str(pure)
