"""The gateway in front of the real dealer and wallet: lobby, join/leave with dealer statuses
passed through, a Play stream that shows only the player's own hole cards, actions out of turn
rejected on the stream, add chips, and the wallet balance after leaving."""

from __future__ import annotations

import asyncio
import uuid

import grpc
import pytest

from cardroom.client.connection import GatewayClient, PlayStream
from cardroom.v1 import common_pb2, dealer_pb2 as d, dealer_pb2_grpc, gateway_pb2 as g
from tests.e2e.stack import PLAY_GRANT, Stack


async def _until(stream: PlayStream, predicate, timeout: float = 60) -> list[g.PlayEvent]:
    """Events up to and including the first that matches ``predicate``."""
    seen: list[g.PlayEvent] = []

    async def pump() -> None:
        async for event in stream:
            seen.append(event)
            if predicate(event):
                return
        raise AssertionError("stream ended")

    await asyncio.wait_for(pump(), timeout)
    return seen


def _table(event: g.PlayEvent, kind: str):
    return (
        getattr(event.table, kind)
        if event.WhichOneof("kind") == "table" and event.table.WhichOneof("event") == kind
        else None
    )


def test_gateway_with_the_dealer(cardroom: Stack) -> None:
    asyncio.run(_scenario(cardroom))


async def _scenario(stack: Stack) -> None:
    table_id = f"gw-{stack.run}"
    async with stack.aio_channel("dealer") as channel:
        await dealer_pb2_grpc.DealerStub(channel).CreateTable(
            d.CreateTableRequest(
                table_id=table_id,
                config=d.TableConfig(
                    name="gateway test",
                    variant="NT",
                    currency=common_pb2.CURRENCY_PLAY,
                    seats=3,
                    stakes=d.Stakes(small_blind=1, big_blind=2),
                    hand_pause_seconds=0.2,
                    # No decision times out while the test looks at the first one (a loaded CI machine).
                    clock=d.ClockSettings(action_seconds=600),
                ),
            ),
            timeout=10,
        )
    names = [f"{who}{uuid.uuid4().hex[:6]}" for who in ("ann", "ben")]
    ann, ben = GatewayClient(stack.address("gateway")), GatewayClient(stack.address("gateway"))
    try:
        await ann.login(names[0])
        await ben.login(names[1])
        lobby = {t.table_id: t for t in await ann.lobby()}
        info = lobby[table_id]
        assert (info.variant, info.seats, info.seats_taken, info.max_buy_in) == ("NT", 3, 0, 200)
        assert info.stakes.big_blind == 2 and info.currency == common_pb2.CURRENCY_PLAY

        with pytest.raises(grpc.aio.AioRpcError) as err:
            await ann.join(table_id, 10_000)  # over the maximum buy-in
        assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await ann.join("no-such-table", 100)
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
        await ann.join(table_id, 100)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await ann.join(table_id, 100)
        assert err.value.code() == grpc.StatusCode.ALREADY_EXISTS
        assert [t.seats_taken for t in await ben.lobby() if t.table_id == table_id] == [1]

        stream_a = ann.play(table_id)
        first = await _until(stream_a, lambda e: _table(e, "snapshot") is not None)
        assert _table(first[-1], "snapshot").info.table_id == table_id
        # Ben watches before he sits, so his stream sees the first hand from its start (a stream
        # opened after the deal starts from the snapshot and would only see a later turn).
        stream_b = ben.play(table_id)
        await _until(stream_b, lambda e: _table(e, "snapshot") is not None)
        await ben.join(table_id, 150)
        seen_b = await _until(stream_b, lambda e: _table(e, "turn_started") is not None)
        seen_a = await _until(stream_a, lambda e: _table(e, "turn_started") is not None)

        def dealt(events: list[g.PlayEvent]) -> tuple[dict[int, list[str]], dict[int, str]]:
            seats = {}
            for e in events:
                if (h := _table(e, "hand_started")) is not None:
                    seats = {s.seat: s.player_id for s in h.seats}
            return {c.seat: list(c.cards) for e in events if (c := _table(e, "cards_dealt")) is not None}, seats

        cards_a, seats = dealt(seen_a)
        mine = next(s for s, p in seats.items() if p == names[0])
        theirs = next(s for s, p in seats.items() if p == names[1])
        assert "??" not in cards_a[mine] and len(cards_a[mine]) == 2
        assert cards_a[theirs] == ["??", "??"]  # the other's hole cards stay hidden
        cards_b, _ = dealt(seen_b)
        assert cards_b[mine] == ["??", "??"] and "??" not in cards_b[theirs]
        assert not set(cards_a[mine]) & set(cards_b[theirs])

        turn = _table(seen_a[-1], "turn_started").to_act
        waiting, waiting_stream = (ben, stream_b) if turn.player_id == names[0] else (ann, stream_a)
        await waiting_stream.send(g.PlayRequest(request_id="early", act=g.PlayAction(action=d.ACTION_TYPE_CALL)))
        err_event = await _until(waiting_stream, lambda e: e.WhichOneof("kind") == "error")
        assert err_event[-1].error.request_id == "early" and err_event[-1].error.code == "FAILED_PRECONDITION"

        # Leaving mid-hand is deferred; both leave and the chips go back to the wallets.
        reply_a, reply_b = await ann.leave(table_id), await ben.leave(table_id)
        assert reply_a.pending or reply_b.pending
        await _until(
            stream_a,
            lambda e: (
                (s := _table(e, "seat_changed")) is not None and s.change == "stood_up" and s.seat.player_id == names[0]
            ),
        )
        await _until(
            stream_b,
            lambda e: (
                (s := _table(e, "seat_changed")) is not None and s.change == "stood_up" and s.seat.player_id == names[1]
            ),
        )
        for stream in (stream_a, stream_b):
            await stream.close()
            stream.cancel()
        totals = []
        for client in (ann, ben):
            balances = {b.currency: b.balance for b in (await client.balances()).balances}
            totals.append(balances[common_pb2.CURRENCY_PLAY])
        assert sum(totals) == 2 * PLAY_GRANT
    finally:
        await ann.close()
        await ben.close()
