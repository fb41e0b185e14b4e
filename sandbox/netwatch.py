"""Notes each attempt a script makes to reach the network without the egress proxy.

Installed in the image as the module `_selfcorrect_netwatch`, imported by a `.pth` line in
dist-packages, so `site` installs its audit hook in every interpreter a script starts (its
children too, and a warm interpreter before it becomes the script). The sandbox has no
network interface but loopback, so such an attempt always fails; this module only makes it
visible when the script catches the error and prints nothing of it.

It records nothing unless the runner created WATCH_FILE for a run with network: an
interpreter outside such a run pays one dictionary lookup per audit event. Interpreters
started with -S never load it: the runner, the frozen tests and a boundary candidate's
server (their attempts show only in what they print). It is a report, never the boundary:
a script that tampers with this module can hide its own attempts, never make one succeed.

One line per attempt: `KIND<TAB>PORT<TAB>HOST`, KIND being `connect`, `dns` or `udp`.
"""

from __future__ import annotations

import os
import sys

WATCH_FILE = "/tmp/.selfcorrect-netwatch"
MAX_LINES = 20  # per process: enough to name what it tried, never a flood
_WATCHED = {"socket.connect": "connect", "socket.connect_ex": "connect",
            "socket.sendto": "udp", "socket.sendmsg": "udp",
            "socket.getaddrinfo": "dns", "socket.gethostbyname": "dns",
            "socket.gethostbyname_ex": "dns"}
_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback", ""}


class _State:
    written = 0  # lines this process wrote
    busy = False  # inside the hook: its own open and write raise events too
    local: set[str] | None = None


def _local_names() -> set[str]:
    """Names that never leave the container: localhost, its own hostname and /etc/hosts."""
    if _State.local is None:
        names = set(_LOCAL_NAMES)
        names.add(os.uname().nodename.lower())
        try:
            with open("/etc/hosts", encoding="utf-8", errors="replace") as hosts:
                for line in hosts.read(65536).splitlines():
                    names.update(part.lower() for part in line.split("#")[0].split()[1:])
        except OSError:
            pass
        _State.local = names
    return _State.local


def _is_loopback(host: str) -> bool:
    if host.startswith("127.") or host in ("::1", "0.0.0.0", "::"):
        return True
    if host.startswith("::ffff:127."):
        return True
    return host.rstrip(".").lower() in _local_names() or host.lower().endswith(".localhost")


def _target(kind: str, args: tuple[object, ...]) -> tuple[str, int] | None:
    """The host and port an event is about; None when it stays in the container."""
    if kind == "dns":
        host, port = args[0], (args[1] if len(args) > 1 else 0)
    else:
        address = args[1] if len(args) > 1 else None
        if not isinstance(address, tuple) or len(address) < 2:
            return None  # AF_UNIX paths, netlink and other families: not the network
        host, port = address[0], address[1]
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str) or _is_loopback(host):
        return None
    if kind == "dns" and (":" in host or host.replace(".", "").isdigit()):
        return None  # an address, not a name: no lookup; its connect says where it went
    if isinstance(port, bytes):
        port = port.decode("ascii", "replace")
    if isinstance(port, str):  # a service name ("https") says no number
        port = int(port) if port.isdigit() else 0
    if not isinstance(port, int) or not 0 <= port < 65536:
        port = 0
    return host, port


def _note(kind: str, host: str, port: int) -> None:
    clean = "".join(c if c.isprintable() and c not in "\t" else "?" for c in host[:253])
    try:
        # No O_CREAT: without the runner's file there is nothing to report to.
        fd = os.open(WATCH_FILE, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.write(fd, f"{kind}\t{port}\t{clean}\n".encode("utf-8", "replace"))
        _State.written += 1
    except OSError:
        pass
    finally:
        os.close(fd)


def _hook(event: str, args: tuple[object, ...]) -> None:
    kind = _WATCHED.get(event)
    if kind is None or _State.busy or _State.written >= MAX_LINES:
        return
    _State.busy = True
    try:
        target = _target(kind, args)
        if target is not None:
            _note(kind, *target)
    except Exception:  # a report must never break the script it watches
        pass
    finally:
        _State.busy = False


sys.addaudithook(_hook)
