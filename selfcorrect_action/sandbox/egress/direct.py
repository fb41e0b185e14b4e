"""Connections that bypassed the proxy. The sandbox has no network interface but loopback,
so a client that ignores HTTP(S)_PROXY (aiohttp without trust_env=True, a raw socket, its
own DNS lookup) fails at once inside the container and never reaches the proxy. Two traces
are left: what the sandbox's network watch noted (sandbox/netwatch.py, an audit hook in the
script's interpreters, read back by the runner), and the error the script printed. Pure:
both as ConnectionRecords of kind `direct`, so the run's log and its classification name
them with a hint."""

from __future__ import annotations

import re

from selfcorrect_action.sandbox.egress.records import ConnectionRecord, NetworkLog

HINT = ("the sandbox reaches the network only through the proxy in HTTP_PROXY/HTTPS_PROXY: "
        "requests, urllib and httpx use it by themselves, aiohttp needs "
        "ClientSession(trust_env=True); never resolve names or open sockets yourself")
# What a client says when it tried to reach the network itself: no route (no interface
# but loopback), or no resolver (the sandbox has none).
_SIGNS = (("Network is unreachable", "no network interface"),
          ("[Errno 101]", "no network interface"),
          ("No route to host", "no network interface"),
          ("[Errno 113]", "no network interface"),
          ("Temporary failure in name resolution", "a DNS lookup in the sandbox"),
          ("Name or service not known", "a DNS lookup in the sandbox"),
          ("[Errno -3]", "a DNS lookup in the sandbox"),
          ("[Errno -2]", "a DNS lookup in the sandbox"))
# Where the common clients name the host they tried.
_HOSTS = (re.compile(r"Cannot connect to host ([\w.-]+):(\d+)"),  # aiohttp
          re.compile(r"host='([\w.-]+)', port=(\d+)"),  # urllib3 / requests
          re.compile(r"Failed to resolve '([\w.-]+)'"),  # urllib3 2
          re.compile(r"\(\('?([\w.-]+)'?, (\d+)\)\)"))  # socket.create_connection(("h", p))
MAX_DIRECT = 5
MAX_WATCHED = 20
# What the network watch calls each attempt, and how the record says it.
_WATCHED = {"connect": "a connection of its own", "dns": "a DNS lookup in the sandbox",
            "udp": "a UDP datagram of its own"}


def direct_attempts(stderr: str) -> list[ConnectionRecord]:
    """The bypassing attempts the script's error output shows (at most MAX_DIRECT)."""
    tail = stderr[-64 * 1024 :]
    why = next((reason for needle, reason in _SIGNS if needle in tail), None)
    if why is None:
        return []
    found: list[tuple[str, int]] = []
    for pattern in _HOSTS:
        for match in pattern.finditer(tail):
            port = int(match.group(2)) if match.lastindex and match.lastindex >= 2 else 0
            if (match.group(1), port) not in found:
                found.append((match.group(1), port))
    reason = f"bypassed the proxy ({why}): {HINT}"
    return [ConnectionRecord(host=host, port=port, kind="direct", allowed=False, reason=reason)
            for host, port in (found or [("", 0)])[:MAX_DIRECT]]


def watched_attempts(raw: object) -> list[ConnectionRecord]:
    """The attempts the runner read from the network watch. The script could have written
    that file too: untrusted, so only well-formed entries, each host and port once, at most
    MAX_WATCHED."""
    found: list[ConnectionRecord] = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict):
            continue
        kind, host, port = item.get("kind"), item.get("host"), item.get("port")
        if (kind not in _WATCHED or not isinstance(host, str) or not host
                or not isinstance(port, int) or isinstance(port, bool)
                or not 0 <= port < 65536):
            continue
        host = "".join(c if c.isprintable() else "?" for c in host[:253])
        if any(r.host == host and r.port == port for r in found):
            continue
        found.append(ConnectionRecord(
            host=host, port=port, kind="direct", allowed=False,
            reason=f"bypassed the proxy ({_WATCHED[str(kind)]}): {HINT}"))
        if len(found) >= MAX_WATCHED:
            break
    return found


def with_direct_attempts(log: NetworkLog, stderr: str, watched: object = None) -> NetworkLog:
    """The log with the attempts that bypassed the proxy: the watch's first, then those
    only the script's error output shows (a child that started without site, say). An
    error that names no host adds nothing once the watch has named one."""
    seen = watched_attempts(watched)
    printed = [record for record in direct_attempts(stderr)
               if not any(r.host == record.host and r.port in (record.port, 0)
                          for r in seen) and (record.host or not seen)]
    if not seen and not printed:
        return log
    return log.model_copy(update={"connections": [*log.connections, *seen, *printed]})
