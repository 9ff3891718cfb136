"""Fast tier: the dealer's table actor in-process, on in-memory fakes and a manual clock.

Failure branches of the money paths (rules/002 'Buy-Ins': chips come from the player's
account; every chip accounted for): a refused or lost buy-in, a refund, a snapshot the
broker did not take, a settlement retried until acknowledged, idempotent request ids.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import grpc
import pytest

from cardroom.v1 import dealer_pb2
from dealer.errors import DealerError, precondition
from dealer.writeahead import RETRY_SECONDS
from tests.fast.dealer.fakes import FakeWriters, Harness, harness, nl_config

RICH = {"ann": 5000, "bob": 5000, "cat": 5000}


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 10))


def balanced(h: Harness) -> bool:
    """The escrow the actor believes in, the fake wallet's escrow and the chips agree."""
    pending = sum(c.amount for c in h.actor.pending_cashouts)
    return (
        h.actor.imbalance() == 0
        and h.wallet.escrow.get(h.actor.table_id, 0) == h.actor.escrow
        and h.actor.escrow == h.actor.chips() + pending
    )


def test_buy_in_moves_money_once_and_deals_when_two_are_ready() -> None:
    async def body() -> None:
        h = harness(balances=RICH)
        await h.sit("ann", 1000)
        await h.sit("bob", 500)
        assert h.wallet.balances == {"ann": 4000, "bob": 4500, "cat": 5000}
        assert balanced(h) and h.actor.escrow == 1500
        await h.settle()
        assert h.actor.table.in_hand and h.actor.table.hand_number == 1
        assert h.snapshots[-1].hand_in_progress and sum(s.stack for s in h.snapshots[-1].seats) == 1500
        await h.stop()

    run(body)


def test_the_hand_start_snapshot_may_linger_with_the_events_a_buy_ins_write_ahead_may_not() -> None:
    """The snapshot of a hand in progress is durable before the deal is shown (rules/003: a hand
    interrupted by a crash is cancelled, so its start must be on record) but no player waits on it:
    it shares the request of the table events. A buy-in's write-ahead is waited on by the player
    sitting down: it goes at once."""

    async def body() -> None:
        h = harness(balances=RICH)
        await h.sit("ann", 1000)
        await h.sit("bob", 500)
        await h.settle()
        assert h.actor.table.in_hand
        snapshots = [p for p in h.publisher.sent if isinstance(p.payload, dealer_pb2.TableSnapshot)]
        assert [(p.payload.hand_in_progress, p.linger) for p in snapshots][-1] == (True, True)
        assert not any(p.linger for p in snapshots if not p.payload.hand_in_progress)
        assert any(p.payload.HasField("pending_buy_in") for p in snapshots)
        await h.stop()

    run(body)


def test_refused_buy_in_leaves_nothing_pending_and_no_seat() -> None:
    async def body() -> None:
        h = harness(balances={"ann": 100})
        with pytest.raises(DealerError) as info:
            await h.sit("ann", 500)
        assert info.value.code == grpc.StatusCode.FAILED_PRECONDITION and "insufficient" in info.value.message
        assert h.actor.table.seating.seats == {} and h.actor.pending_buy_in is None
        # the write-ahead entry was written, then cleared
        assert h.snapshots[-2].HasField("pending_buy_in") and not h.snapshots[-1].HasField("pending_buy_in")
        assert h.wallet.balances == {"ann": 100} and balanced(h) and h.actor.escrow == 0
        await h.stop()

    run(body)


def test_wallet_down_during_buy_in_refuses_and_a_retry_with_the_same_id_succeeds() -> None:
    async def body() -> None:
        h = harness(balances=RICH)
        h.wallet.down = True
        with pytest.raises(DealerError) as info:
            await h.sit("ann", 1000, request_id="r1")
        assert info.value.code == grpc.StatusCode.UNAVAILABLE and "same request_id" in info.value.message
        assert h.actor.table.seating.seats == {} and h.actor.pending_buy_in is None
        h.wallet.down = False
        reply = await h.sit("ann", 1000, request_id="r1")
        assert reply.seat.stack == 1000 and h.wallet.balances["ann"] == 4000 and balanced(h)
        await h.stop()

    run(body)


