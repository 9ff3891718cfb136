"""Through the real gateway, dealer, wallet and connection monitor:

* issue 13, 'The table view': the action clock and then the time bank, each with its deadline from
  the dealer; side pots shown during the hand (the dealer's pots, from the rules core);
* issue 12: "a gateway call for a player's own recent hands (their own hole cards only, others' only
  where shown at showdown)" — two players play hands to a showdown and to a fold, each asks
  ``MyHands``; every record is checked against the full hand record the dealer published on the
  records topic, and the PokerStars text is read by pokerkit's ``PokerStarsParser``.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import tomllib
import uuid
import warnings
from collections.abc import Callable

import grpc
import pokerkit as pk
import pytest

from cardroom.cli.commands.history import topic_records
from cardroom.client.connection import GatewayClient, PlayStream
from cardroom.client.view import TableView
from cardroom.core import phh
from cardroom.core.engine import HandMucked, HandShown
from cardroom.v1 import common_pb2, dealer_pb2 as d, dealer_pb2_grpc, gateway_pb2 as g
from tests.e2e.stack import Stack

pytestmark = pytest.mark.slow

Strategy = Callable[["Player", d.LegalActionsView, d.TableEvent], g.PlayAction | None]


def _seconds(ts: object) -> float:
    return ts.seconds + ts.nanos / 1e9  # type: ignore[attr-defined]


def passive(player: Player, turn: d.LegalActionsView, event: d.TableEvent) -> g.PlayAction | None:
    action = d.ACTION_TYPE_CHECK if d.ACTION_TYPE_CHECK in turn.actions else d.ACTION_TYPE_CALL
    return g.PlayAction(action=action)


class Player:
    """One player's client: his Play stream, the events he saw, his view, a strategy."""

    def __init__(self, stack: Stack, name: str, table_id: str, strategy: Strategy = passive) -> None:
        self.name, self.table_id, self.strategy = name, table_id, strategy
        self.client = GatewayClient(stack.address("gateway"))
        self.events: list[d.TableEvent] = []
        self.view = TableView(me=name)
        self.renders: list[str] = []
        self.stream: PlayStream | None = None
        self.task: asyncio.Task[None] | None = None

    async def sit(self, buy_in: int) -> None:
        await self.client.login(self.name)
        await self.client.join(self.table_id, buy_in)
        self.stream = self.client.play(self.table_id)
        self.task = asyncio.create_task(self._follow(self.stream))

    async def _follow(self, stream: PlayStream) -> None:
        async for event in stream:
            if event.WhichOneof("kind") != "table":
                continue
            self.events.append(event.table)
            self.view.apply(event.table)
            self.renders.append(self.view.render())
            turn = self.view.turn_shown(event.table)  # also a snapshot: the hand may be dealt before the stream opened
            if turn is None:
                continue
            at = d.TableEvent()
            at.CopyFrom(event.table)
            at.hand_number = self.view.hand_number
            move = self.strategy(self, turn, at)
            if move is not None:
                move.hand_number = at.hand_number
                await stream.send(g.PlayRequest(act=move))

    def of(self, kind: str) -> list:  # type: ignore[type-arg]
        return [getattr(e, kind) for e in self.events if e.WhichOneof("event") == kind]

    async def stop(self) -> None:
        try:
            await self.client.leave(self.table_id)
        except Exception:  # noqa: BLE001 - not seated any more
            pass
        if self.stream is not None:
            await self.stream.close()
            self.stream.cancel()
        if self.task is not None:
            self.task.cancel()
        await self.client.close()


async def _wait(predicate: Callable[[], bool], timeout: float = 90.0) -> None:
    async def poll() -> None:
        while not predicate():
            await asyncio.sleep(0.1)

    await asyncio.wait_for(poll(), timeout)


async def _table(stack: Stack, table_id: str, seats: int, clock: d.ClockSettings) -> None:
    async with stack.aio_channel("dealer") as channel:  # as the operator (mTLS between services)
        await dealer_pb2_grpc.DealerStub(channel).CreateTable(
            d.CreateTableRequest(
                table_id=table_id,
                config=d.TableConfig(
                    name=table_id,
                    variant="NT",
                    currency=common_pb2.CURRENCY_PLAY,
                    seats=seats,
                    stakes=d.Stakes(small_blind=1, big_blind=2),
                    hand_pause_seconds=0.2,
                    clock=clock,
                ),
            ),
            timeout=10,
        )


