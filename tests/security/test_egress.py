"""Network by allowlist (issue 19), end to end in the real sandbox under runc and runsc: the
script's only way out is the egress tunnel to the proxy in this process, which lets an
allowed name through to its stand-in on 127.0.0.1 and refuses and reports everything else.

No traffic leaves this machine's loopback: the stand-ins listen on 127.0.0.1, the names
resolve through a test resolver (never DNS), refused names are refused before any lookup
or connection, and the script's own direct attempts name TEST-NET-1 (192.0.2.1), which a
container without a network interface cannot reach anyway."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from selfcorrect_action.choices import Runtime
from selfcorrect_action.evaluation.classify import classify_execution_failure
from selfcorrect_action.evaluation.junit import PYTEST_JUNIT_PATH, boundary_pytest_argv
from selfcorrect_action.network_rules import NetworkPolicy, NetworkRules
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.config import LABEL_SESSION
from selfcorrect_action.sandbox.docker_engine import DockerEngine
from selfcorrect_action.sandbox.egress.policy import EgressSettings
from selfcorrect_action.sandbox.models import (
    Boundary,
    ExecutionRequest,
    ExecutionResult,
    InputFile,
    Limits,
)
from selfcorrect_action.taxonomy import Category
from tests.fakes.upstream import AUTHORIZED, Upstreams, upstreams

API = "api.stand-in.test"
# Names the test resolver answers for, and what it answers: only API may be loopback.
ANSWERS = {API: ["127.0.0.1"], "loopback.stand-in.test": ["127.0.0.1"],
           "metadata.stand-in.test": ["169.254.169.254"],
           "mixed.stand-in.test": ["93.184.216.34", "10.0.0.7"]}
SECRET = ("X-Api-Key", "s3cret-value-never-in-the-sandbox")


def _resolve(host: str, port: int) -> list[str]:
    return list(ANSWERS.get(host, []))


@pytest.fixture
def stand_ins(tmp_path: Path) -> Iterator[Upstreams]:
    with upstreams(API, tmp_path, secret_header=SECRET) as found:
        yield found


@pytest.fixture
def egress_box(docker_engine: DockerEngine, docker_client: docker.DockerClient,
               sandbox_image: str) -> Iterator[Sandbox]:
    box = Sandbox(docker_engine, sandbox_image, egress=_settings())
    with box:
        yield box
    left = docker_client.containers.list(all=True,
                                         filters={"label": f"{LABEL_SESSION}={box.session}"},
                                         ignore_removed=True)
    assert left == [], "a container outlived its run"


def _settings() -> EgressSettings:
    return EgressSettings(resolve=_resolve, loopback_names=frozenset({API}),
                          environ={"SELFCORRECT_SECRET_API_KEY": SECRET[1],
                                   "SELFCORRECT_SECRET_API_KEY_HOSTS": API}, max_bytes=2_000_000)


def _rules(up: Upstreams, **more: object) -> NetworkRules:
    return NetworkRules.model_validate({
        "allow": [API, "loopback.stand-in.test", "metadata.stand-in.test",
                  "mixed.stand-in.test"],
        "ports": [up.http_port, up.https_port, 80],
        "credentials": {API: {"header": SECRET[0], "secret": "SELFCORRECT_SECRET_API_KEY"}},
        **more})


PRELUDE = """\
import json, os, socket, requests
out = {}
def get(url, **kw):
    try:
        r = requests.get(url, timeout=10, **kw)
        return f"{r.status_code} {r.text[:200]}"
    except Exception as exc:
        return f"error {type(exc).__name__}: {exc}"[:400]
def attempt(call):
    try:
        call()
        return "reached"
    except OSError as exc:
        return f"error {exc}"