def test_buy_in_whose_seat_was_taken_meanwhile_is_refunded() -> None:
    """The wallet took the money, then the seat could not be given: the buy-in comes back
    (a cash-out keyed ``<buy-in key>:refund``) and the command fails, nothing else changes."""

    async def body() -> None:
        h = harness(balances=RICH)
        # while ann's buy-in is in flight, the rules core sees seat 2 occupied
        h.wallet.during_buy_in = lambda: h.actor.table.seating.sit_down(2, "squatter", 0 + 1)
        with pytest.raises(DealerError) as info:
            await h.sit("ann", 1000, seat=2, request_id="r2")
        assert info.value.code == grpc.StatusCode.FAILED_PRECONDITION
        refunds = [c for c in h.wallet.calls if c[0] == "cash_out"]
        assert refunds == [("cash_out", "ann", 1000, "dealer:buyin:fast-1:r2:refund")]
        assert h.wallet.balances["ann"] == 5000 and h.actor.pending_cashouts == []
        assert h.wallet.escrow["fast-1"] == 0 and h.actor.escrow == 0
        await h.stop()

    run(body)


def test_restored_buy_in_for_a_seat_now_taken_is_refunded() -> None:
    async def body() -> None:
        h = harness(balances=RICH, start=False)
        await h.actor.sit_down(dealer_pb2.SitDownRequest(player_id="bob", seat=1, buy_in=700), "k-bob")
        snap = h.actor.snapshot()
        snap.pending_buy_in.CopyFrom(
            dealer_pb2.PendingBuyIn(player_id="ann", seat=1, amount=600, idempotency_key="k-ann")
        )
        again = harness(balances=dict(h.wallet.balances), start=False)
        again.wallet.escrow = dict(h.wallet.escrow)
        again.actor.restore(snap)
        await again.actor.recover(close=False)
        assert again.actor.pending_buy_in is None and again.actor.pending_cashouts == []
        assert ("cash_out", "ann", 600, "k-ann:refund") in again.wallet.calls
        assert again.wallet.balances["ann"] == 5000 and balanced(again)
        assert [s.player for s in again.actor.table.seating.seats.values()] == ["bob"]

    run(body)


def test_no_buy_in_moves_money_while_its_snapshot_cannot_be_written(caplog) -> None:
    """Issue 14 item 7: "with Kafka down the write-ahead snapshot fails, is only logged, the wallet
    transfer goes ahead; a dealer kill -9 then leaves the chips in an empty table's escrow. A money
    movement must never run without its durable intent." The buy-in is refused UNAVAILABLE and moves
    nothing; once the broker is back the next one is seated and the snapshot carries the state."""

    async def body() -> None:
        h = harness(balances=RICH)
        h.publisher.failing.add(h.actor.deps.topics.snapshots)
        with pytest.raises(DealerError) as info:
            await h.sit("ann", 1000)
        assert info.value.code == grpc.StatusCode.UNAVAILABLE and "nothing was moved" in info.value.message
        assert h.wallet.balances["ann"] == 5000 and h.actor.escrow == 0 and h.actor.table.seating.seats == {}
        assert h.actor.pending_buy_in is None
        assert any("snapshot not written" in r.getMessage() for r in caplog.records)
        h.publisher.failing.clear()
        await h.sit("ann", 1000)
        await h.sit("bob", 800)
        last = h.snapshots[-1]
        assert sorted((s.player_id, s.stack) for s in last.seats) == [("ann", 1000), ("bob", 800)]
        assert last.escrow == 1800 and balanced(h)
        await h.stop()

    run(body)


def test_cash_outs_wait_for_a_durable_snapshot() -> None:
    """The same rule for money going out: a stand-up whose snapshot is not written pays nothing yet
    (a crash would restore the player seated with his chips); the retry pays once a snapshot is in."""

    async def body() -> None:
        h = harness(balances=RICH)
        await h.sit("ann", 1000)
        h.publisher.failing.add(h.actor.deps.topics.snapshots)
        req = dealer_pb2.SeatCommandRequest(table_id=h.actor.table_id, player_id="ann")
        await h.actor.submit(lambda: h.actor.stand_up(req, "k1"))
        assert h.wallet.balances["ann"] == 4000 and [c.amount for c in h.actor.pending_cashouts] == [1000]
        h.publisher.failing.clear()
        h.clock.advance(RETRY_SECONDS + 0.1)
        await h.settle()
        assert h.wallet.balances["ann"] == 5000 and h.actor.pending_cashouts == [] and balanced(h)
        assert not h.snapshots[-1].pending_cashouts
        await h.stop()

    run(body)


