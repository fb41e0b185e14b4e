"""The only place that sets litellm up, so the process-wide settings are made exactly once.

Importing litellm takes 6 to 10 s on the 2-core CI machines, so nothing imports it until the
first client needs it: `selfcorrect validate` never pays for it.
"""

from __future__ import annotations

import functools
import os
import warnings
from types import ModuleType

# Read by litellm at import time, so they are set when this package is imported (the llm
# package's __init__ imports this module first), before any module can import litellm.
# Without them litellm fetches its price table, Anthropic beta-header table and similar
# catalogs from GitHub on its own; offline that cost ~10 s of retries in a background thread
# that outlives the test that started it. The copies litellm ships are enough.
_OFFLINE_DEFAULTS = {
    "LITELLM_OFFLINE_MODE": "true",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
}
for _name, _value in _OFFLINE_DEFAULTS.items():
    os.environ.setdefault(_name, _value)


@functools.cache
def load() -> ModuleType:
    # pydantic warns about every ReadOnly TypedDict of litellm's on its first call; the warnings
    # say nothing about our code and would bury our own in each run's log.
    warnings.filterwarnings(
        "ignore", message=r".*using the `ReadOnly` qualifier", category=UserWarning
    )
    import litellm

    # Its "Give Feedback / Get Help" banners would land in the user's logs on every error.
    litellm.suppress_debug_info = True
    # Nothing is sent anywhere on our behalf: no logging or telemetry callbacks.
    litellm.success_callback = []
    litellm.failure_callback = []
    litellm.callbacks = []
    if hasattr(litellm, "telemetry"):  # older versions phoned home unless told not to
        litellm.telemetry = False
    from selfcorrect_action.llm import replay_provider

    replay_provider.register()
    return litellm
