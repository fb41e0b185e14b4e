"""How a run asks its model for code, decided once the server is known: the profile
(standard or small) and the generation (chat or completion). Pure.

Small models (issue 21) drown in a long system prompt and a contract they cannot use; they
do better continuing the code they were given. Where the user said nothing (`auto`), the
model's size decides the profile, as the server reports it or as its name says
(SmolLM2-135M, qwen2.5-coder:1.5b), and what the server serves decides the generation.
The small profile also draws an unrunnable answer again (`redraws`) before it counts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

from selfcorrect_action.llm.server_probe import ServerInfo, params_in_name
from selfcorrect_action.loop.function_target import target_of
from selfcorrect_action.loop.profile import OPEN_REASON, SMALL_REDRAWS
from selfcorrect_action.loop.state import RunState
from selfcorrect_action.records import evolve
from selfcorrect_action.runs.settings import RunSettings

SMALL_MODEL_PARAMS = 3_000_000_000


def fitted(state: RunState, settings: RunSettings, server: ServerInfo | None,
           recorded: Mapping[str, str] | None = None) -> RunState:
    """The state with its profile, generation and server decided. `recorded`: what a
    replayed recording's header says the run decided, which `auto` takes as it was."""
    recorded = recorded or {}
    profile, reason = profile_for(state, settings, server)
    generation = generation_for(state, settings, server)
    # Left to the answers only where a small model may be behind the name: a local server
    # (an API base, or a local provider), never a replay unless its recording was so left.
    is_open = reason == OPEN_REASON and not settings.replaying and is_local(
        state.models.cheap, settings)
    if reason == OPEN_REASON and not is_open:
        reason = "standard: the model's size is unknown, and it is no local server's"
    if settings.profile == "auto" and recorded.get("profile") in ("standard", "small"):
        profile = "small" if recorded["profile"] == "small" else "standard"
        # A replay decides as its recording did, switching where it switched.
        is_open = recorded.get("profile_open") == "1"
        reason = OPEN_REASON if is_open else f"{profile}, as the recording was made"
    if settings.generation is None and state.spec.generation in (None, "auto") and \
            recorded.get("generation") in ("chat", "completion"):
        generation = "completion" if recorded["generation"] == "completion" else "chat"
    # A replay draws again where its recording did: one made before redraws has none.
    redraws = (int(recorded["redraws"]) if "redraws" in recorded
               else SMALL_REDRAWS if profile == "small" else 0)
    return evolve(state, {"profile": profile, "generation": generation, "server": server,
                          "redraws": redraws, "profile_reason": reason,
                          "profile_open": is_open})


LOCAL_PROVIDERS = ("ollama/", "ollama_chat/", "lm_studio/", "hosted_vllm/", "llamafile/")


def is_local(model: str, settings: RunSettings) -> bool:
    """Whether the model may be a small one served locally: an API base was given, or the
    provider is a local server's (a hosted model's size goes unsaid, and it is not small)."""
    return settings.api_base is not None or model.startswith(LOCAL_PROVIDERS)


RunProfile = Literal["standard", "small"]
RunGeneration = Literal["chat", "completion"]


def profile_for(state: RunState, settings: RunSettings, server: ServerInfo | None
                ) -> tuple[RunProfile, str]:
    """The profile, and why: the setting; else the model's size as the server or the
    model's name says it; else standard until an answer says otherwise (OPEN_REASON)."""
    if settings.profile == "small" or settings.profile == "standard":
        return settings.profile, f"{settings.profile}, as set"
    said = server.model_params if server else None
    params = said or params_in_name(state.models.cheap)
    if params is None:
        return "standard", OPEN_REASON
    profile: RunProfile = "small" if params <= SMALL_MODEL_PARAMS else "standard"
    source = "the server says" if said else "its name says"
    return profile, (f"{profile}: {source} the model has {params / 1e9:g}B parameters "
                     f"({'at most' if profile == 'small' else 'over'} "
                     f"{SMALL_MODEL_PARAMS / 1e9:g}B)")


def generation_for(state: RunState, settings: RunSettings, server: ServerInfo | None
                   ) -> RunGeneration:
    wanted = settings.generation or state.spec.generation or "auto"
    if state.spec.kind != "function":
        return "chat"
    target = target_of(state)
    if target is None or not target.head:
        return "chat"  # nothing to continue: completion needs the function's start
    if wanted == "chat" or wanted == "completion":
        return wanted
    # litellm's text completion reaches an OpenAI-compatible server's /v1/completions for
    # the `openai/<name>` spelling: what --api-base servers are named as. And only for a
    # model made to continue text: a chat model (SmolLM2-135M-Instruct, measured) asked to
    # continue a function closes the code block and writes prose (issue 21).
    completions = (server is not None and server.completions
                   and state.models.cheap.startswith("openai/")
                   and continues_text(state.models.cheap))
    return "completion" if completions else "chat"


_BASE_MODEL = re.compile(r"(?:^|[-_./:])(?:base|starcoder\w*|codegen\w*|santacoder|"
                         r"stable-code|codellama-\d+b(?!-instruct))(?:$|[-_./:])",
                         re.IGNORECASE)


def continues_text(model: str) -> bool:
    """Whether the model's name says it is a base (completion) model, not a chat one."""
    return _BASE_MODEL.search(model) is not None and not re.search(
        r"instruct|chat|-it(?:$|[-_./:])", model, re.IGNORECASE)