async def _play_out(h: Harness, limit: int = 400) -> None:
    """Everyone folds or checks (the cheapest legal action) until the hand in progress is over."""
    for _ in range(limit):
        table = h.actor.table
        if not table.in_hand:
            return
        la = table.legal_actions()
        assert la is not None
        player = table.seating.seats[la.seat].player
        action = next(a for k, a in ((k, a) for k, a in _CHEAP) if k in {x.value for x in la.kinds})
        req = dealer_pb2.ActRequest(table_id=h.actor.table_id, player_id=player, action=action)
        await h.actor.submit(lambda r=req: h.actor.act(r))
        await h.settle()
    raise AssertionError("the hand did not end")


_CHEAP = (
    ("check", dealer_pb2.ACTION_TYPE_CHECK),
    ("fold", dealer_pb2.ACTION_TYPE_FOLD),
    ("call", dealer_pb2.ACTION_TYPE_CALL),
)


def test_unacknowledged_settlement_blocks_the_next_deal_until_a_retry_publishes_it() -> None:
    async def body() -> None:
        h = harness(balances=RICH)
        await h.sit("ann", 1000)
        await h.sit("bob", 1000)
        await h.advance(0.1)
        h.publisher.failing.add(h.actor.deps.topics.settled)
        await _play_out(h)
        assert h.actor.unpublished is not None and h.settled == []
        assert h.snapshots[-1].HasField("pending_settled")  # written ahead
        await h.advance(5.0)  # past the pause: still no deal
        assert h.actor.table.hand_number == 1 and not h.actor.table.in_hand
        h.publisher.failing.clear()
        await h.advance(RETRY_SECONDS)
        assert [s.hand_id for s in h.settled] == ["fast-1-1"] and h.actor.unpublished is None
        await h.advance(1.0)
        assert h.actor.table.hand_number == 2
        assert balanced(h)
        await h.stop()

    run(body)


def test_a_hand_s_record_settlement_and_snapshot_go_out_in_one_transaction_and_once() -> None:
    """Issue 16: "hand records and hand-settled events are then published exactly once". The end of a
    hand is one transaction: the record, the settlement and the snapshot that no longer holds them
    pending. No snapshot with them pending is written when it commits (a crash before the commit
    restores the hand-start snapshot: the hand cancelled, nothing paid)."""

    async def body() -> None:
        h = harness(balances=RICH)
        writers = h.actor.deps.writers
        assert isinstance(writers, FakeWriters)
        await h.sit("ann", 1000)
        await h.sit("bob", 1000)
        await h.advance(0.1)
        await _play_out(h)
        topics = h.actor.deps.topics
        assert [(batch, [p.topic for p in out]) for batch, out in writers.commits] == [
            ("fast-1-1", [topics.records, topics.settled, topics.snapshots])
        ]
        committed = writers.commits[0][1][2].payload
        assert not committed.HasField("pending_record") and not committed.hand_in_progress
        assert sorted(s.stack for s in committed.seats) == sorted(s.stack for s in h.actor.table.seating.seats.values())
        assert not any(s.HasField("pending_settled") for s in h.snapshots)
        assert [p.event_id for p in h.publisher.sent if p.topic == topics.records] == ["fast-1-1:record"]
        assert balanced(h)
        await h.stop()

    run(body)


def test_the_events_topic_gets_one_record_per_burst_of_events_in_sequence() -> None:
    """docs/capacity.md (the dealer's Kafka sender): an action and the events it brings (the pots, the
    next turn) are one record on the events topic, not one each; the records keep every event once, in
    sequence, with an event id fixed by the table and the first sequence."""

    async def body() -> None:
        h = harness(balances=RICH)
        await h.sit("ann", 1000)
        await h.sit("bob", 1000)
        await h.advance(0.1)
        table = h.actor.table
        la = table.legal_actions()
        assert la is not None
        before = len(h.publisher.fired)
        req = dealer_pb2.ActRequest(
            table_id=h.actor.table_id, player_id=table.seating.seats[la.seat].player, action=_CHEAP[2][1]
        )
        await h.actor.submit(lambda: h.actor.act(req))
        await h.settle()
        burst = h.publisher.fired[before:]
        assert len(burst) == 1, [len(p.payload.events) for p in burst]
        kinds = [e.WhichOneof("event") for e in burst[0].payload.events]
        assert kinds[0] == "action" and "turn_started" in kinds and len(kinds) >= 2
        await _play_out(h)
        sequences = [e.sequence for e in h.events]
        assert sequences == list(range(sequences[0], sequences[0] + len(sequences)))
        for record in h.publisher.fired:
            first = record.payload.events[0].sequence
            assert record.event_id == f"{h.actor.table_id}:{first}" and record.key == h.actor.table_id
            assert record.sequence == record.payload.events[-1].sequence
        assert len(h.publisher.fired) < len(h.events)
        await h.stop()

    run(body)


