"""What network by allowlist (issue 19) costs, side by side in one run, per runtime:

  (a) one HTTPS request from inside the sandbox to a server on the sandbox's own loopback
      (the floor: the same client, TLS handshake and answer, no proxy)
  (b) the same request to a stand-in API on the host's 127.0.0.1 through the egress proxy
      (the runner's loopback listener, the attach stream, the proxy, and back)
  (c) a pooled run of a trivial script with `network: none`, and (d) the same with an allow
      list: the start-up cost the tunnel adds to a run (its import, listener and relay)

  (e) what the runner does for (d) inside the container, timed there: importing the tunnel
      module and opening its listener, in a fresh interpreter started as the runner's
      (-I -S), one per sample (on a shared machine (c) and (d) differ by less than their noise)

(a) and (b) are timed inside the script (requests.get, a new connection each), alternating;
(c) and (d) from the client, each after the pool has refilled. Every address is on this
machine's loopback: the stand-in's name resolves through the benchmark's own resolver.

    python benchmarks/egress_overhead.py [--requests 30] [--runs 15] [--runtime runc]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from selfcorrect_action.choices import RUNTIMES
from selfcorrect_action.network_rules import NetworkRules
from selfcorrect_action.sandbox import engine
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.egress.policy import EgressSettings
from selfcorrect_action.sandbox.image import ensure_image
from selfcorrect_action.sandbox.models import ExecutionRequest, InputFile
from tests.fakes.upstream import Upstreams, upstreams

NAME = "api.bench.test"
SCRIPT = """\
import json, ssl, sys, threading, time, requests
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Ok(BaseHTTPRequestHandler):
    def log_message(self, *args): pass
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers()
        self.wfile.write(b"ok")

server = ThreadingHTTPServer(("127.0.0.1", 0), Ok)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain("cert.pem", "key.pem")
server.socket = context.wrap_socket(server.socket, server_side=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
direct = requests.Session()
direct.trust_env = False  # the loopback server: no proxy
local = f"https://127.0.0.1:{server.server_address[1]}/"
proxied = "https://%(name)s:%(port)d/hello"
times = {"direct": [], "proxied": []}
for i in range(%(count)d + 1):
    for kind, get, url in (("direct", direct.get, local), ("proxied", requests.get, proxied)):
        started = time.perf_counter()
        answer = get(url, verify="cert.pem", timeout=10)
        if i:  # the first of each warms imports and caches
            times[kind].append((time.perf_counter() - started) * 1000)
        assert answer.status_code == 200, answer.text
print(json.dumps(times))
"""


SETUP = """\
import json, subprocess
probe = (
    "import io, sys, time\\n"
    "started = time.perf_counter()\\n"
    "sys.path.append('/opt/selfcorrect')\\n"
    "import egress_tunnel\\n"
    "egress_tunnel.Tunnel(io.BytesIO(), 'nonce', {}).close()\\n"
    "print((time.perf_counter() - started) * 1000)\\n")
times = [float(subprocess.run(["python3", "-I", "-S", "-c", probe], check=True,
                              capture_output=True, text=True).stdout) for _ in range(%(count)d)]
print(json.dumps(times))
"""


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered):7.1f} ms   p95 {p95:7.1f} ms"


def requests_inside(box: Sandbox, runtime: str, up: Upstreams, count: int, out: Path
                    ) -> dict[str, list[float]]:
    code = SCRIPT % {"name": NAME, "port": up.https_port, "count": count}
    request = ExecutionRequest(
        argv=["python3", "bench.py"], timeout_s=300, runtime=runtime,  # type: ignore[arg-type]
        network=NetworkRules(allow=[NAME], ports=[up.https_port]),
        files=[InputFile(path="bench.py", data=code.encode()),
               InputFile(path="cert.pem", data=up.ca_pem),
               InputFile(path="key.pem", data=up.key_pem)])
    result = box.run(request, out)
    if result.exit_code != 0:
        raise SystemExit(f"the benchmark script failed:\n{result.stderr.text[-2000:]}")
    times: dict[str, list[float]] = json.loads(result.stdout.text)
    return times


def pooled_runs(box: Sandbox, runtime: str, runs: int, out: Path) -> dict[str, list[float]]:
    plain = ExecutionRequest(argv=["python3", "-c", "print(1)"],
                             runtime=runtime)  # type: ignore[arg-type]
    allowed = plain.model_copy(update={"network": NetworkRules(allow=[NAME])})
    box.warm(plain.limits, plain.runtime)
    samples: dict[str, list[float]] = {"network: none": [], "network: {allow: [...]}": []}
    for index in range(runs + 1):
        for label, request in (("network: none", plain), ("network: {allow: [...]}", allowed)):
            box.settle()
            started = time.perf_counter()
            result = box.run(request, out / f"{index}-{len(label)}")
            if index:
                samples[label].append((time.perf_counter() - started) * 1000)
            assert result.exit_code == 0, result
    return samples


def setup_inside(box: Sandbox, runtime: str, count: int, out: Path) -> list[float]:
    request = ExecutionRequest(
        argv=["python3", "setup.py"], timeout_s=300, runtime=runtime,  # type: ignore[arg-type]
        files=[InputFile(path="setup.py", data=(SETUP % {"count": count}).encode())])
    result = box.run(request, out)
    if result.exit_code != 0:
        raise SystemExit(f"the set-up probe failed:\n{result.stderr.text[-2000:]}")
    times: list[float] = json.loads(result.stdout.text)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=30, help="HTTPS requests of each kind")
    parser.add_argument("--runs", type=int, default=15, help="pooled runs of each kind")
    parser.add_argument("--runtime", choices=RUNTIMES, action="append",
                        help="runc, runsc (repeatable; default both)")
    args = parser.parse_args()
    client = engine.connect()
    image = ensure_image(client)
    settings = EgressSettings(resolve=lambda host, port: ["127.0.0.1"],
                              loopback_names=frozenset({NAME}))
    with tempfile.TemporaryDirectory(prefix="egress-bench-") as scratch:
        folder = Path(scratch)
        with upstreams(NAME, folder) as up, \
                Sandbox(client, image, pool_size=1, egress=settings) as box:
            for runtime in args.runtime or list(RUNTIMES):
                times = requests_inside(box, runtime, up, args.requests,
                                        folder / f"req-{runtime}")
                added = statistics.median(times["proxied"]) - statistics.median(times["direct"])
                print(f"[{runtime}] one HTTPS request, new connection each ({args.requests}):")
                print(f"  (a) direct, sandbox loopback   {percentiles(times['direct'])}")
                print(f"  (b) through the egress proxy   {percentiles(times['proxied'])}")
                print(f"  added by the proxy (p50)       {added:7.1f} ms")
                runs = pooled_runs(box, runtime, args.runs, folder / f"runs-{runtime}")
                print(f"[{runtime}] a pooled run of print(1) ({args.runs} each):")
                for label, samples in runs.items():
                    print(f"  {label:28} {percentiles(samples)}")
                start_up = (statistics.median(runs["network: {allow: [...]}"])
                            - statistics.median(runs["network: none"]))
                print(f"  added by the tunnel (p50)      {start_up:7.1f} ms")
                setup = setup_inside(box, runtime, args.runs, folder / f"setup-{runtime}")
                print(f"[{runtime}] (e) the tunnel's set-up in the runner ({args.runs}):")
                print(f"  import + listener              {percentiles(setup)}")
    client.close()


if __name__ == "__main__":
    main()
