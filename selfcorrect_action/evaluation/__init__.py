"""Judging an execution: layer 1 (execution), layer 2 (contract), and failure classification."""

from __future__ import annotations

from selfcorrect_action.evaluation.artifacts import check_artifact, detect_kind, find_record
from selfcorrect_action.evaluation.classify import classify_execution_failure
from selfcorrect_action.evaluation.layers import evaluate, evaluate_contract, evaluate_execution
from selfcorrect_action.evaluation.tracebacks import (
    Frame,
    Traceback,
    last_frame_in,
    parse_traceback,
)

__all__ = [
    "Frame",
    "Traceback",
    "check_artifact",
    "classify_execution_failure",
    "detect_kind",
    "evaluate",
    "evaluate_contract",
    "evaluate_execution",
    "find_record",
    "last_frame_in",
    "parse_traceback",
]
