"""The proxy's decision for one host and port: rules, then its own lookup, every answer
held to address_problem."""

from __future__ import annotations

import pytest

from selfcorrect_action.errors import UsageError
from selfcorrect_action.network_rules import Credential, NetworkRules
from selfcorrect_action.sandbox.egress.policy import (
    TEST_LOOPBACK_HOSTS,
    EgressSettings,
    credential_header,
    decide,
    require_credentials,
    secret_values,
    settings_from_environ,
)

RULES = NetworkRules.model_validate({
    "allow": ["api.example.com", "*.cdn.example.com"], "ports": [443],
    "credentials": {"api.example.com": {"header": "Authorization",
                                        "secret": "SELFCORRECT_SECRET_API_KEY"}}})
ANSWERS = {"api.example.com": ["93.184.216.34"], "a.cdn.example.com": ["169.254.169.254"],
           "stand-in.example.com": ["127.0.0.1"], "mixed.example.com": ["93.184.216.34",
                                                                        "10.0.0.1"]}
LOOKUPS: list[str] = []


def _resolve(host: str, port: int) -> list[str]:
    LOOKUPS.append(host)
    return ANSWERS.get(host, [])


SETTINGS = EgressSettings(resolve=_resolve, loopback_names=frozenset({"stand-in.example.com"}))


def test_an_allowed_name_connects_to_the_address_it_was_checked_at() -> None:
    decision = decide(RULES, "API.example.com", 443, SETTINGS)
    assert decision.allowed and decision.address == "93.184.216.34"


def test_the_rules_refuse_before_any_lookup() -> None:
    LOOKUPS.clear()
    assert decide(RULES, "evil.example.com", 443, SETTINGS).reason == (
        "evil.example.com is not on the allow list")
    assert decide(RULES, "api.example.com", 80, SETTINGS).reason == (
        "port 80 is not in ports (443)")
    assert "IP address" in str(decide(RULES, "93.184.216.34", 443, SETTINGS).reason)
    assert decide("none", "api.example.com", 443, SETTINGS).allowed is False
    assert LOOKUPS == []  # nothing refused by the rules was ever looked up


def test_an_allowed_name_that_resolves_to_a_private_address_is_refused() -> None:
    refused = decide(RULES, "a.cdn.example.com", 443, SETTINGS)
    assert not refused.allowed and "link-local address 169.254.169.254" in str(refused.reason)
    mixed = decide("open", "mixed.example.com", 443, SETTINGS)
    assert not mixed.allowed and "private address 10.0.0.1" in str(mixed.reason)
    assert "does not resolve" in str(decide("open", "nowhere.example.com", 1, SETTINGS).reason)


def test_open_takes_public_names_and_addresses_on_any_port_and_never_private_ones() -> None:
    assert decide("open", "api.example.com", 8443, SETTINGS).allowed
    assert decide("open", "93.184.216.34", 22, SETTINGS).allowed
    assert not decide("open", "169.254.169.254", 80, SETTINGS).allowed
    assert not decide("open", "[::1]", 80, SETTINGS).allowed


def test_only_the_tests_pinned_names_may_answer_loopback() -> None:
    assert decide("open", "stand-in.example.com", 80, SETTINGS).address == "127.0.0.1"
    plain = EgressSettings(resolve=_resolve)
    assert "loopback" in str(decide("open", "stand-in.example.com", 80, plain).reason)


def test_credentials_come_from_the_environment_for_their_host_only() -> None:
    environ = {"SELFCORRECT_SECRET_API_KEY": "Bearer s3cret",
               "SELFCORRECT_SECRET_API_KEY_HOSTS": "API.example.com, other.example.com"}
    assert credential_header(RULES, "API.example.com", environ) == (
        "Authorization", "Bearer s3cret")
    assert credential_header(RULES, "a.cdn.example.com", environ) is None
    assert credential_header(RULES, "api.example.com", {}) is None
    assert credential_header("open", "api.example.com", environ) is None
    assert secret_values(RULES, environ) == ["Bearer s3cret"]
    require_credentials(RULES, environ)


