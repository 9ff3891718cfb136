"""Issue 13 end to end, through the real gateway, dealer, wallet and connection monitor: a table
where one player leaves on his turn, one player's client is killed (he disconnects, times out,
is sat out and then stood up with his chips back), and the leaver comes back. No other player's
hand is affected (nobody else ever times out; the player after the leaver gets his full clock)
and every chip is accounted for."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from cardroom.client.connection import GatewayClient, PlayStream
from cardroom.v1 import common_pb2, dealer_pb2 as d, dealer_pb2_grpc, gateway_pb2 as g
from tests.e2e.stack import PLAY_GRANT, Stack

ACTION_SECONDS = 3.0
pytestmark = pytest.mark.slow


def test_a_leaver_a_disconnected_player_and_a_rejoiner(cardroom: Stack) -> None:
    asyncio.run(asyncio.wait_for(_scenario(cardroom), 240))


def _seconds(ts: object) -> float:
    return ts.seconds + ts.nanos / 1e9  # type: ignore[attr-defined]


class Player:
    """One player's client: his Play stream, every table event he saw, a simple strategy."""

    def __init__(self, stack: Stack, name: str, table_id: str) -> None:
        self.name, self.table_id = name, table_id
        self.client = GatewayClient(stack.address("gateway"))
        self.events: list[d.TableEvent] = []
        self.stream: PlayStream | None = None
        self.task: asyncio.Task[None] | None = None
        self.leave_on_turn = False
        self.left_at: d.TableEvent | None = None  # the turn he left on

    async def sit(self, buy_in: int = 200) -> None:
        await self.client.join(self.table_id, buy_in)
        self.stream = self.client.play(self.table_id)
        self.task = asyncio.create_task(self._follow(self.stream))

    async def _follow(self, stream: PlayStream) -> None:
        async for event in stream:
            if event.WhichOneof("kind") != "table":
                continue
            self.events.append(event.table)
            what = event.table.WhichOneof("event")
            turn = event.table.turn_started.to_act if what == "turn_started" else None
            if what == "snapshot" and event.table.snapshot.to_act.player_id == self.name:
                turn = event.table.snapshot.to_act  # the turn began before this stream opened
                action = d.ACTION_TYPE_CHECK if d.ACTION_TYPE_CHECK in turn.actions else d.ACTION_TYPE_CALL
                move = g.PlayAction(action=action, hand_number=event.table.snapshot.hand_number)
                await stream.send(g.PlayRequest(act=move))
                continue
            if turn is None or turn.player_id != self.name:
                continue
            if self.leave_on_turn:
                self.leave_on_turn = False
                self.left_at = event.table
                await self.client.leave(self.table_id)
                continue
            action = d.ACTION_TYPE_CHECK if d.ACTION_TYPE_CHECK in turn.actions else d.ACTION_TYPE_CALL
            await stream.send(g.PlayRequest(act=g.PlayAction(action=action, hand_number=event.table.hand_number)))

    def changes(self, change: str, player: str) -> list[d.SeatView]:
        return [
            e.seat_changed.seat
            for e in self.events
            if e.WhichOneof("event") == "seat_changed"
            and e.seat_changed.change == change
            and e.seat_changed.seat.player_id == player
        ]

    async def kill(self) -> None:
        """The client dies: no leave, the stream and the channel just go."""
        assert self.task is not None and self.stream is not None
        self.task.cancel()
        self.stream.cancel()
        await self.client.close()

    async def stop(self) -> None:
        if self.stream is not None:
            await self.stream.close()
            self.stream.cancel()
        if self.task is not None:
            self.task.cancel()
        await self.client.close()


async def _wait(predicate, timeout: float = 90.0) -> None:  # type: ignore[no-untyped-def]
    async def poll() -> None:
        while not predicate():
            await asyncio.sleep(0.1)

    await asyncio.wait_for(poll(), timeout)