"""


def _run(box: Sandbox, runtime: Runtime, tmp_path: Path, up: Upstreams, body: str,
         network: NetworkPolicy) -> tuple[dict[str, object], ExecutionResult]:
    code = PRELUDE + textwrap.dedent(body) + "\nprint(json.dumps(out))\n"
    request = ExecutionRequest(
        argv=["python3", "net.py"], timeout_s=30, runtime=runtime, network=network,
        files=[InputFile(path="net.py", data=code.encode()),
               InputFile(path="ca.pem", data=up.ca_pem)])
    result = box.run(request, tmp_path / "run")
    assert result.exit_code == 0, result.stderr.text
    return json.loads(result.stdout.text), result


def test_an_allowed_host_answers_over_https_and_plain_http(
        egress_box: Sandbox, runtime: Runtime, tmp_path: Path, stand_ins: Upstreams) -> None:
    out, result = _run(egress_box, runtime, tmp_path, stand_ins, f"""
        out["https"] = get("https://{API}:{stand_ins.https_port}/hello", verify="ca.pem")
        out["http"] = get("http://{API}:{stand_ins.http_port}/secret")
        out["env"] = {{k: v for k, v in os.environ.items() if "proxy" in k.lower()}}
        out["secret_seen"] = any("{SECRET[1]}" in v for v in os.environ.values())
    """, _rules(stand_ins))
    assert out["https"] == f"200 hello from {API}:{stand_ins.https_port} /hello"
    # The proxy added the credential; the script never saw it (nor its variable).
    assert out["http"] == f"200 {AUTHORIZED}" and out["secret_seen"] is False
    assert SECRET[1] not in result.stdout.text + result.stderr.text
    env = out["env"]
    assert isinstance(env, dict)
    assert {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"} <= set(env)
    log = result.network
    assert log is not None and not log.refused() and log.reached() == [API]
    kinds = {(c.kind, c.port) for c in log.connections}
    assert kinds == {("https", stand_ins.https_port), ("http", stand_ins.http_port)}
    assert all(c.bytes_sent > 0 and c.bytes_received > 0 for c in log.connections)
    assert len(stand_ins.seen.requests) == 2


def test_everything_else_is_refused_and_reported(
        egress_box: Sandbox, runtime: Runtime, tmp_path: Path, stand_ins: Upstreams) -> None:
    http = stand_ins.http_port
    out, result = _run(egress_box, runtime, tmp_path, stand_ins, f"""
        out["other_https"] = get("https://evil.example.com/")
        out["other_http"] = get("http://evil.example.com/")
        out["raw_ip"] = get("http://127.0.0.1:{http}/")
        out["loopback_name"] = get("http://loopback.stand-in.test:{http}/")
        out["metadata_name"] = get("http://metadata.stand-in.test/latest/meta-data/")
        out["mixed_answers"] = get("http://mixed.stand-in.test/")
        out["other_port"] = get("http://{API}:81/")
        out["direct"] = attempt(lambda: socket.create_connection(("192.0.2.1", 80), timeout=3))
        out["dns"] = attempt(lambda: socket.getaddrinfo("{API}", 443))
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        out["udp"] = attempt(lambda: udp.sendto(b"x", ("192.0.2.1", 53)))
        proxy_port = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
        raw = socket.create_connection(("127.0.0.1", proxy_port))
        raw.sendall(b"not a proxy request\\r\\n\\r\\n")
        out["not_http"] = raw.recv(200).decode(errors="replace").split("\\r\\n")[0]
    """, _rules(stand_ins))
    assert "ProxyError" in str(out["other_https"]) and "403" in str(out["other_https"])
    for name in ("other_http", "raw_ip", "loopback_name", "metadata_name", "mixed_answers",
                 "other_port"):
        assert str(out[name]).startswith("403 selfcorrect egress:"), (name, out[name])
    for name in ("direct", "dns", "udp"):
        assert str(out[name]).startswith("error"), (name, out[name])
    assert str(out["not_http"]).startswith("HTTP/1.1 400")
    assert stand_ins.seen.requests == []  # nothing reached a stand-in
    assert result.network is not None
    refused = {(c.host, c.port): c.reason or "" for c in result.network.refused()}
    assert "not on the allow list" in refused[("evil.example.com", 443)]
    assert "not on the allow list" in refused[("evil.example.com", 80)]
    assert "is an IP address" in refused[("127.0.0.1", http)]
    assert "loopback address" in refused[("loopback.stand-in.test", http)]
    assert "link-local address 169.254.169.254" in refused[("metadata.stand-in.test", 80)]
    assert "private address 10.0.0.7" in refused[("mixed.stand-in.test", 80)]
    assert "port 81 is not in ports" in refused[(API, 81)]
    assert ("", 0) in refused  # the connection that spoke no HTTP
    assert not any(c.allowed for c in result.network.connections)
    # The script caught every error and printed none: the network watch named each attempt
    # around the proxy all the same, and nothing the proxy carried.
    assert _direct(result) == {("192.0.2.1", 80): "connection of its own",
                               (API, 443): "DNS lookup", ("192.0.2.1", 53): "UDP"}


def _direct(result: ExecutionResult) -> dict[tuple[str, int], str]:
    assert result.network is not None
    kinds = ("connection of its own", "DNS lookup", "UDP")
    return {(c.host, c.port): next(k for k in kinds if k in (c.reason or ""))
            for c in result.network.connections if c.kind == "direct"}


def test_a_warm_interpreter_watches_the_network_as_a_cold_one_does(
        docker_engine: DockerEngine, sandbox_image: str, runtime: Runtime, tmp_path: Path,
        stand_ins: Upstreams) -> None:
    """The watch is installed when an interpreter starts: a warm one started before the
    request (and before the run had network) notes the same attempts."""
    with Sandbox(docker_engine, sandbox_image, pool_size=1, refill="never",
                 preload_set=("requests",), egress=_settings()) as box:
        box.warm(Limits(), runtime)
        box.settle()
        out, result = _run(box, runtime, tmp_path, stand_ins, """
            out["direct"] = attempt(lambda: socket.create_connection(("192.0.2.1", 80), timeout=3))
            out["dns"] = attempt(lambda: socket.getaddrinfo("files.example.net", 443))
            out["api"] = get("https://{API}:{port}/", verify="ca.pem")
        """.replace("{API}", API).replace("{port}", str(stand_ins.https_port)),
                           _rules(stand_ins))
    assert result.start == "warm", result.start_note
    assert str(out["api"]).startswith("200"), out
    assert _direct(result) == {("192.0.2.1", 80): "connection of its own",
                               ("files.example.net", 443): "DNS lookup"}


def test_a_client_that_ignores_the_proxy_is_reported_as_a_direct_connection(
        egress_box: Sandbox, runtime: Runtime, tmp_path: Path, stand_ins: Upstreams) -> None:
    """As aiohttp does without trust_env=True (here requests told to ignore the variables):
    it fails inside the sandbox, and the run's log and its classification name the host
    with the hint."""
    code = ("import requests\nsession = requests.Session()\nsession.trust_env = False\n"
            f"session.get('http://{API}:{stand_ins.http_port}/', timeout=5)\n")
    request = ExecutionRequest(argv=["python3", "direct.py"], timeout_s=30, runtime=runtime,
                               network=_rules(stand_ins),
                               files=[InputFile(path="direct.py", data=code.encode())])
    result = egress_box.run(request, tmp_path / "run")
    assert result.exit_code == 1 and result.network is not None
    (record,) = result.network.refused()
    assert (record.kind, record.host) == ("direct", API) and "trust_env" in str(record.reason)
    category, evidence = classify_execution_failure(result, script_name="direct.py")
    assert category is Category.EXTERNAL
    assert evidence.startswith(f"{API}:{stand_ins.http_port} was refused (bypassed the proxy")
    assert stand_ins.seen.requests == []


@pytest.mark.parametrize("network", ["open", NetworkRules(observe=True)],
                         ids=["open", "observe"])
def test_open_lets_public_names_through_but_never_private_ones(
        egress_box: Sandbox, runtime: Runtime, tmp_path: Path, stand_ins: Upstreams,
        network: NetworkPolicy) -> None:
    out, result = _run(egress_box, runtime, tmp_path, stand_ins, f"""
        out["loopback_name"] = get("http://loopback.stand-in.test:{stand_ins.http_port}/")
        out["metadata_name"] = get("http://metadata.stand-in.test/")
        out["metadata_ip"] = get("http://169.254.169.254/latest/meta-data/")
        out["pinned"] = get("http://{API}:{stand_ins.http_port}/open")
    """, network)
    assert out["pinned"] == f"200 hello from {API}:{stand_ins.http_port} /open"
    for name in ("loopback_name", "metadata_name", "metadata_ip"):
        assert str(out[name]).startswith("403 selfcorrect egress:"), (name, out[name])
    assert result.network is not None and result.network.reached() == [API]
    assert result.network.observe is (network != "open")


def test_the_runs_byte_cap_ends_its_traffic(
        egress_box: Sandbox, runtime: Runtime, tmp_path: Path, stand_ins: Upstreams) -> None:
    out, result = _run(egress_box, runtime, tmp_path, stand_ins, f"""
        try:
            out["big"] = len(requests.get("http://{API}:{stand_ins.http_port}/bytes/5000000",
                                          timeout=10).content)
        except Exception as exc:
            out["big"] = type(exc).__name__
    """, _rules(stand_ins))
    # Debian's urllib3 hands back a short body; a newer one raises: never all 5 MB.
    assert out["big"] != 5_000_000
    assert result.network is not None and result.network.capped
    assert result.network.connections[0].bytes_received < 2_100_000


def test_frozen_tests_apart_from_the_candidate_reach_only_what_is_allowed(
        egress_box: Sandbox, runtime: Runtime, tmp_path: Path, stand_ins: Upstreams) -> None:
    """The tests' boundary (root runner, the tests and the candidate under two uids) gets
    the same tunnel: the candidate's function, called from the tests, reaches the stand-in
    and is refused the rest."""
    candidate = textwrap.dedent(f"""\
        import requests
        def fetch(host):
            return requests.get(f"http://{{host}}:{stand_ins.http_port}/f", timeout=10).text
        """)
    tests = textwrap.dedent(f"""\
        from candidate import fetch
        def test_the_api_answers():
            assert fetch("{API}") == "hello from {API}:{stand_ins.http_port} /f"
        def test_another_host_is_refused():
            assert fetch("evil.example.com").startswith("selfcorrect egress:")
        """)
    request = ExecutionRequest(
        argv=boundary_pytest_argv(["test_it.py"]), timeout_s=60, runtime=runtime,
        network=_rules(stand_ins),
        files=[InputFile(path="candidate.py", data=candidate.encode()),
               InputFile(path="test_it.py", data=tests.encode())],
        boundary=Boundary(candidate="candidate.py", module="candidate", tests=["test_it.py"]),
        artifact_paths=[PYTEST_JUNIT_PATH])
    result = egress_box.run(request, tmp_path / "run")
    assert result.exit_code == 0, result.stdout.text + result.stderr.text
    assert result.network is not None
    assert [(c.host, c.allowed) for c in result.network.connections] == [
        (API, True), ("evil.example.com", False)]
