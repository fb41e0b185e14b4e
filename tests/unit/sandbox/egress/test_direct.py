"""Connections that went around the proxy, read from what the script printed."""

from __future__ import annotations

from selfcorrect_action.sandbox.egress.direct import (
    MAX_WATCHED,
    direct_attempts,
    watched_attempts,
    with_direct_attempts,
)
from selfcorrect_action.sandbox.egress.records import NetworkLog, refusal_evidence

AIOHTTP = ("aiohttp.client_exceptions.ClientConnectorError: Cannot connect to host "
           "api.example.com:443 ssl:default [Temporary failure in name resolution]")
SOCKET = "OSError: [Errno 101] Network is unreachable"


def test_a_client_that_ignores_the_proxy_is_named_with_the_hint() -> None:
    (record,) = direct_attempts(AIOHTTP)
    assert (record.host, record.port, record.kind, record.allowed) == (
        "api.example.com", 443, "direct", False)
    assert "trust_env=True" in str(record.reason) and "DNS lookup" in str(record.reason)


def test_a_raw_socket_without_a_host_is_still_reported() -> None:
    (record,) = direct_attempts(SOCKET)
    assert record.host == "" and "no network interface" in str(record.reason)


def test_other_errors_are_no_direct_attempts() -> None:
    proxied = ("requests.exceptions.ProxyError: HTTPSConnectionPool(host='evil.example.com',"
               " port=443): Max retries exceeded (Caused by ProxyError('Cannot connect to "
               "proxy.', OSError('Tunnel connection failed: 403 Forbidden')))")
    assert direct_attempts(proxied) == [] and direct_attempts("KeyError: 'x'") == []


def test_the_log_and_its_evidence_name_the_hosts_and_what_is_allowed() -> None:
    log = with_direct_attempts(NetworkLog(policy="allow", allowed_hosts=["api.example.com"]),
                               AIOHTTP)
    evidence = refusal_evidence(log)
    assert evidence.startswith("api.example.com:443 was refused (bypassed the proxy")
    assert evidence.endswith("; allowed: api.example.com")
    assert with_direct_attempts(log, "fine") == log


def test_what_the_watch_saw_is_reported_though_the_script_printed_nothing() -> None:
    watched = [{"kind": "dns", "host": "evil.example.com", "port": 443},
               {"kind": "connect", "host": "198.51.100.7", "port": 443},
               {"kind": "udp", "host": "192.0.2.1", "port": 53}]
    log = with_direct_attempts(NetworkLog(policy="allow"), "", watched)
    assert [(r.host, r.port, r.kind, r.allowed) for r in log.connections] == [
        ("evil.example.com", 443, "direct", False), ("198.51.100.7", 443, "direct", False),
        ("192.0.2.1", 53, "direct", False)]
    reasons = [str(r.reason) for r in log.connections]
    assert "DNS lookup" in reasons[0] and "connection of its own" in reasons[1]
    assert "UDP" in reasons[2] and all("HTTPS_PROXY" in reason for reason in reasons)


def test_the_watch_and_the_error_output_name_each_attempt_once() -> None:
    watched = [{"kind": "dns", "host": "api.example.com", "port": 443}]
    log = with_direct_attempts(NetworkLog(policy="allow"), AIOHTTP + "\n" + SOCKET, watched)
    assert [(r.host, r.port) for r in log.connections] == [("api.example.com", 443)], \
        "the printed error names the same host, and a hostless one adds nothing"
    other = with_direct_attempts(NetworkLog(policy="allow"), AIOHTTP,
                                 [{"kind": "connect", "host": "192.0.2.1", "port": 80}])
    assert [r.host for r in other.connections] == ["192.0.2.1", "api.example.com"]


def test_the_watchs_entries_are_untrusted() -> None:
    """The script can write the watch's file: anything malformed is dropped, and what
    stays is bounded."""
    hostile: list[object] = [
        "text", None, {"kind": "connect"}, {"kind": "teleport", "host": "x", "port": 1},
        {"kind": "dns", "host": "", "port": 1}, {"kind": "dns", "host": "x", "port": -1},
        {"kind": "dns", "host": "x", "port": True}, {"kind": "dns", "host": 5, "port": 1},
        {"kind": "dns", "host": "line\nbreak" + "x" * 400, "port": 70000},
        {"kind": "dns", "host": "ok.example", "port": 1, "extra": "ignored"},
        *({"kind": "udp", "host": "flood.example", "port": n} for n in range(50))]
    found = watched_attempts(hostile)
    assert found[0].host == "ok.example" and len(found) == MAX_WATCHED
    assert watched_attempts("not a list") == [] and watched_attempts(None) == []
    (long,) = watched_attempts([{"kind": "dns", "host": "a\nb" + "x" * 400, "port": 1}])
    assert long.host.startswith("a?b") and len(long.host) == 253
