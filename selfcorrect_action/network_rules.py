"""The contract's network field beyond `none` and `open` (issue 19): an allowlist of domains,
or observation, each written by a person. Pure data and pure decisions: the egress proxy
(sandbox/egress/) applies them, `validate` reports their problems with a location.

How a pattern matches a host (docs/task-spec.md says the same):
- `api.example.com` matches that name only (any letter case, a final dot ignored);
- `*.example.com` matches every name below example.com, at any depth (`a.example.com`,
  `a.b.example.com`), and NOT `example.com` itself: write both to allow both.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

NetworkMode = Literal["none", "open"]
DEFAULT_PORTS = (80, 443)
MAX_PATTERNS = 100
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
# A credential names a variable under this prefix, never any variable of the process: a spec
# (from an issue, or an MCP client) could otherwise have the proxy send the model's key or
# GITHUB_TOKEN to a host of its choosing. The operator grants each one by exporting it, and
# binds it to its hosts with <NAME>_HOSTS (comma-separated), without which it goes nowhere.
SECRET_PREFIX = "SELFCORRECT_SECRET_"
HOSTS_SUFFIX = "_HOSTS"
# Optional: the one header the secret may be sent in. Without it a spec picks the header,
# and a bound API that echoes some request header (in an error message, a debug endpoint)
# would hand the secret back to the script.
HEADER_SUFFIX = "_HEADER"
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$")
# Names that only ever mean this machine or its local network: an allowlist naming them
# would be an allowlist for the metadata service or a neighbour, never for an API.
_LOCAL_SUFFIXES = ("localhost", "local", "internal", "home.arpa", "in-addr.arpa", "ip6.arpa",
                   "lan", "intranet", "corp", "localdomain")
# Headers the proxy itself owns on a forwarded request: a credential may not replace them.
_RESERVED_HEADERS = frozenset({"host", "connection", "content-length", "transfer-encoding",
                               "te", "upgrade", "proxy-authorization", "proxy-connection",
                               "keep-alive", "trailer"})


def pattern_problem_or_normal(pattern: str) -> str:
    """The pattern in its normal form (lower case, no final dot), or ValueError saying what
    is wrong with it and how to write it."""
    if not isinstance(pattern, str):  # pragma: no cover - pydantic checks the type first
        raise ValueError("must be a host name")
    raw = pattern.strip()
    if "://" in raw or "/" in raw:
        raise ValueError(f"{pattern!r} is a URL: write the host name only, e.g. api.example.com")
    if _is_ip_literal(raw):
        raise ValueError(f"{pattern!r} is an IP address: allow a name (the proxy resolves it "
                         "and refuses private, loopback and link-local answers)")
    if ":" in raw:
        raise ValueError(f"{pattern!r} carries a port: write the host alone and list the "
                         "ports in `ports:`")
    if not raw.isascii():
        raise ValueError(f"{pattern!r} is not ASCII: write an international name in its "
                         "xn-- (punycode) form")
    name = raw.lower().rstrip(".")
    wildcard = name.startswith("*.")
    body = name[2:] if wildcard else name
    labels = body.split(".")
    if "*" in body or not all(_LABEL.match(label) for label in labels) or len(body) > 253:
        raise ValueError(f"{pattern!r} is not a host name: letters, digits and hyphens in "
                         "dot-separated labels, with `*.` only at the start")
    if body in _LOCAL_SUFFIXES or body.endswith(tuple(f".{s}" for s in _LOCAL_SUFFIXES)):
        raise ValueError(f"{pattern!r} names this machine or a private network, which the "
                         "sandbox never reaches")
    if len(labels) < 2 or labels[-1].isdigit():
        raise ValueError(f"{pattern!r} is too broad or not a domain: name a host or a "
                         "domain below a public suffix, e.g. api.example.com or *.example.com")
    return name


def _is_ip_literal(text: str) -> bool:
    candidate = text.strip("[]")
    try:
        ipaddress.ip_address(candidate)
    except ValueError:
        return bool(re.fullmatch(r"[0-9.]+", candidate)) and "." in candidate
    return True


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Credential(_Strict):
    """A header the proxy adds to plain-HTTP requests for one host, its value read from the
    named environment variable of the selfcorrect process: the secret never enters the
    sandbox."""

    header: str = Field(description="the header's name, e.g. Authorization")
    secret: str = Field(description="the environment variable holding its value")

    @field_validator("header")
    @classmethod
    def _header(cls, value: str) -> str:
        if not _HEADER_NAME.match(value):
            raise ValueError("must be an HTTP header name (letters, digits, hyphens), "
                             "e.g. Authorization or X-Api-Key")
        if value.lower() in _RESERVED_HEADERS:
            raise ValueError(f"{value} is the proxy's own header; name the API's header")
        return value

    @field_validator("secret")
    @classmethod
    def _secret(cls, value: str) -> str:
        example = f"{SECRET_PREFIX}EXAMPLE_API_KEY"
        if not _ENV_NAME.match(value):
            raise ValueError("must be the name of an environment variable (letters, digits, "
                             f"underscores), e.g. {example}")
        if not value.startswith(SECRET_PREFIX) or value == SECRET_PREFIX:
            raise ValueError(
                f"must name a variable starting {SECRET_PREFIX} (e.g. {example}): only "
                "variables the operator exported under that prefix can be sent, so a spec "
                "cannot send the model's key or a token to a host it names")
        if value.endswith((HOSTS_SUFFIX, HEADER_SUFFIX)):
            raise ValueError(f"{value} is where the operator binds a secret to its hosts or "
                             "header, not a secret: name the secret's own variable")
        return value


class NetworkRules(_Strict):
    """`{allow: [...], ports: [...], credentials: {...}}` or `{observe: true}`."""

    allow: list[Annotated[str, AfterValidator(pattern_problem_or_normal)]] | None = Field(
        default=None, max_length=MAX_PATTERNS,
        description="host names, or *.domain for names below it")
    ports: list[Annotated[int, Field(ge=1, le=65535, strict=True)]] = Field(
        default_factory=lambda: list(DEFAULT_PORTS), min_length=1)
    observe: bool = Field(default=False, strict=True,
                          description="let every public host through and record each one")
    credentials: dict[str, Credential] = Field(default_factory=dict)

    @field_validator("allow")
    @classmethod
    def _patterns(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        duplicates = sorted({p for p in value if value.count(p) > 1})
        if duplicates:
            raise ValueError(f"{duplicates[0]} is listed twice")
        return value

    @field_validator("credentials")
    @classmethod
    def _credential_hosts(cls, value: dict[str, Credential]) -> dict[str, Credential]:
        hosts = [pattern_problem_or_normal(host) for host in value]
        wild = [host for host in hosts if host.startswith("*.")]
        if wild:
            raise ValueError(f"credentials name one host each, not a pattern: {wild[0]}")
        return dict(zip(hosts, value.values(), strict=True))

    @model_validator(mode="after")
    def _one_mode(self) -> NetworkRules:
        if self.observe and self.allow is not None:
            raise ValueError("observe: true lets every public host through, so it takes no "
                             "allow list: remove one of them")
        if not self.observe and not self.allow:
            raise ValueError("write `allow: [host, ...]` (the hosts the script may reach) or "
                             "`observe: true` (let every public host through and record them)")
        unmatched = [host for host in self.credentials if self.allow is not None
                     and not any(matches(pattern, host) for pattern in self.allow)]
        if unmatched:
            raise ValueError(f"credentials for {unmatched[0]}, which the allow list does not "
                             "let through: add it to allow, or remove its credentials")
        if len(set(self.ports)) != len(self.ports):
            raise ValueError("a port is listed twice in ports")
        return self

    def allows(self, host: str, port: int) -> bool:
        """Whether the rules let `host:port` through (before its address is checked)."""
        if self.observe:
            return True
        return port in self.ports and any(matches(p, host) for p in self.allow or [])


def _discriminate(value: Any) -> str:
    return "(a mapping)" if isinstance(value, dict | NetworkRules) else "(a word)"


# The tags in parentheses are dropped from error locations by yamlio.describe_errors: a
# problem in `allow` reads `contract.network.allow.0`, as the user wrote it.
def _word(value: Any) -> Any:
    if value not in ("none", "open"):
        raise PydanticCustomError(
            "network_word", "expected none, open or a mapping", {
                "hint": "write `network: none`, `network: open`, "
                        "`network: {allow: [api.example.com]}` or `network: {observe: true}`"})
    return value


NetworkPolicy = Annotated[
    Annotated[NetworkMode, BeforeValidator(_word), Tag("(a word)")]
    | Annotated[NetworkRules, Tag("(a mapping)")],
    Discriminator(_discriminate),
]


def bound_hosts(secret: str, environ: Mapping[str, str]) -> frozenset[str]:
    """The hosts the operator lets `secret` go to (`<secret>_HOSTS`, comma-separated)."""
    return frozenset(normal_host(name) for name in environ.get(secret + HOSTS_SUFFIX, "")
                     .split(",") if name.strip())


def credential_problems(network: NetworkMode | NetworkRules,
                        environ: Mapping[str, str]) -> list[str]:
    """Why the contract's credentials cannot be sent as written, one line each: the
    variable unset, or not bound by the operator to the host the contract names."""
    if not isinstance(network, NetworkRules):
        return []
    problems = []
    for host, credential in network.credentials.items():
        if not environ.get(credential.secret):
            problems.append(f"credentials for {host} name {credential.secret}, which is not "
                            "set in selfcorrect's environment")
        elif host not in bound_hosts(credential.secret, environ):
            problems.append(f"credentials for {host} name {credential.secret}, which the "
                            f"operator has not bound to {host} (set "
                            f"{credential.secret}{HOSTS_SUFFIX}={host})")
        elif not header_allowed(credential, environ):
            problems.append(f"credentials for {host} send {credential.secret} in "
                            f"{credential.header}, but the operator bound it to the header "
                            f"{environ[credential.secret + HEADER_SUFFIX].strip()}")
    return problems


def header_allowed(credential: Credential, environ: Mapping[str, str]) -> bool:
    """Whether the operator lets the secret go in the header the spec names."""
    bound = environ.get(credential.secret + HEADER_SUFFIX, "").strip()
    return not bound or bound.casefold() == credential.header.casefold()


def normal_host(host: str) -> str:
    """Lower case, no final dot, an IPv6 literal without its brackets."""
    return host.strip().lower().rstrip(".").removeprefix("[").removesuffix("]")


def matches(pattern: str, host: str) -> bool:
    """See the module docstring: exact, or `*.domain` for names strictly below domain."""
    name = normal_host(host)
    if pattern.startswith("*."):
        return name.endswith(pattern[1:]) and len(name) > len(pattern) - 1
    return name == pattern


def is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def address_problem(address: str) -> str | None:
    """Why the proxy never connects to this address (None: a public one). Loopback,
    private (RFC 1918, CGNAT, unique-local fc00::/7), link-local (169.254.0.0/16, where the
    cloud metadata service answers, and fe80::/10), multicast, reserved and unspecified
    addresses are refused; an IPv4-mapped IPv6 address is judged as its IPv4 one."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    for kind, flag in (("loopback", ip.is_loopback), ("link-local", ip.is_link_local),
                       ("multicast", ip.is_multicast), ("unspecified", ip.is_unspecified),
                       ("private", ip.is_private), ("reserved", ip.is_reserved)):
        if flag:
            return f"{kind} address {ip}"
    if not ip.is_global:
        return f"non-public address {ip}"
    return None


