"""The wallet's tournament routes (issue 15): a guarantee's overlay comes from a house account
into the prize pool, and what a cancellation leaves in the pool goes back to the house; no
other account may send or receive those kinds; the escrow ends at exactly zero."""

from __future__ import annotations

import pytest

from tests.fast.wallet.store_contract import CASH, FakeClock, assert_sound, deposit, spec
from wallet import ledger
from wallet.ledger import AK, TK, ErrorKind, LedgerError, TransferSpec
from wallet.store_memory import MemoryStore


def test_overlay_from_the_house_into_the_pool_and_back_leaves_the_escrow_at_zero() -> None:
    store = MemoryStore(FakeClock())
    alice = store.open_account(AK.ACCOUNT_KIND_PLAYER_CASH, "alice", CASH)[0].account_id
    pool = store.open_account(AK.ACCOUNT_KIND_TOURNAMENT_PRIZE_POOL, "tn1", CASH)[0].account_id
    fees = store.open_account(AK.ACCOUNT_KIND_TOURNAMENT_FEES, "house", CASH)[0].account_id
    store.transfer(deposit(alice, 1_100, "fund"))
    store.transfer(spec(alice, pool, 1_000, TK.TRANSFER_KIND_TOURNAMENT_ENTRY, "entry"))
    store.transfer(spec(alice, fees, 100, TK.TRANSFER_KIND_TOURNAMENT_FEE, "fee"))
    external = ledger.external_account(CASH)
    store.transfer(spec(external, pool, 4_000, TK.TRANSFER_KIND_TOURNAMENT_OVERLAY, "overlay"))
    store.transfer(spec(fees, pool, 50, TK.TRANSFER_KIND_TOURNAMENT_OVERLAY, "overlay-fees"))
    assert store.get_account(pool).balance == 5_050
    store.transfer(spec(pool, alice, 1_000, TK.TRANSFER_KIND_TOURNAMENT_PRIZE, "prize"))
    store.transfer(spec(pool, external, 4_000, TK.TRANSFER_KIND_TOURNAMENT_TO_HOUSE, "back"))
    store.transfer(spec(pool, fees, 50, TK.TRANSFER_KIND_TOURNAMENT_TO_HOUSE, "back-fees"))
    assert store.get_account(pool).balance == 0
    assert store.get_account(fees).balance == 100
    assert_sound(store)


@pytest.mark.parametrize(
    ("source", "target", "kind", "field"),
    [
        (
            "player_cash:alice:cash",
            "tournament_prize_pool:tn1:cash",
            TK.TRANSFER_KIND_TOURNAMENT_OVERLAY,
            "from_account",
        ),
        ("external:house:cash", "player_cash:alice:cash", TK.TRANSFER_KIND_TOURNAMENT_OVERLAY, "to_account"),
        (
            "tournament_prize_pool:tn1:cash",
            "player_cash:alice:cash",
            TK.TRANSFER_KIND_TOURNAMENT_TO_HOUSE,
            "to_account",
        ),
        ("table_escrow:t1:cash", "external:house:cash", TK.TRANSFER_KIND_TOURNAMENT_TO_HOUSE, "from_account"),
    ],
)
def test_the_overlay_kinds_refuse_every_other_route(source: str, target: str, kind: int, field: str) -> None:
    with pytest.raises(LedgerError) as caught:
        TransferSpec(source, target, 1, kind, "", "k").validate()
    assert caught.value.kind is ErrorKind.PRECONDITION and caught.value.message.startswith(f"{field}:")
