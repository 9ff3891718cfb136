"""Fast tier: whom the gateway's rate limits count a call against behind the web edge (issue 18:
"per-address limits behind Envoy"; issue 14 item 3: "Add per-player and per-address limits").
Behind a trusted proxy each browser is limited by its own address (the nearest untrusted hop of
x-forwarded-for, which Envoy appends); nobody else can choose his address with that header."""

from __future__ import annotations

import dataclasses

import grpc
import pytest

from cardroom.runtime import errors
from cardroom.v1 import dealer_pb2 as d, gateway_pb2 as g, gateway_pb2_grpc as g_grpc
from gateway.caller import Caller, caller_of, parse_networks
from tests.fast.gateway.fakes import FakeDealer, backends
from tests.fast.gateway.test_gateway_service import auth, config, failure, run

PROXY = "ipv4:127.0.0.1:40000"
TRUSTED = parse_networks("127.0.0.1, 10.0.0.0/8")


def xff(value: str) -> list[tuple[str, str]]:
    return [("x-forwarded-for", value)]


def test_a_direct_client_is_its_peer_and_its_forwarded_for_is_ignored() -> None:
    spoofer = "ipv4:198.51.100.9:5000"
    assert caller_of(spoofer, xff("203.0.113.7"), TRUSTED) == Caller(spoofer, "ipv4:198.51.100.9")
    assert caller_of(PROXY, xff("203.0.113.7"), ()) == Caller(PROXY, "ipv4:127.0.0.1")  # nothing trusted


def test_behind_a_trusted_proxy_the_client_is_the_nearest_untrusted_hop() -> None:
    assert caller_of(PROXY, xff("203.0.113.7"), TRUSTED) == Caller(f"{PROXY}|ipv4:203.0.113.7", "ipv4:203.0.113.7")
    # The browser wrote its own header; Envoy appended the address it saw: that one counts.
    assert caller_of(PROXY, xff("1.2.3.4, 203.0.113.7"), TRUSTED).address == "ipv4:203.0.113.7"
    # Two trusted proxies in a row (an ingress, then Envoy) are walked past.
    assert caller_of(PROXY, xff("203.0.113.7, 10.1.2.3"), TRUSTED).address == "ipv4:203.0.113.7"
    assert caller_of(PROXY, [("X-Forwarded-For", b"2001:db8::7")], TRUSTED).address == "ipv6:[2001:db8::7]"


def test_a_trusted_proxy_without_a_usable_header_is_limited_as_itself() -> None:
    direct = Caller(PROXY, "ipv4:127.0.0.1")
    assert caller_of(PROXY, (), TRUSTED) == direct  # e.g. the bots of make run, on loopback
    assert caller_of(PROXY, xff("203.0.113.7, not-an-address"), TRUSTED) == direct
    assert caller_of(PROXY, xff("10.0.0.2"), TRUSTED) == direct  # only trusted hops


def test_a_bad_trusted_proxies_entry_is_named() -> None:
    with pytest.raises(ValueError, match="'10.0.0.0/33'"):
        parse_networks("127.0.0.1, 10.0.0.0/33")
    assert parse_networks(" , ::1 ,") == parse_networks("::1")


def _lobby_codes(stub: g_grpc.GatewayStub, browsers: list[str]):
    async def calls() -> list[grpc.StatusCode]:
        codes = []
        for i, address in enumerate(browsers):
            metadata = [*auth(f"p{i}"), *xff(address)]
            try:
                await stub.Lobby(g.LobbyRequest(), metadata=metadata)
                codes.append(grpc.StatusCode.OK)
            except grpc.aio.AioRpcError as err:
                assert errors.reason_of(err) == "ADDRESS_RATE_LIMITED", err
                codes.append(err.code())
        return codes

    return calls()


def test_browsers_behind_the_trusted_proxy_each_have_their_own_address_bucket() -> None:
    # The in-process server sees this test's channel from 127.0.0.1: the proxy's place.
    limited = dataclasses.replace(config(), address_rate=0.001, address_burst=2)
    browsers = ["203.0.113.1", "203.0.113.1", "203.0.113.2", "203.0.113.2", "203.0.113.1"]

    async def trusted(stub: g_grpc.GatewayStub, _: g_grpc.GatewayOperatorStub) -> None:
        codes = await _lobby_codes(stub, browsers)
        assert codes == [grpc.StatusCode.OK] * 4 + [grpc.StatusCode.RESOURCE_EXHAUSTED]

    async def untrusted(stub: g_grpc.GatewayStub, _: g_grpc.GatewayOperatorStub) -> None:
        codes = await _lobby_codes(stub, browsers)  # the header is ignored: one address, two calls
        assert codes == [grpc.StatusCode.OK] * 2 + [grpc.StatusCode.RESOURCE_EXHAUSTED] * 3

    def dealer() -> FakeDealer:
        return FakeDealer(answers={"ListTables": [d.ListTablesResponse()]})

    run(backends(dealer()), trusted, dataclasses.replace(limited, trusted_proxies=TRUSTED))
    run(backends(dealer()), untrusted, limited)


def test_sign_ups_behind_the_proxy_are_counted_per_browser() -> None:
    cfg = dataclasses.replace(config(), signup_rate=0.001, signup_burst=1, trusted_proxies=TRUSTED)

    async def scenario(stub: g_grpc.GatewayStub, _: g_grpc.GatewayOperatorStub) -> None:
        password = "correct horse battery staple"
        await stub.SignUp(g.SignUpRequest(player_id="ann", password=password), metadata=xff("203.0.113.1"))
        await stub.SignUp(g.SignUpRequest(player_id="bob", password=password), metadata=xff("203.0.113.2"))
        err = await failure(
            stub.SignUp(g.SignUpRequest(player_id="cat", password=password), metadata=xff("203.0.113.1"))
        )
        assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "SIGNUP_LIMITED")

    run(backends(), scenario, cfg)