def test_a_secret_the_operator_did_not_bind_to_the_host_is_never_sent() -> None:
    """Issue 17's review: an MCP client's (or an issue's) contract named OPENAI_API_KEY as
    the credential of a host of its own, and the proxy sent the key there. Now only variables
    under SELFCORRECT_SECRET_ can be named, and each goes only to the hosts its operator
    bound it to."""
    unbound = {"SELFCORRECT_SECRET_API_KEY": "Bearer s3cret"}
    elsewhere = {**unbound, "SELFCORRECT_SECRET_API_KEY_HOSTS": "other.example.com"}
    for environ in (unbound, elsewhere):
        assert credential_header(RULES, "api.example.com", environ) is None
        with pytest.raises(UsageError, match=r"has not bound to api\.example\.com") as caught:
            require_credentials(RULES, environ)
        assert "SELFCORRECT_SECRET_API_KEY_HOSTS=api.example.com" in caught.value.message
    with pytest.raises(UsageError, match="which is not set"):
        require_credentials(RULES, {"SELFCORRECT_SECRET_API_KEY_HOSTS": "api.example.com"})
    # The operator may also fix the header: a spec's other header is refused, and never sent.
    pinned = {**elsewhere, "SELFCORRECT_SECRET_API_KEY_HOSTS": "api.example.com",
              "SELFCORRECT_SECRET_API_KEY_HEADER": "X-Api-Key"}
    assert credential_header(RULES, "api.example.com", pinned) is None
    with pytest.raises(UsageError, match="bound it to the header X-Api-Key"):
        require_credentials(RULES, pinned)
    right = {**pinned, "SELFCORRECT_SECRET_API_KEY_HEADER": "authorization"}
    assert credential_header(RULES, "api.example.com", right) == ("Authorization",
                                                                  "Bearer s3cret")
    # A contract built around validation (a replayed run.json, a model constructed in code)
    # still cannot reach a variable outside the prefix.
    forged = RULES.model_copy(update={"credentials": {
        "api.example.com": Credential.model_construct(header="X-Leak", secret="OPENAI_API_KEY")}})
    assert credential_header(forged, "api.example.com", {
        "OPENAI_API_KEY": "sk-live", "OPENAI_API_KEY_HOSTS": "api.example.com"}) is None


def test_the_test_only_loopback_names_come_from_the_environment_alone() -> None:
    plain = settings_from_environ({"SELFCORRECT_SECRET_K": "x"})
    assert plain.loopback_names == frozenset() and plain.environ == {"SELFCORRECT_SECRET_K": "x"}
    given = settings_from_environ({TEST_LOOPBACK_HOSTS: "Stand-In.example.com, other.test"})
    assert given.loopback_names == frozenset({"stand-in.example.com", "other.test"})
    assert given.resolve("stand-in.example.com", 80) == ["127.0.0.1"]
    assert decide("open", "stand-in.example.com", 80, given).address == "127.0.0.1"
    assert "loopback" in str(decide("open", "localhost", 80, given).reason)


@pytest.mark.parametrize("names", ["api.github.com", "stand-in.test, pypi.org",
                                   "example.com.evil.io"])
def test_only_names_reserved_for_tests_may_resolve_to_loopback(names: str) -> None:
    with pytest.raises(UsageError, match="only names reserved for tests") as raised:
        settings_from_environ({TEST_LOOPBACK_HOSTS: names})
    assert "stand-in.test" not in str(raised.value) and raised.value.hint


def test_observe_takes_every_public_name_as_open_does_and_never_a_private_one() -> None:
    observe = NetworkRules(observe=True)
    assert decide(observe, "anything.example.org", 8080, EgressSettings(
        resolve=lambda host, port: ["93.184.216.34"])).allowed
    assert not decide(observe, "a.cdn.example.com", 443, SETTINGS).allowed
