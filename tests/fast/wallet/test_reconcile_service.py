"""Wallet.ReconcileEscrow in process (issue 14 item 7: "every escrow left without a seat after recovery is
reconciled back to its owner automatically (and counted)"): the servicer over a real SQLite ledger,
called through the dealer's own wallet client and a raw stub for the statuses."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
import pytest
from prometheus_client import REGISTRY

from cardroom.v1 import common_pb2, wallet_pb2 as w, wallet_pb2_grpc
from dealer.errors import DealerError
from dealer.money import Wallet
from tests.fast.inproc import serving
from wallet.service import WalletService
from wallet.store_sqlite import SqliteStore

CASH = common_pb2.CURRENCY_CASH
TK = w.TransferKind
ESCROW = "table_escrow:t1:cash"
ALICE, BOB = "player_cash:alice:cash", "player_cash:bob:cash"


def _counted(name: str) -> float:
    return REGISTRY.get_sample_value(name, {"currency": "cash"}) or 0.0


Scenario = Callable[[wallet_pb2_grpc.WalletStub, Wallet, Path], Awaitable[None]]


def run(tmp_path: Path, scenario: Scenario) -> None:
    """Alice (2,000) and Bob (1,000) bought in at t1, hand t1-1 settled (alice +480, bob -500, rake 20),
    then ``scenario(raw stub, the dealer's wallet client, the SQLite file)``."""
    asyncio.run(asyncio.wait_for(_serve(tmp_path / "wallet.sqlite3", scenario), 30))


async def _serve(path: Path, scenario: Scenario) -> None:
    store = SqliteStore(path)
    service = WalletService(store, workers=2)
    async with serving(wallet_pb2_grpc.add_WalletServicer_to_server, service) as address:
        channel = grpc.aio.insecure_channel(address)
        stub = wallet_pb2_grpc.WalletStub(channel)
        dealer = Wallet(address)
        for player in ("alice", "bob"):
            await stub.OpenAccount(w.OpenAccountRequest(kind=w.ACCOUNT_KIND_PLAYER_CASH, owner=player))
            await stub.Deposit(
                w.DepositRequest(account_id=f"player_cash:{player}:cash", amount=5_000, idempotency_key=player)
            )
        await dealer.open_escrow("t1", CASH)
        await dealer.buy_in("t1", "alice", CASH, 2_000, "b-alice")
        await dealer.buy_in("t1", "bob", CASH, 1_000, "b-bob")
        await stub.PostRake(
            w.PostRakeRequest(
                hand_id="t1-1",
                table_id="t1",
                currency=CASH,
                rake=20,
                results=[
                    w.SeatResult(seat=1, player_id="alice", net=480),
                    w.SeatResult(seat=2, player_id="bob", net=-500),
                ],
            )
        )
        try:
            await scenario(stub, dealer, path)
        finally:
            await dealer.close()
            await channel.close()
            service.executor.shutdown(wait=True)
            store.close()


async def _balance(stub: wallet_pb2_grpc.WalletStub, account: str) -> int:
    return (await stub.GetBalance(w.GetBalanceRequest(account_id=account))).balance


def test_an_escrow_left_without_a_seat_is_paid_back_to_its_owners(tmp_path: Path) -> None:
    run(tmp_path, _paid_back)


async def _paid_back(stub: wallet_pb2_grpc.WalletStub, dealer: Wallet, _: Path) -> None:
    reconciled, returned = _counted("wallet_escrows_reconciled_total"), _counted("wallet_escrow_chips_returned_total")
    reply = await dealer.reconcile_escrow("t1", CASH, ["alice"], "rec-1", settled_hand_id="t1-1")
    assert not reply.replayed and reply.escrow_account == ESCROW and reply.total_returned == 500
    assert [(t.to_account, t.amount, t.kind) for t in reply.transfers] == [(BOB, 500, TK.TRANSFER_KIND_CASH_OUT)]
    assert await _balance(stub, BOB) == 4_500 and await _balance(stub, ESCROW) == 2_480
    again = await dealer.reconcile_escrow("t1", CASH, ["alice"], "rec-1", settled_hand_id="t1-1")
    assert again.replayed and list(again.transfers) == list(reply.transfers) and again.total_returned == 500
    assert await _balance(stub, BOB) == 4_500 and await _balance(stub, ESCROW) == 2_480
    assert _counted("wallet_escrows_reconciled_total") == reconciled + 1
    assert _counted("wallet_escrow_chips_returned_total") == returned + 500
    # the table empties: alice's position comes back too, by table id and currency this time
    empty = await stub.ReconcileEscrow(w.ReconcileEscrowRequest(request_id="rec-2", table_id="t1", currency=CASH))
    assert [(t.to_account, t.amount) for t in empty.transfers] == [(ALICE, 2_480)]
    assert await _balance(stub, ESCROW) == 0 and await _balance(stub, ALICE) == 5_480
    summary = await stub.GetLedgerSummary(w.GetLedgerSummaryRequest())
    assert all(t.sum == 0 for t in summary.totals) and summary.mismatched_accounts == 0


@pytest.mark.parametrize(
    ("request_", "code", "field"),
    [
        (w.ReconcileEscrowRequest(escrow_account=ESCROW), grpc.StatusCode.INVALID_ARGUMENT, "request_id"),
        (w.ReconcileEscrowRequest(request_id="r"), grpc.StatusCode.INVALID_ARGUMENT, "escrow_account"),
        (
            w.ReconcileEscrowRequest(request_id="r", escrow_account=ALICE),
            grpc.StatusCode.INVALID_ARGUMENT,
            "escrow_account",
        ),
        (
            w.ReconcileEscrowRequest(request_id="r", escrow_account=ESCROW, table_id="t2"),
            grpc.StatusCode.INVALID_ARGUMENT,
            "table_id",
        ),
        (
            w.ReconcileEscrowRequest(request_id="r", escrow_account=ESCROW, seated_player_ids=["no good"]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "seated_player_ids",
        ),
        (w.ReconcileEscrowRequest(request_id="r", table_id="ghost"), grpc.StatusCode.NOT_FOUND, "escrow_account"),
        (
            w.ReconcileEscrowRequest(request_id="r", escrow_account=ESCROW, settled_hand_id="t1-2"),
            grpc.StatusCode.FAILED_PRECONDITION,
            "settled_hand_id",
        ),
    ],
)
def test_a_refused_reconciliation_names_its_field_and_moves_nothing(
    tmp_path: Path, request_: w.ReconcileEscrowRequest, code: grpc.StatusCode, field: str
) -> None:
    async def scenario(stub: wallet_pb2_grpc.WalletStub, dealer: Wallet, _: Path) -> None:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.ReconcileEscrow(request_)
        assert err.value.code() == code and (err.value.details() or "").startswith(f"{field}:"), err.value.details()
        assert await _balance(stub, ESCROW) == 2_980 and await _balance(stub, BOB) == 4_000

    run(tmp_path, scenario)


def test_positions_that_do_not_add_up_are_refused(tmp_path: Path) -> None:
    run(tmp_path, _do_not_add_up)


async def _do_not_add_up(stub: wallet_pb2_grpc.WalletStub, dealer: Wallet, path: Path) -> None:
    with sqlite3.connect(path) as conn:  # a ledger whose positions lost a chip
        conn.execute("UPDATE escrow_positions SET amount = amount - 1 WHERE account = ?", (BOB,))
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.ReconcileEscrow(w.ReconcileEscrowRequest(request_id="r", escrow_account=ESCROW))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "add up to 2979, the balance is 2980" in (err.value.details() or "")
    with pytest.raises(DealerError):  # the dealer's client reports it as its own error, nothing moved
        await dealer.reconcile_escrow("t1", CASH, [], "r")
    assert await _balance(stub, ESCROW) == 2_980


def test_the_same_request_id_for_another_seating_is_a_conflict(tmp_path: Path) -> None:
    run(tmp_path, _conflict)


async def _conflict(stub: wallet_pb2_grpc.WalletStub, dealer: Wallet, _: Path) -> None:
    await dealer.reconcile_escrow("t1", CASH, ["alice"], "rec-1")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.ReconcileEscrow(w.ReconcileEscrowRequest(request_id="rec-1", escrow_account=ESCROW))
    assert err.value.code() == grpc.StatusCode.ALREADY_EXISTS and (err.value.details() or "").startswith("request_id:")
    assert await _balance(stub, ESCROW) == 2_480


def test_a_rake_by_transfer_is_refused_it_comes_with_its_hands_nets(tmp_path: Path) -> None:
    """A rake moved without the hand's nets would leave the positions above the escrow's balance."""

    async def scenario(stub: wallet_pb2_grpc.WalletStub, dealer: Wallet, _: Path) -> None:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.Transfer(
                w.TransferRequest(
                    from_account=ESCROW,
                    to_account="house_rake:house:cash",
                    amount=10,
                    kind=TK.TRANSFER_KIND_RAKE,
                    idempotency_key="rake-by-hand",
                )
            )
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert (err.value.details() or "").startswith("kind:")
        assert await _balance(stub, ESCROW) == 2_980

    run(tmp_path, scenario)
