"""Fast tier: a client keeps under the call budget its login names (``cardroom.client.pacing``).

The bug: the bots' sit & go on the dealer (tests/services/test_tournament_on_the_dealer.py) failed in
CI with RESOURCE_EXHAUSTED "rate limit: at most 20 calls/s per player" — two players heads-up with no
think time sent more than the gateway's 20 messages/s, and the winner's status call right after the
last hand found his bucket empty. A client that knows the budget waits its turn instead."""

from __future__ import annotations

import asyncio
import dataclasses

import grpc

from cardroom.client.connection import GatewayClient
from cardroom.client.pacing import SHARE, Pace
from cardroom.v1 import dealer_pb2 as d, gateway_pb2 as g, gateway_pb2_grpc as g_grpc
from gateway.operator import GatewayOperatorService
from gateway.service import GatewayService
from tests.fast.gateway.fakes import FakeDealer, backends
from tests.fast.gateway.test_gateway_service import config
from tests.fast.inproc import serving

SNAPSHOT = d.TableEvent(table_id="t1", snapshot=d.TableState(info=d.TableInfo(table_id="t1")))


class Clock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))


def test_a_pace_spends_its_burst_then_spaces_the_calls_at_its_rate_in_the_order_asked() -> None:
    clock = Clock()
    pace = Pace(10, 2, clock=clock, sleep=clock.sleep)
    assert [round(pace.delay(), 6) for _ in range(4)] == [0.0, 0.0, 0.1, 0.2]  # each waits for its own token
    clock.now += 1.0  # idle: the bucket refills, up to its burst only
    assert [round(pace.delay(), 6) for _ in range(3)] == [0.0, 0.0, 0.1]
    asyncio.run(pace.take())
    assert clock.slept == [0.2]


def test_a_pace_stays_under_the_gateway_s_budget_and_none_named_is_unpaced() -> None:
    clock = Clock()
    pace = Pace(clock=clock, sleep=clock.sleep)
    assert [pace.delay() for _ in range(100)] == [0.0] * 100  # no budget named yet
    pace.keep_under(20, 40)
    assert (pace.rate, pace.burst) == (20 * SHARE, 20)
    spent = [pace.delay() for _ in range(20)]
    pace.keep_under(20, 40)  # a refreshed token names the same budget: the bucket is not filled again
    assert spent == [0.0] * 20 and pace.delay() > 0
    pace.keep_under(0, 0)  # a gateway that names none
    assert pace.delay() == 0.0


def test_a_client_calls_and_plays_within_its_budget_where_the_gateway_refused_it() -> None:
    """A player's calls and Play messages as fast as they go: none refused as over his rate. The burst
    leaves the client's half of it spare for arrivals bunched on a busy machine (the services' own is
    40); unpaced, these calls run it dry at once."""
    dealer = FakeDealer(answers={"Act": [d.ActResponse(hand_number=1)]}, watches=[[SNAPSHOT]])
    cfg = dataclasses.replace(config(), player_rate=40, player_burst=6)
    back = backends(dealer=dealer)

    def add(servicers: tuple[GatewayService, GatewayOperatorService], server: grpc.aio.Server) -> None:
        g_grpc.add_GatewayServicer_to_server(servicers[0], server)

    async def main() -> tuple[g.LoginResponse, list[str], list[str]]:
        servicers = (GatewayService(cfg, back), GatewayOperatorService(cfg.operator_token, back))
        servicers[0].presence.start()
        try:
            async with serving(add, servicers) as address:
                client = GatewayClient(address)
                try:
                    reply = await client.login("ann")
                    calls = []
                    for _ in range(20):
                        try:
                            await client.balances()
                            calls.append("OK")
                        except grpc.aio.AioRpcError as err:
                            calls.append(err.code().name)
                    stream = client.play("t1")
                    for i in range(10):
                        await stream.send(g.PlayRequest(request_id=f"a{i}", act=g.PlayAction(hand_number=1)))
                    answers: list[str] = []
                    async for event in stream:
                        kind = event.WhichOneof("kind")
                        if kind == "result":
                            answers.append("OK")
                        elif kind == "error":
                            answers.append(event.error.code)
                        if len(answers) == 10:
                            break
                    stream.cancel()
                    return reply, calls, answers
                finally:
                    await client.close()
        finally:
            await servicers[0].presence.stop()

    reply, calls, answers = asyncio.run(asyncio.wait_for(main(), 20))
    assert (reply.calls_per_second, reply.call_burst) == (40, 6)  # the login names the budget
    assert calls == ["OK"] * 20
    assert answers == ["OK"] * 10
    assert [m for m, _ in dealer.calls].count("Act") == 10
