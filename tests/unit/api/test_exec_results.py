"""`selfcorrect exec --json` (and the API's exec) carry the egress proxy's connection log."""

from __future__ import annotations

from selfcorrect_action.api.results import exec_result
from selfcorrect_action.contract import ExecutionContract
from selfcorrect_action.evaluation.layers import evaluate
from selfcorrect_action.sandbox.egress.records import ConnectionRecord, NetworkLog
from selfcorrect_action.sandbox.models import ExecutionResult


def test_the_connection_log_is_in_the_result_and_absent_without_network() -> None:
    log = NetworkLog(policy="open", connections=[ConnectionRecord(
        host="api.example.com", port=443, kind="https", allowed=True, bytes_sent=10)])
    ran = ExecutionResult(exit_code=0, network=log)
    shown = exec_result(ran, evaluate(ran, ExecutionContract(), script_name="s.py"), secrets=[])
    assert shown.network == log
    assert '"host":"api.example.com"' in shown.model_dump_json()
    plain = ExecutionResult(exit_code=0)
    assert exec_result(plain, evaluate(plain, ExecutionContract(), script_name="s.py"),
                       secrets=[]).network is None