def test_an_event_emitted_with_no_loop_running_is_published_and_later_bursts_still_are() -> None:
    """The events topic gets every table event once (docs/sharding.md: replayable by table). An event
    emitted while no loop runs (a table being built, before its actor starts) is published at once;
    it must not stay queued and keep every later burst of the table from being scheduled."""
    h = harness(balances=RICH, start=False)
    h.actor._emit(seat_changed=dealer_pb2.SeatChanged(seat=dealer_pb2.SeatView(seat=1), change="test"))
    assert [e.WhichOneof("event") for e in h.events] == ["seat_changed"]

    async def body() -> None:
        h.actor.start()
        await h.sit("ann", 1000)
        await h.sit("bob", 1000)
        await h.advance(0.1)
        kinds = [e.WhichOneof("event") for e in h.events]
        assert "hand_started" in kinds and "turn_started" in kinds, kinds
        sequences = [e.sequence for e in h.events]
        assert sequences == list(range(1, len(sequences) + 1))
        await h.stop()

    run(body)


def test_same_request_id_replays_the_first_answer_and_moves_money_once() -> None:
    async def body() -> None:
        h = harness(balances=RICH)
        await h.sit("ann", 500)
        first = await h.add("ann", 100, request_id="add-1")
        replay = await h.add("ann", 100, request_id="add-1")
        assert first == replay and first.seat.stack == 600
        assert h.wallet.balances["ann"] == 4400
        with pytest.raises(DealerError) as info:
            await h.add("ann", 50, request_id="add-1")
        assert info.value.code == grpc.StatusCode.ALREADY_EXISTS and "request_id" in info.value.message
        assert h.wallet.balances["ann"] == 4400 and balanced(h)
        await h.stop()

    run(body)


def test_cash_out_while_the_wallet_is_down_is_retried_with_the_same_key() -> None:
    async def body() -> None:
        h = harness(balances=RICH)
        await h.sit("ann", 700)
        h.wallet.down = True
        reply = await h.stand("ann", request_id="s1")
        assert reply.cashed_out == 700 and [c.amount for c in h.actor.pending_cashouts] == [700]
        assert h.snapshots[-1].pending_cashouts[0].idempotency_key == "dealer:standup:fast-1:s1"
        assert balanced(h)  # escrow still holds the pending cash-out
        h.wallet.down = False
        await h.advance(RETRY_SECONDS + 0.1)
        assert h.actor.pending_cashouts == [] and h.wallet.balances["ann"] == 5000
        keys = [c[3] for c in h.wallet.calls if c[0] == "cash_out"]
        assert set(keys) == {"dealer:standup:fast-1:s1"} and len(keys) >= 2
        assert balanced(h) and h.actor.escrow == 0
        await h.stop()

    run(body)


def test_the_action_clock_runs_on_the_injected_clock() -> None:
    """rules/003 'Time limits': when the clock runs out the dealer acts (check or fold)."""

    async def body() -> None:
        h = harness(nl_config(clock=dealer_pb2.ClockSettings(action_seconds=10)), balances=RICH)
        await h.sit("ann", 1000)
        await h.sit("bob", 1000)
        await h.advance(0.1)
        assert h.actor.table.in_hand
        await h.advance(9.0)
        assert h.actor.table.hand_number == 1 and h.actor.table.in_hand  # not yet
        await h.advance(1.5)
        timed_out = [e.action for e in h.events if e.WhichOneof("event") == "action" and e.action.timeout]
        assert timed_out and timed_out[0].action == dealer_pb2.ACTION_TYPE_FOLD
        assert balanced(h)
        await h.stop()

    run(body)


def test_a_rejected_command_changes_nothing() -> None:
    async def body() -> None:
        h = harness(balances=RICH)
        await h.sit("ann", 1000, seat=1)
        before = h.actor.snapshot().SerializeToString(deterministic=True)
        for call, code in (
            (h.sit("bob", 1000, seat=1), grpc.StatusCode.ALREADY_EXISTS),
            (h.sit("bob", 50), grpc.StatusCode.FAILED_PRECONDITION),
            (h.add("cat", 100), grpc.StatusCode.NOT_FOUND),
        ):
            with pytest.raises(DealerError) as info:
                await call
            assert info.value.code == code
        h.clock.advance(0)
        after = h.actor.snapshot().SerializeToString(deterministic=True)
        assert before == after and h.wallet.balances == {**RICH, "ann": 4000}
        await h.stop()

    run(body)


