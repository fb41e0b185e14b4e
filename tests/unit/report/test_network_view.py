"""The network in the reports (issue 19): each attempt's connection log in AUDIT.md and on
the run's page, and what to write in the spec next (the allow list an observed run needed,
the line to add for a refused host) in the summary that the comment and the PR body carry."""

from __future__ import annotations

from selfcorrect_action.contract import ExecutionContract
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.network_rules import NetworkRules
from selfcorrect_action.report.audit import audit_markdown, summary_markdown
from selfcorrect_action.report.network_view import network_advice
from selfcorrect_action.sandbox.egress.records import ConnectionRecord, NetworkLog
from selfcorrect_action.taxonomy import Category
from selfcorrect_action.viewer.page import render_page
from tests.unit.report.runs import SECRETS, add_attempt, base_state, finish, result
from tests.unit.viewer.html_checks import parse

ALLOW = NetworkRules(allow=["api.example.com"], ports=[443])
REFUSED = ConnectionRecord(host="evil.example.com", port=443, kind="https", allowed=False,
                           reason="evil.example.com is not on the allow list")
REACHED = ConnectionRecord(host="api.example.com", port=443, kind="https", allowed=True,
                           address="93.184.216.34", bytes_sent=517, bytes_received=4_096)
HOSTILE = ConnectionRecord(host="x.example.com\n- y|z", port=443, kind="https", allowed=True)


def _run(network: NetworkRules, *records: ConnectionRecord) -> RunState:
    contract = ExecutionContract(network=network)
    state = base_state(contract=contract, tests={})
    log = NetworkLog(policy="the policy", allowed_hosts=list(network.allow or []),
                     observe=network.observe, connections=list(records))
    failed = result(exit_code=1, stderr="requests.exceptions.ProxyError: 403\n", network=log)
    state = add_attempt(state, "print(1)\n", failed, strategy="initial")  # type: ignore[arg-type]
    return finish(state, Status.STOPPED, "no progress")


def test_a_refused_host_is_named_with_the_line_to_add() -> None:
    state = _run(ALLOW, REACHED, REFUSED)
    assert state.attempts[0].verdict is not None
    assert state.attempts[0].verdict.category is Category.EXTERNAL
    advice = network_advice(state)
    assert advice is not None and advice.to_add == ["evil.example.com"]
    summary = summary_markdown(state, secrets=SECRETS)
    assert "**Network refused:** `evil.example.com` is not on the spec's allow list" in summary
    assert "```yaml\n      - evil.example.com\n```" in summary


def test_an_observed_run_proposes_the_exact_allow_list() -> None:
    state = _run(NetworkRules(observe=True), REACHED, HOSTILE,
                 REACHED.model_copy(update={"host": "cdn.example.net"}))
    advice = network_advice(state)
    assert advice is not None and advice.suggested == ["api.example.com", "cdn.example.net"]
    assert advice.snippet == ("contract:\n  network:\n    allow:\n      - api.example.com\n"
                              "      - cdn.example.net")
    summary = summary_markdown(state, secrets=SECRETS)
    assert "Suggested change to the task spec" in summary and advice.snippet in summary


def test_nothing_is_advised_without_rules_or_without_news() -> None:
    assert network_advice(_run(ALLOW, REACHED)) is None
    assert network_advice(base_state()) is None


def test_the_audit_and_the_page_list_every_connection() -> None:
    state = _run(ALLOW, REACHED, REFUSED)
    audit = audit_markdown(state, secrets=SECRETS)
    assert "Network: the policy; 2 connections through the egress proxy:" in audit
    assert "| api.example.com | 443 | https | allowed | 517 | 4,096 |  |" in audit
    assert ("| evil.example.com | 443 | https | refused | 0 | 0 | evil.example.com is not on "
            "the allow list |") in audit
    page = parse(render_page(state, (), secrets=SECRETS))
    assert "2 connections through the egress proxy" in page.text
    assert "evil.example.com is not on the allow list" in page.text
    assert "Network refused:" in page.text