# ------------------------------------------------------------------ issue 13: the two clocks


def test_the_action_clock_then_the_time_bank_through_the_gateway(cardroom: Stack) -> None:
    asyncio.run(asyncio.wait_for(_clocks(cardroom), 180))


async def _clocks(stack: Stack) -> None:
    table_id = f"clocks-{stack.run}"
    await _table(stack, table_id, 2, d.ClockSettings(action_seconds=2, time_bank_seconds=3))
    tag = uuid.uuid4().hex[:5]
    ann = Player(stack, f"ann{tag}", table_id, strategy=lambda p, t, e: None)  # never acts: her clocks run
    ben = Player(stack, f"ben{tag}", table_id)
    try:
        await ann.sit(100)
        await ben.sit(100)
        # heads-up, the small blind (money in the pot) acts first: when ann is on turn with her
        # blind posted, her action clock runs out and the dealer starts her time bank
        await _wait(lambda: any(t.to_act.time_bank_running for t in ann.of("turn_started")))
        banked = next(t.to_act for t in ann.of("turn_started") if t.to_act.time_bank_running)
        first = next(
            t.to_act
            for t in ann.of("turn_started")
            if t.to_act.seat == banked.seat and _seconds(t.to_act.action_deadline) == _seconds(banked.action_deadline)
        )
        assert banked.player_id == ann.name and not first.time_bank_running
        assert first.time_bank_seconds == 3 and _seconds(first.deadline) == _seconds(first.action_deadline)
        assert abs(_seconds(banked.deadline) - _seconds(banked.action_deadline) - 3) < 1e-6
        texts = "\n".join(ann.renders)
        assert re.search(r"to act: ann\w+ \(action clock \d+ s, time bank 3 s\)", texts)
        assert re.search(r"to act: ann\w+ \(time bank \d+ s\)", texts)
    finally:
        for p in (ann, ben):
            await p.stop()


# ------------------------------------------------------------------ issue 13: side pots during the hand


def _short_all_in(p: Player, turn: d.LegalActionsView, event: d.TableEvent) -> g.PlayAction | None:
    """The short stack moves in when he can; the others call, and bet the minimum after the flop."""
    if p.name.startswith("ben") and d.ACTION_TYPE_RAISE in turn.actions:
        return g.PlayAction(action=d.ACTION_TYPE_RAISE, amount=turn.max_to)
    if p.view.board and d.ACTION_TYPE_BET in turn.actions:
        return g.PlayAction(action=d.ACTION_TYPE_BET, amount=turn.min_to)
    return passive(p, turn, event)


def test_side_pots_are_shown_during_the_hand_through_the_gateway(cardroom: Stack) -> None:
    asyncio.run(asyncio.wait_for(_side_pots(cardroom), 180))


async def _side_pots(stack: Stack) -> None:
    table_id = f"pots-{stack.run}"
    await _table(stack, table_id, 3, d.ClockSettings(action_seconds=600))
    tag = uuid.uuid4().hex[:5]
    ann, ben, cat = (Player(stack, f"{who}{tag}", table_id, _short_all_in) for who in ("ann", "ben", "cat"))
    try:
        await ann.sit(200)
        await cat.sit(200)
        await ben.sit(20)  # last: he waits for the big blind and plays three-handed

        def side_pot() -> bool:
            return any(len(e.pots) > 1 for e in ann.of("pots_changed"))

        await _wait(side_pot)
        changed = next(e for e in ann.of("pots_changed") if len(e.pots) > 1)
        hand = next(e for e in ann.events if e.WhichOneof("event") == "pots_changed" and len(e.pots_changed.pots) > 1)
        started = next(s for s in ann.of("hand_started") if s.hand_number == hand.hand_number)
        seat = {s.player_id: s.seat for s in started.seats}
        assert seat[ben.name] in changed.pots[0].members  # the main pot: everyone
        assert seat[ben.name] not in changed.pots[1].members  # the side pot: without the all-in player
        assert set(changed.pots[1].members) == {seat[ann.name], seat[cat.name]}
        line = f"main pot {changed.pots[0].amount}, side pot 1 {changed.pots[1].amount}"

        def both_show_it() -> bool:  # each player's stream delivers the same event at its own pace
            return all(any(line in text for text in p.renders) for p in (ann, cat))

        with contextlib.suppress(TimeoutError):
            await _wait(both_show_it, timeout=30.0)
        assert both_show_it(), f"{line!r} not drawn for both players"
    finally:
        for p in (ann, ben, cat):
            await p.stop()