async def _scenario(stack: Stack) -> None:
    table_id = f"person-{stack.run}"
    async with stack.aio_channel("dealer") as channel:  # as the operator (mTLS between services)
        await dealer_pb2_grpc.DealerStub(channel).CreateTable(
            d.CreateTableRequest(
                table_id=table_id,
                config=d.TableConfig(
                    name="issue 13",
                    variant="NT",
                    currency=common_pb2.CURRENCY_PLAY,
                    seats=5,
                    stakes=d.Stakes(small_blind=1, big_blind=2),
                    hand_pause_seconds=0.2,
                    clock=d.ClockSettings(
                        action_seconds=ACTION_SECONDS, sit_out_after_timeouts=2, stand_up_after_seconds=3.0
                    ),
                ),
            ),
            timeout=10,
        )
    tag = uuid.uuid4().hex[:5]
    ann, ben, cat, dan = (Player(stack, f"{who}{tag}", table_id) for who in ("ann", "ben", "cat", "dan"))
    everyone = (ann, ben, cat, dan)
    try:
        for p in everyone:
            await p.client.login(p.name)
            await p.sit()
        watcher = cat
        await _wait(
            lambda: any(
                e.WhichOneof("event") == "hand_started" and len(e.hand_started.seats) == 4 for e in watcher.events
            )
        )

        # 1. ann leaves on her turn: the next player gets his full clock, nobody is timed out
        ann.leave_on_turn = True
        await _wait(lambda: bool(ann.changes("stood_up", ann.name) or cat.changes("stood_up", ann.name)))
        assert ann.left_at is not None
        after = [e for e in cat.events if e.sequence > ann.left_at.sequence]
        nxt = next(
            e for e in after if e.WhichOneof("event") == "turn_started" and e.hand_number == ann.left_at.hand_number
        )
        assert nxt.turn_started.to_act.player_id != ann.name
        assert _seconds(nxt.turn_started.to_act.deadline) >= _seconds(nxt.time) + ACTION_SECONDS - 0.01

        # 2. ben's client is killed: he times out, is sat out, then stood up with his chips back
        await ben.kill()
        await _wait(lambda: bool(cat.changes("absent_stood_up", ben.name)), timeout=150)
        assert cat.changes("timed_out_sat_out", ben.name)
        # 3. ann comes back
        await ann.stop()
        ann.client = GatewayClient(stack.address("gateway"))
        await ann.client.login(ann.name)
        await ann.sit(150)
        hands = {
            e.hand_number
            for e in cat.events
            if e.WhichOneof("event") == "hand_started" and ann.name in {s.player_id for s in e.hand_started.seats}
        }
        await _wait(
            lambda: (
                len(
                    {
                        e.hand_number
                        for e in cat.events
                        if e.WhichOneof("event") == "hand_finished" and e.hand_number > max(hands)
                    }
                )
                >= 1
            )
        )

        # nobody but ben ever timed out: one player's leaving or dying cost no other his hand
        timed_out = {
            e.action.player_id
            for e in cat.events + dan.events
            if e.WhichOneof("event") == "action" and e.action.timeout
        }
        assert timed_out <= {ben.name}
        for p in (ann, cat, dan):
            await p.client.leave(table_id)
        await _wait(
            lambda: (
                all(cat.changes("stood_up", p.name) for p in (ann, dan))
                or all(dan.changes("stood_up", p.name) for p in (ann, cat))
            )
        )
        await asyncio.sleep(1.0)
        ben.client = GatewayClient(stack.address("gateway"))
        await ben.client.login(ben.name)
        total = 0
        for p in everyone:
            balances = {b.currency: b.balance for b in (await p.client.balances()).balances}
            total += balances[common_pb2.CURRENCY_PLAY]
        assert total == 4 * PLAY_GRANT  # play money: no rake, every chip back
    finally:
        for p in everyone:
            try:
                await p.stop()
            except Exception:  # noqa: BLE001 - already closed
                pass
