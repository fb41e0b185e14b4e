"""The network as the reports show it (issue 19): each attempt's connection log as rows, and
for the run what to write next: after `observe: true`, the exact `allow:` list the run
needed; after a refusal under an allow list, the one line to add for each refused host."""

from __future__ import annotations

from dataclasses import dataclass

from selfcorrect_action.loop.state import RunState
from selfcorrect_action.network_rules import NetworkRules, is_ip_literal, suggested_allow
from selfcorrect_action.report import text
from selfcorrect_action.sandbox.egress.records import NetworkLog
from selfcorrect_action.sandbox.models import ExecutionResult
from selfcorrect_action.templating import render

REFUSED_BY_LIST = "is not on the allow list"


@dataclass(frozen=True)
class ConnectionRow:
    host: str
    port: str
    kind: str
    verdict: str  # "allowed" or "refused"
    sent: str
    received: str
    reason: str


@dataclass(frozen=True)
class NetworkAdvice:
    """What the run says about its network: `suggested` (observe: the allow list it
    needed, and `snippet`, the spec's lines) or `to_add` (refused hosts not on the list)."""

    observed: bool
    suggested: list[str]
    to_add: list[str]
    snippet: str


def connection_rows(log: NetworkLog | None) -> list[ConnectionRow]:
    if log is None:
        return []
    return [ConnectionRow(
        host=record.host or "(none)", port=str(record.port) if record.port else "",
        kind=record.kind, verdict="allowed" if record.allowed else "refused",
        sent=text.number(record.bytes_sent), received=text.number(record.bytes_received),
        reason=record.reason or "") for record in log.connections]


def log_notes(log: NetworkLog | None) -> list[str]:
    """What the rows do not say: connections past the listed ones, the byte cap."""
    if log is None:
        return []
    notes = [f"{log.dropped} more connections were not listed"] if log.dropped else []
    if log.capped:
        notes.append("the run's byte cap ended its traffic")
    return notes


def network_advice(state: RunState) -> NetworkAdvice | None:
    """None unless the contract's network is observed or an allow list refused a host."""
    rules = state.contract.network
    if not isinstance(rules, NetworkRules):
        return None
    logs = [log for result in _results(state) if (log := result.network) is not None]
    if rules.observe:
        hosts = suggested_allow([host for log in logs for host in log.reached()])
        return NetworkAdvice(True, hosts, [], _snippet(hosts, rules.ports)) if hosts else None
    refused = [record.host for log in logs for record in log.refused()
               if REFUSED_BY_LIST in (record.reason or "") and not is_ip_literal(record.host)]
    to_add = suggested_allow(refused)
    if not to_add:
        return None
    return NetworkAdvice(False, [], to_add, _snippet([*(rules.allow or []), *to_add],
                                                     rules.ports))


def _results(state: RunState) -> list[ExecutionResult]:
    return [result for attempt in state.attempts
            for result in (attempt.execution, attempt.test_execution) if result is not None]


def _snippet(hosts: list[str], ports: list[int]) -> str:
    return render("reports/network_allow.yml.j2", hosts=hosts, ports=ports).strip()
