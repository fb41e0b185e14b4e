"""Whether a model's credentials are in a run's environment, in litellm's own words (issue 38,
item 7): a missing OPENAI_API_KEY used to surface 14 s into the run, as an infrastructure
error, after its history entry and its out/ folder were made.

litellm knows which variables each provider reads (`validate_environment`), but reads them
from os.environ itself; runs take their environment as a parameter (the API's `environ=`,
the tests'), so its check is asked with that environment in place of os.environ. Loads
litellm (6 to 10 s) on the first call, not on import.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from selfcorrect_action.llm._litellm import load as load_litellm

# Providers that authenticate without the variables litellm names: a missing one is worth a
# warning, never a refusal (how they do it, as the warning says).
OTHER_AUTH = {
    "vertex_ai": "application default credentials (gcloud auth application-default login, "
                 "a service account)",
    "vertex_ai_beta": "application default credentials",
    "bedrock": "an AWS profile, an instance or task role, or SSO",
    "sagemaker": "an AWS profile, an instance or task role, or SSO",
    "sagemaker_chat": "an AWS profile, an instance or task role, or SSO",
    "azure": "Azure AD (azure_ad_token, a managed identity)",
    "azure_text": "Azure AD (azure_ad_token, a managed identity)",
}  # fmt: skip


@dataclass(frozen=True)
class KeyCheck:
    """One model's credentials as litellm sees them in an environment."""

    model: str
    provider: str  # litellm's name for it; "" when litellm cannot tell
    unset: tuple[str, ...]  # the variables litellm looks for, none of them set (or empty)

    @property
    def keys(self) -> tuple[str, ...]:
        """The unset variables that hold a secret (not OLLAMA_API_BASE, VERTEXAI_PROJECT)."""
        return tuple(name for name in self.unset if "KEY" in name or "TOKEN" in name)

    @property
    def other_auth(self) -> str | None:
        """How the provider authenticates without them, if it can."""
        return OTHER_AUTH.get(self.provider)


def key_check(model: str, environ: Mapping[str, str]) -> KeyCheck:
    litellm = load_litellm()
    try:
        provider = str(litellm.get_llm_provider(model=model)[1])
    except Exception:  # a name litellm cannot route: check_model_names says so
        return KeyCheck(model=model, provider="", unset=())
    # An empty variable is no key (a workflow's `${{ secrets.X }}` when the secret is unset).
    given = {name: value for name, value in environ.items() if value.strip()}
    report = _in_environment(litellm.validate_environment, given)(model=model)
    return KeyCheck(model=model, provider=provider,
                    unset=tuple(str(name) for name in report.get("missing_keys") or ()))


def _in_environment(function: Any, environ: Mapping[str, str]) -> Any:
    """`function` as it is, but for the `os` it sees: one whose environ is `environ`. A copy
    with its own globals: os.environ itself is never changed (runs share the process)."""
    seen = {**function.__globals__, "os": types.SimpleNamespace(environ=dict(environ))}
    copy = types.FunctionType(function.__code__, seen, function.__name__,
                              function.__defaults__, function.__closure__)
    copy.__kwdefaults__ = function.__kwdefaults__
    return copy
