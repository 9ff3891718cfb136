"""Fast tier: the cashier's decided real-money moves are bounded as the dealer's mailbox bounds its
answers (600 s and 5,000 at most): a repeated request within the window gets the decision again,
a pending move is never forgotten however old, and a repeat after the window is a new request that
still cannot move the money twice (the wallet's idempotency key is the move id)."""

from __future__ import annotations

import asyncio

from cardroom.runtime.clock import ManualClock
from cardroom.v1 import common_pb2, gateway_pb2 as g
from gateway.cashier import Cashier, OperatorApproval
from tests.fast.gateway.fakes import FakeWallet, backends

CASH = common_pb2.CURRENCY_CASH
MOVE = g.CashierMove
ACCOUNT = "player_cash:ann:cash"
#: The dealer's mailbox's window (services/cardroom/runtime/mailbox.py), the cashier's by default.
DECIDED_SECONDS = 600.0


def asked(request_id: str, amount: int = 500) -> g.CashierMoveRequest:
    return g.CashierMoveRequest(currency=CASH, amount=amount, request_id=request_id)


def test_the_window_and_the_cap_are_the_mailboxs() -> None:
    step = OperatorApproval()
    assert (step.decided_seconds, step.decided_max) == (DECIDED_SECONDS, 5000)


def test_a_decision_answers_repeats_within_the_window_and_is_forgotten_after_it() -> None:
    clock = ManualClock()
    wallet = FakeWallet(balances={ACCOUNT: 0})
    cashier = Cashier(backends(wallet=wallet), 1000, now=clock.now)

    async def scenario() -> None:
        assert (await cashier.deposit("ann", asked("d1"))).status == MOVE.STATUS_PENDING
        assert (await cashier.decide("ann:d1", True, "")).status == MOVE.STATUS_DONE
        clock.advance(DECIDED_SECONDS)  # the edge of the window: still the same request
        again = await cashier.deposit("ann", asked("d1"))
        assert (again.status, again.balance, cashier.step.pending("ann")) == (MOVE.STATUS_DONE, 500, [])
        clock.advance(1)
        later = await cashier.deposit("ann", asked("d1"))  # after the window: a new request...
        assert later.status == MOVE.STATUS_PENDING and [m.move_id for m in cashier.step.pending()] == ["ann:d1"]
        assert (await cashier.decide("ann:d1", True, "")).balance == 500  # ...that moves nothing twice
        assert wallet.balances[ACCOUNT] == 500

    asyncio.run(scenario())


def test_a_pending_move_is_never_forgotten_and_a_rejection_is_kept_as_long_as_an_approval() -> None:
    clock = ManualClock()
    step = OperatorApproval(clock=clock.now)
    cashier = Cashier(backends(wallet=FakeWallet(balances={ACCOUNT: 0})), 1000, step=step, now=clock.now)

    async def scenario() -> None:
        await cashier.deposit("ann", asked("old"))
        await cashier.deposit("ann", asked("no"))
        await cashier.decide("ann:no", False, "documents missing")
        clock.advance(DECIDED_SECONDS - 1)
        repeat = await cashier.deposit("ann", asked("no"))
        assert (repeat.status, repeat.note) == (MOVE.STATUS_REJECTED, "documents missing")
        clock.advance(30 * 24 * 3600)
        await cashier.deposit("ann", asked("new"))  # a write: the decided ones past the window go
        assert sorted(step.moves) == ["ann:new", "ann:old"]  # the rejection went, the pending ones stay
        assert (await cashier.decide("ann:old", True, "")).status == MOVE.STATUS_DONE

    asyncio.run(scenario())


def test_at_most_the_last_decided_max_decisions_are_kept() -> None:
    clock = ManualClock()
    step = OperatorApproval(clock=clock.now, decided_max=2)
    for n in range(4):
        step.submit(MOVE(move_id=f"ann:r{n}", player_id="ann", kind=MOVE.KIND_DEPOSIT, currency=CASH, amount=1))
    for n in range(3):
        clock.advance(1)
        step.decide(f"ann:r{n}", False, "")
    step.submit(MOVE(move_id="ann:r9", player_id="ann", kind=MOVE.KIND_DEPOSIT, currency=CASH, amount=1))
    assert sorted(step.moves) == ["ann:r1", "ann:r2", "ann:r3", "ann:r9"]  # r0, the oldest decision, went
    assert [m.move_id for m in step.pending()] == ["ann:r3", "ann:r9"]