# ------------------------------------------------------------------ issue 12: a player's own hands


def _showdown_or_fold(p: Player, turn: d.LegalActionsView, event: d.TableEvent) -> g.PlayAction | None:
    """Odd hands: checked and called to the showdown; even hands: the first to act folds."""
    if event.hand_number % 2 == 0 and d.ACTION_TYPE_FOLD in turn.actions:
        return g.PlayAction(action=d.ACTION_TYPE_FOLD)
    return passive(p, turn, event)


def _bracketed(text: str) -> set[str]:
    return {card for group in re.findall(r"\[([^\]]*)\]", text) for card in group.split()}


def test_my_hands_through_the_gateway(cardroom: Stack) -> None:
    asyncio.run(asyncio.wait_for(_my_hands(cardroom), 240))


async def _my_hands(stack: Stack) -> None:
    table_id = f"hands-{stack.run}"
    await _table(stack, table_id, 2, d.ClockSettings(action_seconds=600))
    tag = uuid.uuid4().hex[:5]
    ann, ben = (Player(stack, f"{who}{tag}", table_id, _showdown_or_fold) for who in ("ann", "ben"))
    try:
        await ann.sit(200)
        await ben.sit(200)
        await _wait(lambda: len(ann.of("hand_finished")) >= 6, timeout=150)
        await ann.stop()
        await ben.stop()
        await asyncio.sleep(1.0)  # the records of the last hand reach the topic
        truth = {}
        for _, text in topic_records(stack.bootstrap, stack.topics["records"], table_id):
            fields = tomllib.loads(text)
            truth[fields["_hand_id"]] = phh.replay_fields(fields).hand
        seen = {"shown": 0, "mucked": 0, "folded": 0}
        for p in (ann, ben):
            p.client = GatewayClient(stack.address("gateway"))
            await p.client.login(p.name)
            reply = await p.client.my_hands(limit=20, pokerstars=True)
            assert reply.player_id == p.name and len(reply.hands) >= 6
            mine = [h for h in reply.hands if h.table_id == table_id]
            for record in mine:
                hand = truth[record.hand_id]
                shown = {e.seat for e in hand.events if isinstance(e, HandShown)}
                mucked = {e.seat for e in hand.events if isinstance(e, HandMucked)}
                written = _bracketed(record.pokerstars)
                for s in record.seats:
                    real = [str(c) for c in hand.hole_cards(s.seat)]
                    if s.player_id == p.name:
                        assert s.cards == real and set(real) <= written
                    elif s.seat in shown:
                        assert s.shown and s.cards == real and set(real) <= written
                        seen["shown"] += 1
                    else:  # folded or mucked: never shown
                        assert s.cards == [] and not set(real) & written, (p.name, record.hand_id, s)
                        seen["mucked"] += s.seat in mucked
                        seen["folded"] += hand.is_folded(s.seat)
            # the PokerStars text: every hand read by pokerkit's parser, with our stacks
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                parsed = list(pk.PokerStarsParser()(reply.pokerstars, error_status=True))
            assert len(parsed) == len(reply.hands)
            by_number = {r.hand_number: r for r in mine}
            for history in parsed:
                record = by_number[history.hand]
                starting = [s.starting_stack for s in sorted(record.seats, key=lambda s: s.seat)]
                assert sorted(history.starting_stacks) == sorted(starting)
            await p.client.close()
        assert seen["shown"] and seen["folded"], seen  # both kinds of hands were played
        # another player's hands cannot be asked for
        ann.client = GatewayClient(stack.address("gateway"))
        await ann.client.login(ann.name)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await ann.client.stub.MyHands(g.MyHandsRequest(player_id=ben.name), metadata=ann.client.metadata)
        assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
    finally:
        for p in (ann, ben):
            await p.client.close()
