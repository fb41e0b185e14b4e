"""Experiment tracking (issue 23): each run logged to MLflow, to compare prompt and model
changes over time. The `mlflow` extra; this module imports none of it and says how to
install it when it is missing."""

from __future__ import annotations

import importlib

from selfcorrect_action.errors import UsageError

MLFLOW_HINT = ("pip install 'selfcorrect-action[mlflow]' (MLflow is an optional extra; it "
               "brings its tracking server and UI, and their dependencies)")


def require_mlflow(what: str) -> None:
    """Raise a UsageError (exit 2) saying how to install MLflow, if it is missing."""
    try:
        importlib.import_module("mlflow")
    except ImportError as exc:
        if not (exc.name or "").startswith("mlflow"):
            raise
        raise UsageError(f"{what} needs the mlflow extra ({exc})", hint=MLFLOW_HINT) from exc
