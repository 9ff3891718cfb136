"""Fast tier: a client whose network dropped connects again without logging in again
(``GatewayClient.reconnect``), as the web client does after "Connection lost; reconnecting…".

The load test's reconnect storms made each dropped player log in again (a new refresh token, a
database commit at the gateway per player), which real clients do not do after a network drop:
the storms measured a login storm as well."""

from __future__ import annotations

import asyncio

import grpc

from cardroom.client.connection import GatewayClient
from cardroom.v1 import dealer_pb2 as d, gateway_pb2_grpc as g_grpc
from gateway.operator import GatewayOperatorService
from gateway.service import GatewayService
from tests.fast.gateway.fakes import FakeDealer, backends
from tests.fast.gateway.test_gateway_service import config
from tests.fast.inproc import serving

SNAPSHOT = d.TableEvent(table_id="t1", snapshot=d.TableState(info=d.TableInfo(table_id="t1")))


def test_a_reconnect_opens_a_new_connection_with_the_same_login() -> None:
    back = backends(dealer=FakeDealer(watches=[[SNAPSHOT]]))

    def add(servicers: tuple[GatewayService, GatewayOperatorService], server: grpc.aio.Server) -> None:
        g_grpc.add_GatewayServicer_to_server(servicers[0], server)

    async def main() -> dict[str, object]:
        gateway = GatewayService(config(), back)
        gateway.presence.start()
        try:
            async with serving(add, (gateway, GatewayOperatorService("op", back))) as address:
                client = GatewayClient(address)
                try:
                    await client.login("ann")
                    token, channel, pace, refresher = client.token, client.channel, client.pace, client._refresher
                    old = client.play("t1")
                    first = await anext(aiter(old))
                    old_session = gateway.sessions["ann"].session_id
                    await client.reconnect()
                    ended = ""
                    try:
                        async for _ in old:
                            pass
                    except grpc.aio.AioRpcError as err:
                        ended = err.code().name
                    except asyncio.CancelledError:
                        ended = "CANCELLED"
                    new = client.play("t1")
                    again = await anext(aiter(new))
                    new_session = gateway.sessions["ann"].session_id
                    balances = await client.balances()
                    new.cancel()
                    return {
                        "first": first.WhichOneof("kind"),
                        "again": again.WhichOneof("kind"),
                        "old stream": ended,
                        "same token": client.token == token,
                        "new channel": client.channel is not channel,
                        "same pace": client.pace is pace,
                        "refresher kept": client._refresher is refresher
                        and refresher is not None
                        and not refresher.done(),
                        "logins": len(gateway.accounts.store.refresh),  # type: ignore[attr-defined]
                        "connections": (old_session.rpartition("/")[0], new_session.rpartition("/")[0]),
                        "balance call": balances.player_id,
                    }
                finally:
                    await client.close()
        finally:
            await gateway.presence.stop()

    seen = asyncio.run(asyncio.wait_for(main(), 20))
    connections = seen.pop("connections")
    assert isinstance(connections, tuple) and connections[0] != connections[1], connections  # two TCP connections
    assert seen == {
        "first": "table",  # the table's snapshot
        "again": "table",  # the new stream follows the table again from its snapshot
        "old stream": "CANCELLED",  # the dropped connection's stream ended with it
        "same token": True,
        "new channel": True,
        "same pace": True,
        "refresher kept": True,
        "logins": 1,  # one refresh token issued: the reconnect made no login
        "balance call": "ann",
    }