def test_precondition_helper_is_failed_precondition() -> None:
    assert precondition("x").code == grpc.StatusCode.FAILED_PRECONDITION


def test_table_refusals_keep_their_grpc_statuses_and_name_the_field() -> None:
    """The dealer asks the table rules (``Table.verify_*``) and maps the core's Reason to the
    status: a bad field is INVALID_ARGUMENT naming it, a rule refusal FAILED_PRECONDITION,
    a conflict ALREADY_EXISTS; nothing changes."""

    async def body() -> None:
        h = harness(nl_config(seats=2), balances=RICH)
        await h.sit("ann", 1000, seat=1)
        sit_out = dealer_pb2.SeatCommandRequest(table_id="fast-1", player_id="ann")
        cases = [
            (h.sit("bob", 1000, seat=3), grpc.StatusCode.INVALID_ARGUMENT, "seat:"),
            (h.sit("bob", 0), grpc.StatusCode.INVALID_ARGUMENT, "buy_in:"),
            (h.sit("bob", 5000), grpc.StatusCode.FAILED_PRECONDITION, "above the table maximum"),
            (h.sit("ann", 1000), grpc.StatusCode.ALREADY_EXISTS, "already seated"),
            (h.add("ann", 0), grpc.StatusCode.INVALID_ARGUMENT, "amount:"),
            (h.add("ann", 1001), grpc.StatusCode.FAILED_PRECONDITION, "maximum"),
            (
                h.actor.submit(lambda: h.actor.come_back(sit_out)),
                grpc.StatusCode.FAILED_PRECONDITION,
                "not sitting out",
            ),
            (
                h.actor.submit(
                    lambda: h.actor.act(dealer_pb2.ActRequest(player_id="ann", action=dealer_pb2.ACTION_TYPE_CHECK))
                ),
                grpc.StatusCode.FAILED_PRECONDITION,
                "no hand in progress",
            ),
        ]
        before = h.actor.snapshot().SerializeToString(deterministic=True)
        for call, code, fragment in cases:
            with pytest.raises(DealerError) as info:
                await call
            assert info.value.code == code and fragment in info.value.message, info.value.message
        assert h.actor.snapshot().SerializeToString(deterministic=True) == before
        assert h.wallet.balances == {**RICH, "ann": 4000}
        await h.sit("bob", 1000)
        assert h.actor.table.seating.seats[2].player == "bob"
        with pytest.raises(DealerError) as info:
            await h.sit("cat", 1000)
        assert info.value.code == grpc.StatusCode.FAILED_PRECONDITION and "full" in info.value.message
        await h.stop()

    run(body)


def test_a_hand_interrupted_by_a_crash_is_cancelled_with_the_stacks_from_before_the_deal() -> None:
    """rules/003 (cash games, server crash): the hand in progress is cancelled and every chip put
    in the pot goes back to its owner; the restored table tells its watchers."""

    async def body() -> None:
        h = harness(balances=RICH)
        await h.sit("ann", 1000)
        await h.sit("bob", 1000)
        await h.settle()
        assert h.actor.table.in_hand and h.actor.table.chips_on_table() == 2000
        written = h.snapshots[-1]
        assert written.hand_in_progress and sorted(s.stack for s in written.seats) == [1000, 1000]
        await h.stop()  # the process dies here
        again = harness(balances=dict(h.wallet.balances), start=False)
        again.wallet.escrow = dict(h.wallet.escrow)
        again.actor.restore(written)
        await again.actor.recover(close=False)
        cancelled = [e.hand_finished for e in again.events if e.WhichOneof("event") == "hand_finished"]
        assert [(c.hand_number, c.cancelled) for c in cancelled] == [(1, True)]
        assert {s.player: s.stack for s in again.actor.table.seating.seats.values()} == {"ann": 1000, "bob": 1000}
        assert again.actor.sequence > written.event_sequence and balanced(again)
        again.actor.start()
        await again.settle()
        assert again.actor.table.hand_number == 2  # the hand number is not reused
        await again.stop()

    run(body)


