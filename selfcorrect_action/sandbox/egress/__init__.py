"""Network by allowlist (issue 19): the host's end of the egress tunnel. The sandbox keeps
`network_mode=none`; the runner's loopback listener (sandbox/egress_tunnel.py) carries each
connection over the attach stream to `relay.EgressRelay`, which runs `proxy.serve` on it:
an HTTP proxy that applies the contract's network rules, resolves names itself and never
connects to a loopback, private or link-local address."""
