"""After a restore the dealer has the wallet pay back the chips it holds for players the table does
not seat (issue 14 item 7: "every escrow left without a seat after recovery is reconciled back to
its owner automatically (and counted)"). The wallet's side (positions, ReconcileEscrow) has its own
contract tests; here: when the table asks, with which seats and hand, and what it does with the answer."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import grpc
import pytest

from dealer import metrics
from dealer.errors import DealerError
from dealer.writeahead import RETRY_SECONDS
from tests.fast.dealer.fakes import Harness, harness

RICH = {"ann": 5000, "bob": 5000, "cat": 5000}


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 10))


def _counted(outcome: str) -> float:
    return metrics.RECONCILED.labels(outcome)._value.get()  # type: ignore[attr-defined]


def _wallet_matches_the_table(h: Harness) -> bool:
    pending = sum(c.amount for c in h.actor.pending_cashouts)
    return h.wallet.escrow.get(h.actor.table_id, 0) == h.actor.escrow == h.actor.chips() + pending


def test_a_buy_in_whose_answer_the_crash_lost_is_paid_back_after_the_restore() -> None:
    async def body() -> None:
        h = harness(balances=RICH)
        await h.sit("bob", 1000)
        h.wallet.lose_reply = True  # the wallet takes ann's buy-in, its answer never arrives
        with pytest.raises(DealerError) as lost:
            await h.sit("ann", 800, request_id="r-ann")
        assert lost.value.code == grpc.StatusCode.UNAVAILABLE
        assert h.wallet.escrow["fast-1"] == 1800 and h.actor.escrow == 1000  # 800 held for nobody
        written = h.snapshots[-1]
        await h.stop()  # the process dies

        again = harness(balances=dict(h.wallet.balances), start=False)
        again.wallet.escrow, again.wallet.positions = dict(h.wallet.escrow), dict(h.wallet.positions)
        again.wallet.applied = dict(h.wallet.applied)
        paid_back = _counted("paid_back")
        again.actor.restore(written)
        await again.actor.recover(close=False)
        [(table, seated, request_id, _)] = again.wallet.reconciles
        assert (table, seated) == ("fast-1", ["bob"]) and request_id.startswith("dealer:reconcile:fast-1:")
        assert again.wallet.balances["ann"] == 5000 and _wallet_matches_the_table(again)
        assert again.wallet.positions[("fast-1", "bob")] == 1000 and again.actor.reconcile_due == ""
        assert _counted("paid_back") == paid_back + 1
        # ann sends her sit-down again with the same request: the wallet refuses the paid-back buy-in
        again.actor.start()
        with pytest.raises(DealerError) as refused:
            await again.sit("ann", 800, request_id="r-ann")
        assert refused.value.code == grpc.StatusCode.FAILED_PRECONDITION
        assert [s.player for s in again.actor.table.seating.seats.values()] == ["bob"]
        assert _wallet_matches_the_table(again)
        await again.stop()

    run(body)


def test_the_reconciliation_waits_for_the_last_settled_hand_and_runs_between_hands() -> None:
    async def body() -> None:
        h = harness(balances=RICH)
        await h.sit("ann", 1000)
        await h.sit("bob", 1000)
        await h.settle()
        while h.actor.table.hand_number < 2:  # hand 1 is played out by the clock (timeouts)
            await h.advance(11)
        last = h.actor.last_settled_hand_id
        assert last == h.actor.hand_id(1)
        written = h.snapshots[-1]
        assert written.last_settled_hand_id == last
        await h.stop()

        again = harness(balances=dict(h.wallet.balances), start=False)
        again.wallet.escrow, again.wallet.positions = dict(h.wallet.escrow), dict(h.wallet.positions)
        again.wallet.refuse_reconcile = 2  # the wallet has not applied hand 1 yet
        again.actor.restore(written)
        await again.actor.recover(close=False)
        assert again.actor.reconcile_due and len(again.wallet.reconciles) == 1
        again.actor.start()
        for _ in range(4):
            await again.advance(RETRY_SECONDS + 0.1)
            if not again.actor.reconcile_due:
                break
        assert not again.actor.reconcile_due
        calls = again.wallet.reconciles
        assert len(calls) == 3 and len({c[2] for c in calls}) == 3  # a new request id per attempt
        assert all(c[1] == ["ann", "bob"] and c[3] == last for c in calls)
        assert again.wallet.balances == h.wallet.balances and _wallet_matches_the_table(again)
        await again.stop()

    run(body)


def test_a_wallet_that_never_accepts_is_given_up_and_counted() -> None:
    async def body() -> None:
        h = harness(balances=RICH, start=False)
        h.actor.restore(h.actor.snapshot())
        h.wallet.refuse_reconcile = 10_000
        given_up = _counted("given_up")
        h.actor.reconcile_attempts = 148  # two attempts short of RECONCILE_ATTEMPTS
        await h.actor.recover(close=False)
        assert h.actor.reconcile_due
        h.actor.start()
        await h.advance(RETRY_SECONDS + 0.1)
        assert h.actor.reconcile_due == "" and _counted("given_up") == given_up + 1
        await h.stop()

    run(body)
