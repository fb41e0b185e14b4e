"""The contract's network field (issue 19): what `validate` accepts and refuses, where, and
how a pattern matches a host."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from selfcorrect_action.contract import ExecutionContract
from selfcorrect_action.errors import SpecError
from selfcorrect_action.network_rules import (
    NetworkRules,
    address_problem,
    describe,
    matches,
    network_words,
    suggested_allow,
)
from selfcorrect_action.spec import load_spec


def _rules(**fields: object) -> NetworkRules:
    return ExecutionContract.model_validate({"network": fields}).network  # type: ignore[return-value]


def test_the_three_modes_and_their_defaults() -> None:
    assert ExecutionContract().network == "none"
    assert ExecutionContract.model_validate({"network": "open"}).network == "open"
    rules = _rules(allow=["API.Example.com.", "*.githubusercontent.com"])
    assert rules.allow == ["api.example.com", "*.githubusercontent.com"]
    assert rules.ports == [80, 443] and not rules.observe
    assert _rules(observe=True).observe


@pytest.mark.parametrize(("pattern", "said"), [
    ("10.0.0.1", "is an IP address"),
    ("169.254.169.254", "is an IP address"),
    ("[fe80::1]", "is an IP address"),
    ("::1", "is an IP address"),
    ("https://api.example.com/v1", "is a URL"),
    ("api.example.com:443", "carries a port"),
    ("localhost", "names this machine"),
    ("metadata.google.internal", "names this machine"),
    ("printer.local", "names this machine"),
    ("*.com", "too broad"),
    ("com", "too broad"),
    ("api.*.example.com", "is not a host name"),
    ("-bad.example.com", "is not a host name"),
    ("bücher.example", "not ASCII"),
])
def test_malformed_local_and_ip_patterns_are_refused(pattern: str, said: str) -> None:
    with pytest.raises(ValidationError, match=said):
        _rules(allow=[pattern])


@pytest.mark.parametrize(("fields", "said"), [
    ({}, "write `allow"),
    ({"allow": []}, "write `allow"),
    ({"allow": ["a.example.com"], "observe": True}, "takes no allow list"),
    ({"allow": ["a.example.com", "A.example.com"]}, "listed twice"),
    ({"allow": ["a.example.com"], "ports": [443, 443]}, "listed twice"),
    ({"allow": ["a.example.com"], "ports": [0]}, "greater than or equal to 1"),
    ({"allow": ["a.example.com"], "credentials": {"b.example.com": {
        "header": "X-Key", "secret": "SELFCORRECT_SECRET_KEY"}}}, "does not let through"),
    ({"allow": ["*.example.com"], "credentials": {"*.example.com": {
        "header": "X-Key", "secret": "SELFCORRECT_SECRET_KEY"}}}, "not a pattern"),
    ({"allow": ["a.example.com"], "credentials": {"a.example.com": {
        "header": "Proxy-Authorization", "secret": "SELFCORRECT_SECRET_KEY"}}},
     "the proxy's own header"),
    ({"allow": ["a.example.com"], "credentials": {"a.example.com": {
        "header": "X-Key", "secret": "not a name"}}}, "environment variable"),
    ({"allow": ["a.example.com"], "credentials": {"a.example.com": {
        "header": "X-Key", "secret": "OPENAI_API_KEY"}}}, "starting SELFCORRECT_SECRET_"),
    ({"allow": ["a.example.com"], "credentials": {"a.example.com": {
        "header": "X-Key", "secret": "GITHUB_TOKEN"}}}, "starting SELFCORRECT_SECRET_"),
    ({"allow": ["a.example.com"], "credentials": {"a.example.com": {
        "header": "X-Key", "secret": "SELFCORRECT_SECRET_"}}}, "starting SELFCORRECT_SECRET_"),
    ({"allow": ["a.example.com"], "credentials": {"a.example.com": {
        "header": "X-Key", "secret": "SELFCORRECT_SECRET_KEY_HOSTS"}}}, "binds a secret"),
])
def test_rules_that_contradict_themselves_are_refused(fields: dict[str, object],
                                                      said: str) -> None:
    with pytest.raises(ValidationError, match=said):
        _rules(**fields)


def test_validate_locates_each_bad_item(tmp_path: Path) -> None:
    spec = tmp_path / "task.yml"
    spec.write_text("prompt: p\ncontract:\n  network:\n    allow:\n      - api.example.com\n"
                    "      - 10.0.0.1\n    allw: []\n")
    with pytest.raises(SpecError) as raised:
        load_spec(spec)
    text = str(raised.value)
    assert f"{spec}:6:9: contract.network.allow.1:" in text and "IP address" in text
    assert "contract.network.allw: unknown field" in text and "did you mean allow?" in text


def test_a_word_that_is_no_mode_gets_the_three_forms_as_hint(tmp_path: Path) -> None:
    spec = tmp_path / "task.yml"
    spec.write_text("prompt: p\ncontract:\n  network: maybe\n")
    with pytest.raises(SpecError) as raised:
        load_spec(spec)
    assert "contract.network: expected none, open or a mapping; got 'maybe'" in str(raised.value)
    assert "{allow: [api.example.com]}" in str(raised.value)


@pytest.mark.parametrize(("pattern", "host", "expected"), [
    ("api.example.com", "api.example.com", True),
    ("api.example.com", "API.EXAMPLE.COM.", True),
    ("api.example.com", "x.api.example.com", False),
    ("*.example.com", "a.example.com", True),
    ("*.example.com", "a.b.example.com", True),
    ("*.example.com", "example.com", False),  # the apex is not below itself
    ("*.example.com", "badexample.com", False),
    ("*.example.com", "example.com.evil.net", False),
])
def test_how_a_pattern_matches(pattern: str, host: str, expected: bool) -> None:
    assert matches(pattern, host) is expected


@pytest.mark.parametrize(("address", "kind"), [
    ("127.0.0.1", "loopback"), ("::1", "loopback"), ("169.254.169.254", "link-local"),
    ("fe80::1", "link-local"), ("10.1.2.3", "private"), ("192.168.0.1", "private"),
    ("172.16.0.1", "private"), ("fd00::1", "private"), ("100.64.0.1", "non-public"),
    ("224.0.0.1", "multicast"), ("0.0.0.0", "unspecified"),
    ("::ffff:169.254.169.254", "link-local"),  # an IPv4-mapped address is its IPv4 one
])
def test_private_loopback_link_local_and_multicast_addresses_are_refused(
        address: str, kind: str) -> None:
    problem = address_problem(address)
    assert problem is not None and problem.startswith(kind)


def test_public_addresses_pass() -> None:
    assert address_problem("93.184.216.34") is None
    assert address_problem("2606:2800:220:1:248:1893:25c8:1946") is None


def test_the_suggested_allow_list_and_the_words_for_prompts() -> None:
    assert suggested_allow(["b.example.com", "A.example.com", "b.example.com",
                            "93.184.216.34"]) == ["a.example.com", "b.example.com"]
    rules = _rules(allow=["api.example.com"], ports=[443])
    assert describe(rules) == "allow api.example.com (ports 443)"
    assert network_words(rules) == {"network": "allow", "allowed_hosts": ["api.example.com"],
                                    "allowed_ports": [443]}
    assert network_words("open")["network"] == "open"
    assert network_words(_rules(observe=True))["network"] == "observe"
