"""Fencing in the wallet (docs/sharding.md): a dealer replica's claim of a partition of the tables
(Wallet.ClaimTables), its money calls refused once a later claim exists (Transfer, ReconcileEscrow:
FAILED_PRECONDITION ``fenced:``, nothing moved), and the late hand settlements of a replica that lost a
table ignored by the consumer. In process: the servicer over a real SQLite ledger, and the consumer's
``handle`` on records as the dealer writes them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
import pytest
from prometheus_client import REGISTRY

from cardroom.runtime import errors
from cardroom.runtime.events import make_envelope
from cardroom.v1 import common_pb2, events_pb2, wallet_pb2 as w, wallet_pb2_grpc
from tests.fast.inproc import serving
from wallet import ledger
from wallet.consumer import HandSettledConsumer
from wallet.ledger import AK, TK, TransferSpec
from wallet.service import WalletService
from wallet.store_memory import MemoryStore
from wallet.store_sqlite import SqliteStore

CASH = common_pb2.CURRENCY_CASH
ESCROW = "table_escrow:t1:cash"
ALICE, BOB = "player_cash:alice:cash", "player_cash:bob:cash"
INT64_MAX = 2**63 - 1

Scenario = Callable[[wallet_pb2_grpc.WalletStub], Awaitable[None]]


def fenced_count(kind: str) -> float:
    return REGISTRY.get_sample_value("wallet_fenced_total", {"kind": kind}) or 0.0


def fence(partition: int, epoch: int) -> common_pb2.TableFence:
    return common_pb2.TableFence(partition=partition, epoch=epoch)


def run(tmp_path: Path, scenario: Scenario) -> None:
    """Alice and Bob (5,000 each) bought in at t1 for 2,000 and 1,000, unfenced; then ``scenario``."""
    asyncio.run(asyncio.wait_for(_serve(tmp_path / "wallet.sqlite3", scenario), 30))


async def _serve(path: Path, scenario: Scenario) -> None:
    store = SqliteStore(path)
    service = WalletService(store, workers=2)
    async with serving(wallet_pb2_grpc.add_WalletServicer_to_server, service) as address:
        channel = grpc.aio.insecure_channel(address)
        stub = wallet_pb2_grpc.WalletStub(channel)
        try:
            await stub.OpenAccount(w.OpenAccountRequest(kind=w.ACCOUNT_KIND_TABLE_ESCROW, owner="t1"))
            for player, amount in (("alice", 2_000), ("bob", 1_000)):
                account = f"player_cash:{player}:cash"
                await stub.OpenAccount(w.OpenAccountRequest(kind=w.ACCOUNT_KIND_PLAYER_CASH, owner=player))
                await stub.Deposit(w.DepositRequest(account_id=account, amount=5_000, idempotency_key=player))
                await stub.Transfer(buy_in(account, amount, f"b-{player}"))
            await scenario(stub)
        finally:
            await channel.close()
            service.executor.shutdown(wait=True)
            store.close()


def buy_in(account: str, amount: int, key: str, table_fence: common_pb2.TableFence | None = None) -> w.TransferRequest:
    return w.TransferRequest(
        from_account=account,
        to_account=ESCROW,
        amount=amount,
        kind=TK.TRANSFER_KIND_BUY_IN,
        idempotency_key=key,
        fence=table_fence,
    )


async def balances(stub: wallet_pb2_grpc.WalletStub) -> tuple[int, int, int]:
    got = [await stub.GetBalance(w.GetBalanceRequest(account_id=a)) for a in (ALICE, BOB, ESCROW)]
    return got[0].balance, got[1].balance, got[2].balance


async def refused(call: Awaitable[object]) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call
    return err.value


# ---- ClaimTables -------------------------------------------------------------------------------------
def test_a_claim_is_stored_again_idempotently_and_a_lower_one_is_fenced(tmp_path: Path) -> None:
    async def scenario(stub: wallet_pb2_grpc.WalletStub) -> None:
        claims = fenced_count("claim")
        assert (await stub.ClaimTables(w.ClaimTablesRequest(fence=fence(2, 5)))).epoch == 5
        assert (await stub.ClaimTables(w.ClaimTablesRequest(fence=fence(2, 5)))).epoch == 5
        err = await refused(stub.ClaimTables(w.ClaimTablesRequest(fence=fence(2, 4))))
        assert err.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert (err.details() or "").startswith("fenced: partition 2 is held at epoch 5, above this claim's epoch 4")
        assert errors.reason_of(err) == "FENCED"
        assert fenced_count("claim") == claims + 1
        # still 5: a transfer of epoch 5 passes, one of 4 does not
        await stub.Transfer(buy_in(ALICE, 10, "b-5", fence(2, 5)))
        await refused(stub.Transfer(buy_in(ALICE, 10, "b-4", fence(2, 4))))
        assert (await stub.ClaimTables(w.ClaimTablesRequest(fence=fence(2, 9)))).epoch == 9

    run(tmp_path, scenario)


@pytest.mark.parametrize(
    ("claim", "field"),
    [
        (w.ClaimTablesRequest(), "fence.epoch"),
        (w.ClaimTablesRequest(fence=fence(1, 0)), "fence.epoch"),
        (w.ClaimTablesRequest(fence=fence(1, INT64_MAX + 1)), "fence.epoch"),
        (w.ClaimTablesRequest(fence=fence(2**31, 1)), "fence.partition"),
    ],
)
def test_a_claim_without_a_valid_epoch_is_invalid_and_changes_nothing(
    tmp_path: Path, claim: w.ClaimTablesRequest, field: str
) -> None:
    async def scenario(stub: wallet_pb2_grpc.WalletStub) -> None:
        claims = fenced_count("claim")
        err = await refused(stub.ClaimTables(claim))
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert (err.details() or "").startswith(f"{field}:"), err.details()
        assert fenced_count("claim") == claims
        # nothing was stored: any epoch of partition 1 still passes
        await stub.Transfer(buy_in(ALICE, 10, "b-1", fence(1, 1)))

    run(tmp_path, scenario)


# ---- Transfer ----------------------------------------------------------------------------------------
def test_a_transfer_of_a_stale_epoch_is_refused_and_moves_nothing(tmp_path: Path) -> None:
    async def scenario(stub: wallet_pb2_grpc.WalletStub) -> None:
        await stub.ClaimTables(w.ClaimTablesRequest(fence=fence(3, 7)))
        transfers, before = fenced_count("transfer"), await balances(stub)
        cash_out = w.TransferRequest(
            from_account=ESCROW,
            to_account=BOB,
            amount=1_000,
            kind=TK.TRANSFER_KIND_CASH_OUT,
            idempotency_key="c-bob",
            fence=fence(3, 6),
        )
        for stale in (buy_in(ALICE, 500, "b-more", fence(3, 6)), cash_out):
            err = await refused(stub.Transfer(stale))
            assert err.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert (err.details() or "") == (
                "fenced: partition 3 is held at epoch 7, above this call's epoch 6 "
                "(a later claim of the partition exists)"
            )
            assert errors.reason_of(err) == "FENCED"
        assert await balances(stub) == before == (3_000, 4_000, 3_000)
        assert fenced_count("transfer") == transfers + 2
        summary = await stub.GetLedgerSummary(w.GetLedgerSummaryRequest())
        assert summary.transfers == 2 + 2  # the deposits and buy-ins of the set-up only

    run(tmp_path, scenario)


def test_a_transfer_of_a_newer_epoch_goes_through_and_fences_the_older_claim(tmp_path: Path) -> None:
    async def scenario(stub: wallet_pb2_grpc.WalletStub) -> None:
        await stub.ClaimTables(w.ClaimTablesRequest(fence=fence(3, 7)))
        reply = await stub.Transfer(buy_in(ALICE, 500, "b-more", fence(3, 8)))
        assert not reply.replayed and reply.transfer.to_balance_after == 3_500
        # the same request again is its first answer whatever its fence (it moves nothing)
        again = await stub.Transfer(buy_in(ALICE, 500, "b-more", fence(3, 7)))
        assert again.replayed and again.transfer == reply.transfer
        err = await refused(stub.ClaimTables(w.ClaimTablesRequest(fence=fence(3, 7))))
        assert err.code() == grpc.StatusCode.FAILED_PRECONDITION and "epoch 8" in (err.details() or "")
        # epoch 0 is unsharded: never checked, whatever partition it names
        await stub.Transfer(buy_in(ALICE, 100, "b-unsharded", fence(3, 0)))
        await stub.Transfer(buy_in(ALICE, 100, "b-plain"))
        assert await balances(stub) == (2_300, 4_000, 3_700)

    run(tmp_path, scenario)


# ---- ReconcileEscrow -------------------------------------------------------------------------------------
def test_a_reconciliation_of_a_stale_epoch_is_refused_and_pays_nothing_back(tmp_path: Path) -> None:
    async def scenario(stub: wallet_pb2_grpc.WalletStub) -> None:
        await stub.ClaimTables(w.ClaimTablesRequest(fence=fence(0, 4)))
        reconciles, before = fenced_count("reconcile"), await balances(stub)
        request = w.ReconcileEscrowRequest(
            request_id="rec-1", escrow_account=ESCROW, seated_player_ids=["alice"], fence=fence(0, 3)
        )
        err = await refused(stub.ReconcileEscrow(request))
        assert err.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert (err.details() or "").startswith("fenced: partition 0 is held at epoch 4, above this call's epoch 3")
        assert await balances(stub) == before and fenced_count("reconcile") == reconciles + 1
        # the owner's reconciliation pays Bob back
        request.fence.epoch = 4
        reply = await stub.ReconcileEscrow(request)
        assert reply.total_returned == 1_000 and await balances(stub) == (3_000, 5_000, 2_000)

    run(tmp_path, scenario)


# ---- hand settlements from Kafka ----------------------------------------------------------------------------
def settled(table_id: str, number: int, epoch: int, rake: int = 10) -> bytes:
    """A hand-settled record as the dealer writes it, fenced with ``epoch`` (0: unsharded)."""
    hand_id = f"{table_id}-{number}"
    results = [w.SeatResult(seat=1, player_id="ann", net=40), w.SeatResult(seat=2, player_id="bo", net=-40 - rake)]
    event = events_pb2.HandSettled(
        hand_id=hand_id, table_id=table_id, currency=CASH, rake=rake, results=results, fence=fence(1, epoch)
    )
    envelope = make_envelope(
        type="cardroom.dealer.hand_settled.v1",
        source="dealer",
        key=table_id,
        sequence=number,
        payload=event,
        event_id=f"{hand_id}:settled",
    )
    return envelope.SerializeToString()


def tables(*table_ids: str) -> MemoryStore:
    """A ledger where Ann bought in for 400 at each of ``table_ids``."""
    store = MemoryStore()
    ann = store.open_account(AK.ACCOUNT_KIND_PLAYER_CASH, "ann", CASH)[0].account_id
    store.transfer(TransferSpec(ledger.external_account(CASH), ann, 1_000, TK.TRANSFER_KIND_DEPOSIT, "", "d"))
    for table_id in table_ids:
        escrow = store.open_account(AK.ACCOUNT_KIND_TABLE_ESCROW, table_id, CASH)[0].account_id
        store.transfer(TransferSpec(ann, escrow, 400, TK.TRANSFER_KIND_BUY_IN, "", f"b:{table_id}"))
    return store


def consumer_of(store: MemoryStore) -> HandSettledConsumer:
    return HandSettledConsumer(store, "127.0.0.1:1", "test.hand.settled", "g")  # never started: no broker


def test_a_settlement_below_its_tables_epoch_is_ignored_and_counted_and_other_tables_go_on() -> None:
    store = tables("t-1", "t-2")
    consumer = consumer_of(store)
    settlements = fenced_count("settlement")
    hands = REGISTRY.get_sample_value("wallet_hand_settled_events_total", {"outcome": "fenced"}) or 0.0

    assert consumer.handle(settled("t-1", 1, epoch=9)) == "applied"
    before = store.summary()
    # a replica that lost t-1 settles its hand late, with its old epoch: not applied, counted
    assert consumer.handle(settled("t-1", 2, epoch=8)) == "fenced"
    assert store.summary() == before and store.table_epoch("t-1") == 9
    assert fenced_count("settlement") == settlements + 1
    assert REGISTRY.get_sample_value("wallet_hand_settled_events_total", {"outcome": "fenced"}) == hands + 1
    # another table is not fenced by t-1's epoch; an unsharded settlement (epoch 0) is never checked
    assert consumer.handle(settled("t-2", 1, epoch=8)) == "applied"
    assert consumer.handle(settled("t-1", 3, epoch=0)) == "applied"
    # the owner's next hand, and the first one delivered again (a duplicate, whatever its epoch)
    assert consumer.handle(settled("t-1", 4, epoch=9)) == "applied"
    assert consumer.handle(settled("t-1", 1, epoch=8)) == "duplicate"
    assert store.get_account(ledger.house_rake_account(CASH)).balance == 4 * 10
    assert store.escrow_state(ledger.table_escrow_account("t-1", CASH)).balance == 400 - 3 * 10
    assert fenced_count("settlement") == settlements + 1


def test_a_settlement_with_an_epoch_out_of_range_is_rejected_and_moves_nothing() -> None:
    store = tables("t-1")
    consumer = consumer_of(store)
    before = store.summary()
    assert consumer.handle(settled("t-1", 1, epoch=INT64_MAX + 1)) == "rejected"
    assert store.summary() == before
    assert consumer.handle(settled("t-1", 1, epoch=INT64_MAX)) == "applied"
    assert store.table_epoch("t-1") == INT64_MAX
