"""What the egress proxy saw: one record per connection the script opened, for the
execution result, the classifier, the repair packet and the reports."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# A script that opens connections in a loop must not grow the report without bound.
MAX_RECORDS = 200


class ConnectionRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = Field(description="the name (or address) the script asked for; '' if none")
    port: int = 0
    kind: Literal["https", "http", "direct", "malformed"] = Field(
        description="https: a CONNECT tunnel; http: a plain request the proxy forwarded; "
        "direct: a connection that bypassed the proxy (noted by the sandbox's network "
        "watch, or seen in the script's error); "
        "malformed: not a proxy request at all")
    allowed: bool
    reason: str | None = Field(default=None,
                               description="why it was refused, or why it ended early")
    address: str | None = Field(default=None, description="the address connected to")
    bytes_sent: int = 0
    bytes_received: int = 0


class NetworkLog(BaseModel):
    """The run's connections through the proxy and what the policy was."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    policy: str = Field(description="the contract's network, in one line")
    allowed_hosts: list[str] = Field(default_factory=list,
                                     description="the allow list (empty when open/observe)")
    observe: bool = False
    connections: list[ConnectionRecord] = Field(default_factory=list)
    dropped: int = Field(default=0, description="connections past MAX_RECORDS, not listed")
    capped: bool = Field(default=False, description="the run's byte cap ended its traffic")

    def refused(self) -> list[ConnectionRecord]:
        return [c for c in self.connections if not c.allowed]

    def reached(self) -> list[str]:
        """Each host a connection was let through to, once, in the order first seen."""
        seen: list[str] = []
        for record in self.connections:
            if record.allowed and record.host and record.host not in seen:
                seen.append(record.host)
        return seen


def refusal_evidence(log: NetworkLog, *, limit: int = 3) -> str:
    """`evil.example.com:443 was refused (evil.example.com is not on the allow list);
    allowed: api.example.com`: what the classifier and the repair packet say."""
    refused = log.refused()
    said = "; ".join(f"{c.host or 'a connection'}{f':{c.port}' if c.port else ''} was refused "
                     f"({c.reason})" for c in refused[:limit])
    more = f" (and {len(refused) - limit} more)" if len(refused) > limit else ""
    allowed = f"; allowed: {', '.join(log.allowed_hosts)}" if log.allowed_hosts else ""
    return f"{said}{more}{allowed}"