def suggested_allow(hosts: list[str]) -> list[str]:
    """The exact `allow:` list for the hosts a run reached: each name once, sorted; only
    names `validate` would accept (no IP literal, nothing the script made up that is no
    host name), since the list is pasted into a spec."""
    found: set[str] = set()
    for host in hosts:
        try:
            name = pattern_problem_or_normal(host)
        except ValueError:
            continue
        if not name.startswith("*."):
            found.add(name)
    return sorted(found)


def describe(policy: NetworkMode | NetworkRules) -> str:
    """One line for reports and prompts."""
    if policy == "none":
        return "none"
    if policy == "open":
        return "open (every public host, through the egress proxy)"
    assert isinstance(policy, NetworkRules)
    if policy.observe:
        return "observe (every public host, each one recorded)"
    ports = ", ".join(str(p) for p in policy.ports)
    return f"allow {', '.join(policy.allow or [])} (ports {ports})"


def network_words(policy: NetworkMode | NetworkRules) -> dict[str, Any]:
    """What the prompts say about the network: its mode in one word, and the allow list."""
    if not isinstance(policy, NetworkRules):
        return {"network": policy, "allowed_hosts": [], "allowed_ports": []}
    if policy.observe:
        return {"network": "observe", "allowed_hosts": [], "allowed_ports": []}
    return {"network": "allow", "allowed_hosts": list(policy.allow or []),
            "allowed_ports": list(policy.ports)}
