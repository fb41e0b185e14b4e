"""Each model's context window, as the run knows it (issue 38): litellm's model table, the
server at the API base (llama.cpp's n_ctx, vLLM's max_model_len, Ollama's num_ctx), and
what a refusal taught the run, which wins: a local server started with `--n_ctx 4096`
serves a model whose own window is larger, and only the server's refusal says so."""

from __future__ import annotations

import threading

from selfcorrect_action.loop.budget import LimitsFn, no_limits


class ContextWindows:
    """A LimitsFn (model -> (context window, longest answer)) that learns."""

    def __init__(self, known: LimitsFn = no_limits, *, served: int | None = None) -> None:
        self._known = known
        self._served = served  # the server's window, for every model it serves
        self._learned: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, model: str) -> tuple[int | None, int | None]:
        window, answer = self._known(model)
        with self._lock:
            learned = self._learned.get(model)
        if learned is not None:
            return learned, answer
        if self._served is not None:
            return (min(window, self._served) if window else self._served), answer
        return window, answer

    def learn(self, model: str, window: int) -> None:
        """A refusal named `window` for `model`: every later request is sized to it."""
        with self._lock:
            known = self._learned.get(model)
            self._learned[model] = min(known, window) if known else window
