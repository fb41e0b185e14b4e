"""Orchestrators beside the plain loop (loop/orchestrator.py), each behind an optional extra:
`langgraph` runs the same steps as a LangGraph graph with SQLite checkpoints. This module
imports none of them: it says how to install what is missing."""

from __future__ import annotations

import importlib

from selfcorrect_action.errors import UsageError

LANGGRAPH_HINT = ("pip install 'selfcorrect-action[langgraph]' (LangGraph and its SQLite "
                  "checkpointer are an optional extra)")


def require_langgraph(what: str) -> None:
    """Raise a UsageError (exit 2) saying how to install LangGraph, if it is missing."""
    for module in ("langgraph.graph", "langgraph.checkpoint.sqlite"):
        try:
            importlib.import_module(module)
        except ImportError as exc:
            if not (exc.name or "").startswith("langgraph"):
                raise
            raise UsageError(f"{what} needs the langgraph extra ({exc})",
                             hint=LANGGRAPH_HINT) from exc