def test_close_during_a_hand_waits_for_its_end_then_cashes_everyone_out() -> None:
    async def body() -> None:
        h = harness(balances=RICH)
        await h.sit("ann", 1000)
        await h.sit("bob", 1000)
        await h.settle()
        waiter = await h.actor.submit(h.actor.close)
        assert not waiter.done() and h.actor.table.in_hand
        with pytest.raises(DealerError) as info:
            await h.sit("cat", 1000)
        assert info.value.code == grpc.StatusCode.FAILED_PRECONDITION and "closed" in info.value.message
        await _play_out(h)
        await h.settle()
        cashed = await waiter
        assert sorted(s.player_id for s in cashed) == ["ann", "bob"] and sum(s.stack for s in cashed) <= 2000
        rake = h.settled[0].rake  # the fake wallet leaves the rake in the escrow account
        assert h.actor.closed and h.actor.escrow == 0 and h.wallet.escrow["fast-1"] == rake
        assert h.wallet.balances["ann"] + h.wallet.balances["bob"] + rake == 10000
        await h.stop()

    run(body)


def test_a_watcher_gets_the_table_closed_event_before_its_stream_ends() -> None:
    """dealer.proto Watch: "runs until the client cancels or the table closes" — the last event a
    watcher gets is the TableClosed (the gateway ends the player's stream on it); ending the watchers
    must not drop it, nor the events queued before it."""

    async def body() -> None:
        h = harness(balances=RICH)
        await h.sit("ann", 1000)
        await h.settle()
        watcher, _ = h.actor.subscribe("ann")
        await (await h.actor.submit(h.actor.close))
        queued = []
        while not watcher.queue.empty():
            queued.append(watcher.queue.get_nowait())
        assert queued and queued[-1] is None and watcher.ended == "closed"
        kinds = [e.WhichOneof("event") for e in queued[:-1]]
        assert kinds and kinds[-1] == "table_closed", kinds
        await h.stop()

    run(body)


def test_a_table_loop_that_dies_is_counted_and_started_again() -> None:
    """Issue 14 item 6: "an actor that fails is restarted from its last state, never silently dead (a
    metric and a health signal)". Something the loop does not catch kills its task once: the table
    still answers the next command, with its seats and chips as they were."""
    from prometheus_client import REGISTRY

    async def body() -> None:
        h = harness(balances=RICH)
        await h.sit("ann", 1000)
        before = REGISTRY.get_sample_value("dealer_table_actor_restarts_total") or 0.0
        real_next = h.actor.mailbox.next
        calls = {"n": 0}

        async def dies_once(wait: float | None):  # type: ignore[no-untyped-def]
            calls["n"] += 1
            if calls["n"] == 1:
                raise RuntimeError("a defect outside the loop's guards")
            return await real_next(wait)

        h.actor.mailbox.next = dies_once  # type: ignore[method-assign]
        h.actor.stopping = True  # the running loop is parked in the old next(): stop it, start it
        old = h.actor.task  # on the patched one
        old.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await old
        await asyncio.sleep(0)  # its done-callback ran (a stop: not restarted)
        h.actor.stopping = False
        h.actor.start()
        await asyncio.sleep(0.3)  # the first loop died; the restart comes after its back-off
        assert REGISTRY.get_sample_value("dealer_table_actor_restarts_total") == before + 1
        await asyncio.wait_for(h.sit("bob", 500), 2)  # answered: the table is alive
        assert {s.player for s in h.actor.table.seating.seats.values()} == {"ann", "bob"}
        assert balanced(h)
        await h.stop()

    run(body)


def test_a_table_loop_cancelled_from_inside_is_started_again() -> None:
    """A cancellation that reaches the table's loop task without :meth:`TableActor.stop` (something
    it awaited was cancelled) ended the table for good, silently: ``_ended`` took it for a stop.
    It is counted and logged as a death, and the loop starts again."""
    from prometheus_client import REGISTRY

    async def body() -> None:
        h = harness(balances=RICH)
        await h.sit("ann", 1000)
        before = REGISTRY.get_sample_value("dealer_table_actor_restarts_total") or 0.0
        assert h.actor.task is not None
        h.actor.task.cancel()  # not stop(): the actor is not stopping
        await asyncio.sleep(0.3)
        assert REGISTRY.get_sample_value("dealer_table_actor_restarts_total") == before + 1
        await asyncio.wait_for(h.sit("bob", 500), 2)  # answered: the table is alive
        assert {s.player for s in h.actor.table.seating.seats.values()} == {"ann", "bob"}
        assert balanced(h)
        await h.stop()

    run(body)
