"""Whether the proxy connects a script to `host:port`, and to which address: the contract's
rules first (a pure check), then the name resolved by the proxy itself, every answer held to
address_problem. Connecting to the address checked here, never resolving twice, is what
keeps a name that answers with a public address once and 169.254.169.254 next time (DNS
rebinding) away from the metadata service."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from selfcorrect_action.errors import UsageError
from selfcorrect_action.network_rules import (
    SECRET_PREFIX,
    NetworkMode,
    NetworkRules,
    address_problem,
    bound_hosts,
    credential_problems,
    header_allowed,
    is_ip_literal,
    matches,
    normal_host,
)

# Bytes a run may move through the proxy, both ways together: a script that downloads
# without end is stopped there (the connections are ended and the log says so).
MAX_BYTES_PER_RUN = 256 * 1024 * 1024
MAX_ANSWERS = 16

Resolve = Callable[[str, int], list[str]]


def system_resolve(host: str, port: int) -> list[str]:
    """The host's own resolver (the proxy's, not the sandbox's: the sandbox has none)."""
    try:
        answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    found: list[str] = []
    for _, _, _, _, sockaddr in answers:
        address = str(sockaddr[0])
        if address not in found:
            found.append(address)
    return found[:MAX_ANSWERS]


@dataclass(frozen=True)
class EgressSettings:
    """What the proxy needs besides the contract. Given to the Sandbox by whoever builds it
    (the CLI, the action, a test); nothing in a contract or an input reaches it.

    `loopback_names` is for tests only: names whose loopback answer is accepted, so a
    stand-in API on 127.0.0.1 can be reached by name while every other loopback answer
    stays refused."""

    resolve: Resolve = system_resolve
    loopback_names: frozenset[str] = frozenset()
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    max_bytes: int = MAX_BYTES_PER_RUN


# For end-to-end tests of the action's own container (tests/e2e/action/test_network.py),
# where a test cannot hand the Sandbox a resolver: the names listed here (comma-separated)
# resolve to 127.0.0.1 without DNS and may answer loopback. It is read from the process's
# environment only, which the workflow's author controls (who runs anything they like on
# the runner anyway); no contract, issue or action input can set it. Even so, only names
# reserved for testing (RFC 2606, RFC 6761) may be listed: a workflow that passed untrusted
# text into its env could otherwise turn a real API's name into the runner's own loopback.
TEST_LOOPBACK_HOSTS = "SELFCORRECT_TEST_LOOPBACK_HOSTS"
RESERVED_SUFFIXES = (".test", ".example", ".invalid", ".localhost",
                     ".example.com", ".example.net", ".example.org")


def settings_from_environ(environ: Mapping[str, str]) -> EgressSettings:
    """The proxy's settings for a run in this environment: credentials read from it, and
    the test-only loopback names of TEST_LOOPBACK_HOSTS, if any."""
    names = frozenset(normal_host(name) for name in environ.get(TEST_LOOPBACK_HOSTS, "")
                      .split(",") if name.strip())
    real = sorted(name for name in names if not f".{name}".endswith(RESERVED_SUFFIXES))
    if real:
        raise UsageError(
            f"{TEST_LOOPBACK_HOSTS} names {', '.join(real)}: only names reserved for tests "
            "may resolve to the runner's loopback",
            hint=f"use names ending in {', '.join(RESERVED_SUFFIXES)}, or unset "
                 f"{TEST_LOOPBACK_HOSTS} (it exists for selfcorrect's own tests)")
    if not names:
        return EgressSettings(environ=environ)

    def resolve(host: str, port: int) -> list[str]:
        return ["127.0.0.1"] if normal_host(host) in names else system_resolve(host, port)

    return EgressSettings(resolve=resolve, loopback_names=names, environ=environ)


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str | None = None
    address: str | None = None


def decide(network: NetworkMode | NetworkRules, host: str, port: int,
           settings: EgressSettings) -> Decision:
    name = normal_host(host)
    refusal = rules_refusal(network, name, port)
    if refusal is not None:
        return Decision(False, refusal)
    addresses = [name] if is_ip_literal(name) else settings.resolve(name, port)
    if not addresses:
        return Decision(False, f"{name} does not resolve")
    problems = [address_problem(a) for a in addresses]
    trusted = name in settings.loopback_names and all(
        p is not None and p.startswith("loopback") for p in problems)
    bad = next((p for p in problems if p is not None), None)
    if bad is not None and not trusted:
        return Decision(False, f"{name} resolves to a {bad}, which the sandbox never reaches")
    return Decision(True, address=addresses[0])


def rules_refusal(network: NetworkMode | NetworkRules, name: str, port: int) -> str | None:
    """Why the contract's rules refuse `name:port` before any lookup (None: they let it
    through to the address check). `open` and `observe` let every name and port through."""
    if not name:
        return "the request named no host"
    if not 0 < port < 65536:
        return f"port {port} is not a port"
    if network == "none":
        return "the contract's network is none"
    if network == "open" or (isinstance(network, NetworkRules) and network.observe):
        return None
    assert isinstance(network, NetworkRules)
    if is_ip_literal(name):
        return f"{name} is an IP address: the allow list names hosts"
    if not any(matches(pattern, name) for pattern in network.allow or []):
        return f"{name} is not on the allow list"
    if port not in network.ports:
        return f"port {port} is not in ports ({', '.join(str(p) for p in network.ports)})"
    return None


def credential_header(network: NetworkMode | NetworkRules, host: str,
                      environ: Mapping[str, str]) -> tuple[str, str] | None:
    """(header, value) the proxy adds to a plain-HTTP request for `host`, read from the
    named environment variable; None when the host has none, the variable is unset or the
    operator did not bind it to `host` (runs refuse to start then: require_credentials)."""
    if not isinstance(network, NetworkRules):
        return None
    name = normal_host(host)
    credential = network.credentials.get(name)
    if (credential is None or not credential.secret.startswith(SECRET_PREFIX)
            or not environ.get(credential.secret)
            or name not in bound_hosts(credential.secret, environ)
            or not header_allowed(credential, environ)):
        return None
    return credential.header, environ[credential.secret]


def require_credentials(network: NetworkMode | NetworkRules,
                        environ: Mapping[str, str]) -> None:
    """Before anything is spent: a credential the proxy could not send is refused with the
    line that fixes it, rather than found by a script's 401."""
    problems = credential_problems(network, environ)
    if problems:
        raise UsageError("; ".join(problems),
                         hint="export the secret under its SELFCORRECT_SECRET_ name and bind "
                              "it to its API's host with <NAME>_HOSTS (docs/network.md, "
                              "Credentials)")


def secret_values(network: NetworkMode | NetworkRules, environ: Mapping[str, str]) -> list[str]:
    """The credentials' values, for redaction wherever text is shown."""
    if not isinstance(network, NetworkRules):
        return []
    return [environ[c.secret] for c in network.credentials.values() if environ.get(c.secret)]
