"""One contract for every ledger store backend (see ``wallet.store_api``): a base class of tests
that each backend's test class inherits, supplying only :meth:`LedgerStoreContract.create_store`
(run against in memory and SQLite in ``tests/fast/wallet/test_store.py``, PostgreSQL in
``tests/services/test_wallet_store.py``).

What it checks is the developers' guide principle 2, "Money is integers; every chip accounted for
(double-entry ledger, idempotent transfers, escrow = stacks)" — the rules documents say only that
money goes to and comes back from "player accounts" (rules/003: "all players at the tables will have
their money returned to their player accounts").
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from cardroom.v1 import common_pb2, events_pb2, wallet_pb2
from wallet import ledger
from wallet.escrow import PREDATES_POSITIONS, HandSettlement, ReconcileRequest, reconcile_request
from wallet.fencing import Fence
from wallet.ledger import AK, TK, ErrorKind, LedgerError, Limits, TransferSpec
from wallet.rake import hand_settlement
from wallet.store_api import (
    EVENT_ACCOUNT_OPENED,
    EVENT_TRANSFER_POSTED,
    AccountNotFound,
    Fenced,
    IdempotencyConflict,
    InsufficientFunds,
    LedgerStore,
    OutOfRange,
    Reconciliation,
    StoreError,
    StoreUnavailable,
)

CASH, PLAY = common_pb2.CURRENCY_CASH, common_pb2.CURRENCY_PLAY
EXTERNAL_CASH = ledger.external_account(CASH)
BUILT_IN = sorted(
    ledger.account_id(kind, ledger.HOUSE, currency)
    for kind in (AK.ACCOUNT_KIND_EXTERNAL, AK.ACCOUNT_KIND_HOUSE_RAKE)
    for currency in ledger.CURRENCY_SLUG
)


@dataclass
class FakeClock:
    """Microseconds, advancing by one per reading: times are inputs, never the wall clock."""

    now: int = 1_700_000_000_000_000

    def __call__(self) -> int:
        self.now += 1
        return self.now


def spec(source: str, target: str, amount: int, kind: int, key: str, reference: str = "") -> TransferSpec:
    made = TransferSpec(source, target, amount, kind, reference, key)
    made.validate()
    return made


def deposit(account: str, amount: int, key: str) -> TransferSpec:
    return spec(
        ledger.external_account(ledger.parse_account_id(account, "a")[2]),
        account,
        amount,
        TK.TRANSFER_KIND_DEPOSIT,
        key,
    )


def state(store: LedgerStore) -> tuple[bytes, int]:
    """Everything a rejected call must leave unchanged: the summary and the outbox backlog."""
    return store.summary().SerializeToString(deterministic=True), len(store.outbox_batch(10_000))


def hand(table_id: str, number: int, rake: int, **nets: int) -> HandSettlement:
    """A settled hand of ``table_id`` as the consumer and PostRake book it (player id -> net)."""
    results = [wallet_pb2.SeatResult(seat=i + 1, player_id=p, net=n) for i, (p, n) in enumerate(nets.items())]
    return hand_settlement(f"{table_id}-{number}", table_id, CASH, rake, results)


def positions(store: LedgerStore, escrow: str) -> dict[str, int]:
    """The escrow's positions by player id, after checking they add up to its balance (the invariant)."""
    state = store.escrow_state(escrow)
    assert sum(state.positions.values()) == state.balance, state
    return {account.split(":")[1]: amount for account, amount in state.positions.items()}


def reconcile(escrow: str, request_id: str, *seated: str, settled_hand_id: str = "") -> ReconcileRequest:
    return reconcile_request(request_id, escrow, seated, settled_hand_id)


def assert_sound(store: LedgerStore) -> None:
    summary = store.summary()
    assert all(total.sum == 0 for total in summary.totals), summary
    assert summary.negative_accounts == 0 and summary.mismatched_accounts == 0, summary
    assert all(value == 0 for value in store.balances_by_currency().values())


class LedgerStoreContract(ABC):
    """The behaviour every :class:`LedgerStore` must have. Not collected itself (no ``Test`` prefix)."""

    @abstractmethod
    def create_store(self, request: pytest.FixtureRequest, clock: FakeClock) -> LedgerStore:
        """A new, empty store of the backend under test."""

    @pytest.fixture
    def clock(self) -> FakeClock:
        return FakeClock()

    @pytest.fixture
    def store(self, request: pytest.FixtureRequest, clock: FakeClock) -> Iterator[LedgerStore]:
        store = self.create_store(request, clock)
        try:
            yield store
        finally:
            store.close()

    def player(self, store: LedgerStore, owner: str, funds: int = 0) -> str:
        account, _ = store.open_account(AK.ACCOUNT_KIND_PLAYER_CASH, owner, CASH)
        if funds:
            store.transfer(deposit(account.account_id, funds, f"fund:{owner}"))
        return account.account_id

    def table(self, store: LedgerStore, table_id: str, currency: int = CASH) -> str:
        return store.open_account(AK.ACCOUNT_KIND_TABLE_ESCROW, table_id, currency)[0].account_id

    # ---- accounts ----------------------------------------------------------------------------
    def test_a_new_store_holds_the_built_in_house_accounts_with_zero_balances(self, store: LedgerStore) -> None:
        summary = store.summary()
        assert summary.accounts == len(BUILT_IN) and summary.transfers == 0
        for account in BUILT_IN:
            assert store.get_account(account).balance == 0
        events = store.outbox_batch(100)
        assert sorted(e.key for e in events) == BUILT_IN
        assert {e.type for e in events} == {EVENT_ACCOUNT_OPENED}
        assert_sound(store)

    def test_opening_an_account_twice_returns_the_first_one_and_queues_one_event(
        self, store: LedgerStore, clock: FakeClock
    ) -> None:
        before = len(store.outbox_batch(100))
        first, created = store.open_account(AK.ACCOUNT_KIND_PLAYER_CASH, "alice", CASH)
        again, created_again = store.open_account(AK.ACCOUNT_KIND_PLAYER_CASH, "alice", CASH)
        assert created and not created_again
        assert first == again == store.get_account("player_cash:alice:cash")
        assert (first.kind, first.owner, first.currency, first.balance) == (
            AK.ACCOUNT_KIND_PLAYER_CASH,
            "alice",
            CASH,
            0,
        )
        assert first.created_us <= clock.now
        events = store.outbox_batch(100)[before:]
        assert [(e.type, e.key) for e in events] == [(EVENT_ACCOUNT_OPENED, "player_cash:alice:cash")]
        opened = events_pb2.AccountOpened.FromString(events[0].payload)
        assert opened.account == first.to_proto()

    def test_an_unknown_account_is_not_found_under_the_one_error_root(self, store: LedgerStore) -> None:
        with pytest.raises(AccountNotFound) as err:
            store.get_account("player_cash:nobody:cash")
        assert isinstance(err.value, StoreError) and isinstance(err.value, LedgerError)
        assert err.value.kind is ErrorKind.NOT_FOUND and err.value.message.startswith("account_id:")
        with pytest.raises(AccountNotFound, match="^account_id:"):
            store.list_transfers("player_cash:nobody:cash", 0, 10)

    # ---- transfers: double entry -----------------------------------------------------------------
    def test_a_transfer_moves_the_amount_between_two_accounts_and_records_both_balances(
        self, store: LedgerStore
    ) -> None:
        alice = self.player(store, "alice")
        table = self.table(store, "t1")
        dep, replayed = store.transfer(deposit(alice, 10_000, "d1"))
        assert not replayed
        assert (dep.from_account, dep.to_account, dep.amount) == (EXTERNAL_CASH, alice, 10_000)
        assert (dep.from_balance_after, dep.to_balance_after) == (-10_000, 10_000)
        buy, _ = store.transfer(spec(alice, table, 4_000, TK.TRANSFER_KIND_BUY_IN, "b1", "seat 3"))
        assert (buy.from_balance_after, buy.to_balance_after, buy.reference) == (6_000, 4_000, "seat 3")
        assert buy.transfer_id > dep.transfer_id
        assert store.get_account(alice).balance == 6_000 and store.get_account(table).balance == 4_000
        assert store.get_account(EXTERNAL_CASH).balance == -10_000  # the only account that may go negative
        assert store.summary().transfers == 2
        assert_sound(store)

    def test_the_balances_of_one_kind_sum_only_that_kinds_accounts_per_currency(self, store: LedgerStore) -> None:
        alice = self.player(store, "alice", 10_000)
        bob, _ = store.open_account(AK.ACCOUNT_KIND_PLAYER_PLAY, "bob", PLAY)
        store.transfer(deposit(bob.account_id, 900, "fund:bob"))
        t1, t2, t3 = self.table(store, "t1"), self.table(store, "t2"), self.table(store, "t3", PLAY)
        store.transfer(spec(alice, t1, 4_000, TK.TRANSFER_KIND_BUY_IN, "b1"))
        store.transfer(spec(alice, t2, 1_500, TK.TRANSFER_KIND_BUY_IN, "b2"))
        store.transfer(spec(bob.account_id, t3, 700, TK.TRANSFER_KIND_BUY_IN, "b3"))
        store.transfer(spec(t1, alice, 1_000, TK.TRANSFER_KIND_CASH_OUT, "c1"))
        escrows = store.balances_by_currency(AK.ACCOUNT_KIND_TABLE_ESCROW)
        assert escrows == {CASH: 3_000 + 1_500, PLAY: 700}
        assert store.balances_by_currency(AK.ACCOUNT_KIND_PLAYER_CASH) == {CASH: 10_000 - 4_500}
        assert store.balances_by_currency(AK.ACCOUNT_KIND_HOUSE_RAKE) == {CASH: 0, PLAY: 0}
        assert_sound(store)  # and all of them together still sum to 0

    def test_an_overdraft_is_refused_and_changes_nothing(self, store: LedgerStore) -> None:
        alice = self.player(store, "alice", 1_000)
        table = self.table(store, "t1")
        before = state(store)
        with pytest.raises(InsufficientFunds) as err:
            store.transfer(spec(alice, table, 1_001, TK.TRANSFER_KIND_BUY_IN, "too-much"))
        assert err.value.kind is ErrorKind.PRECONDITION and isinstance(err.value, StoreError)
        assert err.value.message == f"amount: 1001 exceeds the balance 1000 of {alice}"
        assert state(store) == before
        # The key was not used up by the refusal, and the exact balance may be spent to zero.
        row, replayed = store.transfer(spec(alice, table, 1_000, TK.TRANSFER_KIND_BUY_IN, "too-much"))
        assert not replayed and row.from_balance_after == 0
        assert_sound(store)

    def test_a_transfer_to_or_from_an_unknown_account_names_the_field_and_changes_nothing(
        self, store: LedgerStore
    ) -> None:
        alice = self.player(store, "alice", 500)
        before = state(store)
        with pytest.raises(AccountNotFound, match="^to_account: no account 'table_escrow:ghost:cash'"):
            store.transfer(spec(alice, "table_escrow:ghost:cash", 100, TK.TRANSFER_KIND_BUY_IN, "k1"))
        with pytest.raises(AccountNotFound, match="^from_account: no account 'player_cash:ghost:cash'"):
            store.transfer(
                spec("player_cash:ghost:cash", ledger.external_account(CASH), 100, TK.TRANSFER_KIND_WITHDRAWAL, "k2")
            )
        assert state(store) == before

    # ---- limits (issue 14, item 13) ------------------------------------------------------------
    def test_money_from_outside_stops_at_the_balance_maximum_and_winnings_do_not(self, store: LedgerStore) -> None:
        """A deposit past ``limits.max_balance`` is OUT_OF_RANGE and changes nothing; a cash-out past it
        is booked (refusing it would strand the chips in the escrow)."""
        store.limits = Limits(max_transfer=1_000, max_balance=2_000)
        alice, bob = self.player(store, "alice", 1_000), self.player(store, "bob", 1_000)
        store.transfer(deposit(alice, 1_000, "d2"))
        before = state(store)
        with pytest.raises(OutOfRange) as err:
            store.transfer(deposit(alice, 1, "d3"))
        assert err.value.kind is ErrorKind.OUT_OF_RANGE and isinstance(err.value, StoreError)
        assert err.value.message.startswith(f"amount: 1 would take {alice} to 2001, above the balance maximum 2000")
        assert state(store) == before
        table = self.table(store, "t1")
        store.transfer(spec(bob, table, 1_000, TK.TRANSFER_KIND_BUY_IN, "b1"))
        row, _ = store.transfer(spec(table, alice, 1_000, TK.TRANSFER_KIND_CASH_OUT, "c1"))
        assert row.to_balance_after == 3_000
        assert_sound(store)

    def test_no_balance_leaves_the_int64_range(self, store: LedgerStore) -> None:
        """The external account goes negative by everything deposited; past -(2^63 - 1) a deposit is
        OUT_OF_RANGE (it was "storage unavailable", retried for ever) and changes nothing."""
        store.limits = Limits(max_transfer=ledger.INT64_MAX, max_balance=ledger.INT64_MAX)
        alice, bob = self.player(store, "alice"), self.player(store, "bob")
        everything = TransferSpec(EXTERNAL_CASH, alice, ledger.INT64_MAX, TK.TRANSFER_KIND_DEPOSIT, "", "d-all")
        everything.validate(max_amount=ledger.INT64_MAX)
        store.transfer(everything)
        assert store.get_account(EXTERNAL_CASH).balance == -ledger.INT64_MAX
        before = state(store)
        with pytest.raises(OutOfRange, match=f"^amount: 1 would take {EXTERNAL_CASH} out of the int64 range"):
            store.transfer(deposit(bob, 1, "d-bob"))
        assert state(store) == before
        assert_sound(store)

    # ---- idempotency ----------------------------------------------------------------------------
    def test_the_same_request_again_is_a_replay_that_moves_nothing(self, store: LedgerStore) -> None:
        alice = self.player(store, "alice", 5_000)
        table = self.table(store, "t1")
        first, _ = store.transfer(spec(alice, table, 2_000, TK.TRANSFER_KIND_BUY_IN, "buy", "seat 1"))
        before = state(store)
        again, replayed = store.transfer(spec(alice, table, 2_000, TK.TRANSFER_KIND_BUY_IN, "buy", "seat 1"))
        assert replayed and again == first
        assert state(store) == before
        assert store.get_account(alice).balance == 3_000

    @pytest.mark.parametrize("change", ["amount", "to_account", "reference", "kind"])
    def test_a_used_key_with_a_different_request_is_a_conflict_and_changes_nothing(
        self, store: LedgerStore, change: str
    ) -> None:
        alice = self.player(store, "alice", 5_000)
        table = self.table(store, "t1")
        other = self.table(store, "t2")
        store.transfer(spec(alice, table, 2_000, TK.TRANSFER_KIND_BUY_IN, "buy", "seat 1"))
        variants = {
            "amount": spec(alice, table, 2_001, TK.TRANSFER_KIND_BUY_IN, "buy", "seat 1"),
            "to_account": spec(alice, other, 2_000, TK.TRANSFER_KIND_BUY_IN, "buy", "seat 1"),
            "reference": spec(alice, table, 2_000, TK.TRANSFER_KIND_BUY_IN, "buy", "seat 2"),
            "kind": spec(alice, ledger.external_account(CASH), 2_000, TK.TRANSFER_KIND_WITHDRAWAL, "buy", "seat 1"),
        }
        before = state(store)
        with pytest.raises(IdempotencyConflict) as err:
            store.transfer(variants[change])
        assert err.value.kind is ErrorKind.CONFLICT and isinstance(err.value, StoreError)
        assert err.value.message.startswith("idempotency_key: 'buy' was already used for a different transfer")
        assert state(store) == before

    def test_each_key_is_applied_once_under_concurrent_retries(self, store: LedgerStore) -> None:
        """Four threads send the same 30 transfers (each key four times), racing each other."""
        players = [self.player(store, f"p{i}", 1_000) for i in range(3)]
        table = self.table(store, "t1")
        work = [spec(players[i % 3], table, 10 + i, TK.TRANSFER_KIND_BUY_IN, f"race:{i}") for i in range(30)]
        outcomes: list[tuple[str, bool]] = []
        errors: list[BaseException] = []
        lock = threading.Lock()

        def send(offset: int) -> None:
            try:
                for i in range(len(work)):
                    item = work[(i + offset) % len(work)]
                    row, replayed = store.transfer(item)
                    assert row.spec() == item
                    with lock:
                        outcomes.append((item.key, replayed))
            except BaseException as exc:  # surfaced below: a thread's failure must fail the test
                errors.append(exc)

        threads = [threading.Thread(target=send, args=(k * 7,)) for k in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert not errors, errors
        applied = [key for key, replayed in outcomes if not replayed]
        assert sorted(applied) == sorted(item.key for item in work) and len(outcomes) == 120
        assert store.get_account(table).balance == sum(item.amount for item in work)
        assert store.summary().transfers == 3 + 30
        assert_sound(store)

    # ---- history ----------------------------------------------------------------------------------
    def test_history_pages_by_transfer_id_and_shows_only_the_account(self, store: LedgerStore) -> None:
        alice = self.player(store, "alice", 9_000)
        bob = self.player(store, "bob", 9_000)
        table = self.table(store, "t1")
        for i in range(5):
            store.transfer(spec(alice, table, 100, TK.TRANSFER_KIND_BUY_IN, f"a{i}"))
            store.transfer(spec(bob, table, 100, TK.TRANSFER_KIND_BUY_IN, f"b{i}"))
        store.transfer(spec(table, alice, 300, TK.TRANSFER_KIND_CASH_OUT, "out"))
        rows, after = [], 0
        while page := store.list_transfers(alice, after, 2):
            assert len(page) <= 2
            rows += page
            after = page[-1].transfer_id
        assert [r.key for r in rows] == ["fund:alice", "a0", "a1", "a2", "a3", "a4", "out"]
        assert [r.transfer_id for r in rows] == sorted({r.transfer_id for r in rows})
        assert len(store.list_transfers(table, 0, 100)) == 11

    # ---- outbox -----------------------------------------------------------------------------------
    def test_every_transfer_queues_one_event_in_order_until_it_is_marked_published(self, store: LedgerStore) -> None:
        store.mark_published([e.seq for e in store.outbox_batch(100)])
        assert store.outbox_batch(100) == [] and store.outbox_stats() == (0, None)
        assert store.summary().outbox_pending == 0
        alice = self.player(store, "alice", 700)
        table = self.table(store, "t1")
        buy, _ = store.transfer(spec(alice, table, 200, TK.TRANSFER_KIND_BUY_IN, "buy"))
        store.transfer(spec(alice, table, 200, TK.TRANSFER_KIND_BUY_IN, "buy"))  # a replay queues nothing
        events = store.outbox_batch(100)
        assert [(e.type, e.key) for e in events] == [
            (EVENT_ACCOUNT_OPENED, alice),
            (EVENT_TRANSFER_POSTED, EXTERNAL_CASH),
            (EVENT_ACCOUNT_OPENED, table),
            (EVENT_TRANSFER_POSTED, alice),
        ]
        assert [e.seq for e in events] == sorted(e.seq for e in events) and len({e.event_id for e in events}) == 4
        posted = events_pb2.TransferPosted.FromString(events[3].payload)
        assert posted.transfer == buy.to_proto()
        assert store.outbox_stats() == (4, events[0].created_us)
        assert store.summary().outbox_pending == 4
        assert store.outbox_batch(2) == events[:2]
        store.mark_published([events[0].seq, events[1].seq])
        store.mark_published([events[0].seq])  # marking again is harmless
        assert store.outbox_batch(100) == events[2:]
        assert store.outbox_stats() == (2, events[2].created_us)

    # ---- routes other than cash -----------------------------------------------------------------
    def test_play_money_and_tournament_accounts_keep_their_own_currency_at_zero(self, store: LedgerStore) -> None:
        alice = store.open_account(AK.ACCOUNT_KIND_PLAYER_PLAY, "alice", PLAY)[0].account_id
        pool = store.open_account(AK.ACCOUNT_KIND_TOURNAMENT_PRIZE_POOL, "tn1", PLAY)[0].account_id
        store.transfer(deposit(alice, 1_000, "pd"))
        store.transfer(spec(alice, pool, 400, TK.TRANSFER_KIND_TOURNAMENT_ENTRY, "entry"))
        store.transfer(spec(pool, alice, 400, TK.TRANSFER_KIND_TOURNAMENT_PRIZE, "prize"))
        totals = {t.currency: t.sum for t in store.summary().totals}
        assert totals == {CASH: 0, PLAY: 0}
        assert store.get_account(ledger.external_account(PLAY)).balance == -1_000
        assert store.get_account(ledger.external_account(CASH)).balance == 0
        assert_sound(store)

    # ---- escrow positions (issue 14 item 7) --------------------------------------------------------
    def test_positions_follow_buy_ins_cash_outs_and_hand_nets_and_add_up_to_the_balance(
        self, store: LedgerStore
    ) -> None:
        alice, bob = self.player(store, "alice", 5_000), self.player(store, "bob", 5_000)
        table = self.table(store, "t1")
        assert positions(store, table) == {}
        store.transfer(spec(alice, table, 2_000, TK.TRANSFER_KIND_BUY_IN, "b1"))
        store.transfer(spec(bob, table, 1_000, TK.TRANSFER_KIND_BUY_IN, "b2"))
        assert positions(store, table) == {"alice": 2_000, "bob": 1_000}
        rake, replayed = store.settle_hand(hand("t1", 1, 30, alice=470, bob=-500))
        assert rake is not None and not replayed and rake.amount == 30
        assert positions(store, table) == {"alice": 2_470, "bob": 500}
        row, replayed = store.settle_hand(hand("t1", 2, 0, alice=-500, bob=500))
        assert row is None and not replayed
        assert positions(store, table) == {"alice": 1_970, "bob": 1_000}
        store.transfer(spec(table, bob, 1_000, TK.TRANSFER_KIND_CASH_OUT, "c1"))
        assert positions(store, table) == {"alice": 1_970}
        store.transfer(spec(alice, table, 30, TK.TRANSFER_KIND_BUY_IN, "b3"))  # adding chips
        assert positions(store, table) == {"alice": 2_000}
        # other kinds, and other escrows, move no position
        other = self.table(store, "t2")
        store.transfer(spec(alice, ledger.external_account(CASH), 100, TK.TRANSFER_KIND_WITHDRAWAL, "w1"))
        assert positions(store, other) == {} and positions(store, table) == {"alice": 2_000}
        assert_sound(store)

    def test_a_replayed_transfer_or_hand_moves_no_position_twice(self, store: LedgerStore) -> None:
        alice, bob = self.player(store, "alice", 5_000), self.player(store, "bob", 5_000)
        table = self.table(store, "t1")
        buy = spec(alice, table, 2_000, TK.TRANSFER_KIND_BUY_IN, "b1")
        store.transfer(buy)
        store.transfer(spec(bob, table, 2_000, TK.TRANSFER_KIND_BUY_IN, "b2"))
        store.transfer(buy)
        settled = hand("t1", 1, 10, alice=90, bob=-100)
        first, _ = store.settle_hand(settled)
        before = state(store)
        again, replayed = store.settle_hand(settled)
        assert replayed and again == first
        assert state(store) == before and positions(store, table) == {"alice": 2_090, "bob": 1_900}
        assert store.settle_hand(hand("t1", 2, 0, alice=5, bob=-5)) == (None, False)
        assert store.settle_hand(hand("t1", 2, 0, alice=5, bob=-5)) == (None, True)
        assert positions(store, table) == {"alice": 2_095, "bob": 1_895}
        for different in (hand("t1", 1, 11, alice=89, bob=-100), hand("t1", 2, 3, alice=2, bob=-5)):
            with pytest.raises(IdempotencyConflict, match="^hand_id:"):
                store.settle_hand(different)
        assert store.get_account(table).balance == 3_990
        assert_sound(store)

    def test_a_refused_hand_changes_no_position(self, store: LedgerStore) -> None:
        alice, bob = self.player(store, "alice", 100), self.player(store, "bob", 100)
        table = self.table(store, "t1")
        store.transfer(spec(alice, table, 100, TK.TRANSFER_KIND_BUY_IN, "b1"))
        store.transfer(spec(bob, table, 100, TK.TRANSFER_KIND_BUY_IN, "b2"))
        before = state(store)
        with pytest.raises(InsufficientFunds):  # a rake above the escrow's balance
            store.settle_hand(hand("t1", 1, 300, alice=-100, bob=-200))
        with pytest.raises(AccountNotFound, match="^table_id:"):
            store.settle_hand(hand("ghost", 1, 0, alice=5, bob=-5))
        assert state(store) == before and positions(store, table) == {"alice": 100, "bob": 100}
        # the refused hand id was not used up
        assert store.settle_hand(hand("t1", 1, 0, alice=50, bob=-50))[1] is False

    def test_each_hand_is_booked_once_under_concurrent_deliveries(self, store: LedgerStore) -> None:
        """Four threads deliver the same 12 hands and add-chips (each four times), racing each other."""
        alice, bob = self.player(store, "alice", 10_000), self.player(store, "bob", 10_000)
        table = self.table(store, "t1")
        store.transfer(spec(alice, table, 1_000, TK.TRANSFER_KIND_BUY_IN, "b-a"))
        store.transfer(spec(bob, table, 1_000, TK.TRANSFER_KIND_BUY_IN, "b-b"))
        hands = [hand("t1", n, n % 3, alice=10 - n % 3, bob=-10) for n in range(1, 13)]
        chips = [spec(alice, table, 5, TK.TRANSFER_KIND_BUY_IN, f"add:{n}") for n in range(12)]
        errors: list[BaseException] = []

        def deliver(offset: int) -> None:
            try:
                for i in range(12):
                    store.settle_hand(hands[(i + offset) % 12])
                    store.transfer(chips[(i + offset) % 12])
            except BaseException as exc:  # surfaced below: a thread's failure must fail the test
                errors.append(exc)

        threads = [threading.Thread(target=deliver, args=(k * 5,)) for k in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert not errors, errors
        rake = sum(n % 3 for n in range(1, 13))
        assert positions(store, table) == {"alice": 1_000 + 120 - rake + 60, "bob": 1_000 - 120}
        assert store.get_account(ledger.house_rake_account(CASH)).balance == rake
        assert_sound(store)

    def test_reconciling_pays_back_every_unseated_position_once(self, store: LedgerStore) -> None:
        """The bug of issue 14 item 7: an escrow left without a seat after recovery is paid back to
        its owners (the seated keep theirs), and a replay of the request changes nothing."""
        alice, bob = self.player(store, "alice", 5_000), self.player(store, "bob", 5_000)
        table = self.table(store, "t1")
        store.transfer(spec(alice, table, 2_000, TK.TRANSFER_KIND_BUY_IN, "b1"))
        store.transfer(spec(bob, table, 1_000, TK.TRANSFER_KIND_BUY_IN, "b2"))
        store.settle_hand(hand("t1", 1, 20, alice=-520, bob=500))
        done = store.reconcile(reconcile(table, "r1", "alice", settled_hand_id="t1-1"))
        assert not done.replayed and done.total == 1_500
        assert [(t.to_account, t.amount, t.kind) for t in done.transfers] == [(bob, 1_500, TK.TRANSFER_KIND_CASH_OUT)]
        assert store.get_account(bob).balance == 5_500 and store.get_account(table).balance == 1_480
        assert positions(store, table) == {"alice": 1_480}
        before = state(store)
        again = store.reconcile(reconcile(table, "r1", "alice", settled_hand_id="t1-1"))
        assert again.replayed and again.transfers == done.transfers and again.total == 1_500
        assert state(store) == before
        with pytest.raises(IdempotencyConflict, match="^request_id:"):
            store.reconcile(reconcile(table, "r1"))
        # the table empties: everything goes back, the escrow ends at 0
        empty = store.reconcile(reconcile(table, "r2"))
        assert [(t.to_account, t.amount) for t in empty.transfers] == [(alice, 1_480)]
        assert store.get_account(table).balance == 0 and positions(store, table) == {}
        assert store.get_account(alice).balance == 4_480
        assert store.reconcile(reconcile(table, "r3")).transfers == ()
        assert_sound(store)

    def test_a_buy_in_paid_back_by_a_reconciliation_is_refused_when_asked_for_again(self, store: LedgerStore) -> None:
        """A buy-in whose answer the dealer lost, paid back after its recovery: the same request again
        must not seat chips the escrow no longer holds (its replay would otherwise look applied)."""
        alice, bob = self.player(store, "alice", 5_000), self.player(store, "bob", 5_000)
        table = self.table(store, "t1")
        lost = spec(alice, table, 2_000, TK.TRANSFER_KIND_BUY_IN, "b-lost")
        kept = spec(bob, table, 1_000, TK.TRANSFER_KIND_BUY_IN, "b-kept")
        store.transfer(lost)
        store.transfer(kept)
        store.reconcile(reconcile(table, "r1", "bob"))
        before = state(store)
        with pytest.raises(
            LedgerError, match=r"^idempotency_key: buy-in #\d+ was paid back to player_cash:alice"
        ) as err:
            store.transfer(lost)
        assert err.value.kind is ErrorKind.PRECONDITION
        assert state(store) == before and store.get_account(alice).balance == 5_000
        # bob's buy-in was not paid back: its replay is still the first answer
        row, replayed = store.transfer(kept)
        assert replayed and row.amount == 1_000
        # a new buy-in of the same player goes through
        store.transfer(spec(alice, table, 500, TK.TRANSFER_KIND_BUY_IN, "b-new"))
        assert positions(store, table) == {"alice": 500, "bob": 1_000}
        assert_sound(store)

    def test_reconciling_refuses_what_it_cannot_pay_back_exactly_and_changes_nothing(self, store: LedgerStore) -> None:
        alice, bob = self.player(store, "alice", 1_000), self.player(store, "bob", 1_000)
        table = self.table(store, "t1")
        store.transfer(spec(alice, table, 1_000, TK.TRANSFER_KIND_BUY_IN, "b1"))
        store.transfer(spec(bob, table, 1_000, TK.TRANSFER_KIND_BUY_IN, "b2"))
        before = state(store)
        with pytest.raises(LedgerError, match="^settled_hand_id: hand 't1-1' is not applied") as err:
            store.reconcile(reconcile(table, "r1", settled_hand_id="t1-1"))
        assert err.value.kind is ErrorKind.PRECONDITION
        with pytest.raises(AccountNotFound, match="^escrow_account:"):
            store.reconcile(reconcile("table_escrow:ghost:cash", "r1"))
        # a winner's cash-out booked before his hand: a negative position until the hand arrives
        store.transfer(spec(table, alice, 1_500, TK.TRANSFER_KIND_CASH_OUT, "c1"))
        during = state(store)
        with pytest.raises(LedgerError, match="is negative") as err:
            store.reconcile(reconcile(table, "r1"))
        assert err.value.kind is ErrorKind.PRECONDITION and state(store) == during
        store.settle_hand(hand("t1", 1, 0, alice=500, bob=-500))
        assert positions(store, table) == {"bob": 500}
        # a position whose player has no account: the whole reconciliation is refused, nothing moves
        store.settle_hand(hand("t1", 2, 0, carol=200, bob=-200))
        after = state(store)
        with pytest.raises(AccountNotFound, match="player_cash:carol:cash"):
            store.reconcile(reconcile(table, "r1"))
        assert state(store) == after and positions(store, table) == {"bob": 300, "carol": 200}
        assert store.reconcile(reconcile(table, "r1", "carol")).total == 300
        assert state(store) != before
        assert_sound(store)

    # ---- fencing (docs/sharding.md) -------------------------------------------------------------------
    def test_a_claim_stores_its_partitions_epoch_and_a_lower_claim_is_fenced(self, store: LedgerStore) -> None:
        assert store.partition_epoch(3) == 0  # never claimed
        assert store.claim_tables(Fence(3, 5)) == 5 and store.partition_epoch(3) == 5
        assert store.claim_tables(Fence(3, 5)) == 5  # the same claim again: idempotent
        before = state(store)
        with pytest.raises(Fenced) as err:
            store.claim_tables(Fence(3, 4))
        assert err.value.kind is ErrorKind.PRECONDITION and isinstance(err.value, StoreError)
        assert err.value.message.startswith("fenced: partition 3 is held at epoch 5, above this claim's epoch 4")
        assert err.value.details == {"partition": "3", "epoch": "4", "stored_epoch": "5"}
        assert store.partition_epoch(3) == 5 and state(store) == before
        assert store.claim_tables(Fence(3, 9)) == 9 and store.partition_epoch(3) == 9
        assert store.partition_epoch(2) == 0  # each partition has its own epoch
        assert store.claim_tables(Fence(2, 1)) == 1 and store.partition_epoch(3) == 9

    def test_a_transfer_of_a_stale_epoch_moves_nothing_and_a_newer_one_raises_the_epoch(
        self, store: LedgerStore
    ) -> None:
        alice = self.player(store, "alice", 5_000)
        table = self.table(store, "t1")
        store.claim_tables(Fence(1, 5))
        buy = spec(alice, table, 1_000, TK.TRANSFER_KIND_BUY_IN, "b1")
        before = state(store)
        with pytest.raises(Fenced, match=r"^fenced: partition 1 is held at epoch 5, above this call's epoch 4"):
            store.transfer(buy, Fence(1, 4))
        assert state(store) == before and store.get_account(alice).balance == 5_000
        assert store.get_account(table).balance == 0 and positions(store, table) == {}
        assert store.partition_epoch(1) == 5
        # the key was not used up: the owner's call goes through
        row, replayed = store.transfer(buy, Fence(1, 5))
        assert not replayed and row.to_balance_after == 1_000 and store.partition_epoch(1) == 5
        # a call of a newer claim raises the partition's epoch, and the older claim is fenced from then on
        store.transfer(spec(alice, table, 500, TK.TRANSFER_KIND_BUY_IN, "b2"), Fence(1, 6))
        assert store.partition_epoch(1) == 6
        with pytest.raises(Fenced):
            store.claim_tables(Fence(1, 5))
        with pytest.raises(Fenced):
            store.transfer(spec(table, alice, 100, TK.TRANSFER_KIND_CASH_OUT, "c1"), Fence(1, 5))
        # epoch 0 (no fence) is never checked, and another partition's epoch is its own
        store.transfer(spec(table, alice, 100, TK.TRANSFER_KIND_CASH_OUT, "c2"))
        store.transfer(spec(table, alice, 100, TK.TRANSFER_KIND_CASH_OUT, "c3"), Fence(2, 1))
        assert (store.partition_epoch(1), store.partition_epoch(2)) == (6, 1)
        assert positions(store, table) == {"alice": 1_300} and store.get_account(alice).balance == 3_700
        assert_sound(store)

    def test_a_replay_answers_its_first_transfer_whatever_its_fence(self, store: LedgerStore) -> None:
        alice = self.player(store, "alice", 5_000)
        table = self.table(store, "t1")
        buy = spec(alice, table, 1_000, TK.TRANSFER_KIND_BUY_IN, "b1")
        first, _ = store.transfer(buy, Fence(1, 5))
        store.claim_tables(Fence(1, 7))
        before = state(store)
        assert store.transfer(buy, Fence(1, 5)) == (first, True)  # it moves nothing
        assert state(store) == before and store.partition_epoch(1) == 7

    def test_a_refused_transfer_or_reconciliation_raises_no_epoch(self, store: LedgerStore) -> None:
        alice = self.player(store, "alice", 1_000)
        table = self.table(store, "t1")
        store.claim_tables(Fence(1, 5))
        with pytest.raises(InsufficientFunds):
            store.transfer(spec(alice, table, 1_001, TK.TRANSFER_KIND_BUY_IN, "b1"), Fence(1, 9))
        assert store.partition_epoch(1) == 5
        with pytest.raises(LedgerError, match="^settled_hand_id:"):
            store.reconcile(reconcile(table, "r1", settled_hand_id="t1-1"), Fence(1, 9))
        assert store.partition_epoch(1) == 5

    def test_a_reconciliation_of_a_stale_epoch_pays_nothing_back(self, store: LedgerStore) -> None:
        alice, bob = self.player(store, "alice", 5_000), self.player(store, "bob", 5_000)
        table = self.table(store, "t1")
        store.transfer(spec(alice, table, 2_000, TK.TRANSFER_KIND_BUY_IN, "b1"))
        store.transfer(spec(bob, table, 1_000, TK.TRANSFER_KIND_BUY_IN, "b2"))
        store.claim_tables(Fence(0, 3))
        before = state(store)
        with pytest.raises(Fenced, match=r"^fenced: partition 0 is held at epoch 3, above this call's epoch 2"):
            store.reconcile(reconcile(table, "r1", "alice"), Fence(0, 2))
        assert state(store) == before and positions(store, table) == {"alice": 2_000, "bob": 1_000}
        done = store.reconcile(reconcile(table, "r1", "alice"), Fence(0, 4))
        assert done.total == 1_000 and store.get_account(bob).balance == 5_000
        assert store.partition_epoch(0) == 4
        # its replay is the first result, whatever its fence; a new one of the old epoch is fenced
        assert store.reconcile(reconcile(table, "r1", "alice"), Fence(0, 2)) == Reconciliation(
            table, done.transfers, replayed=True
        )
        with pytest.raises(Fenced):
            store.reconcile(reconcile(table, "r2"), Fence(0, 3))
        assert positions(store, table) == {"alice": 2_000}
        assert_sound(store)

    def test_a_settlement_below_its_tables_epoch_is_fenced_and_other_tables_are_not(self, store: LedgerStore) -> None:
        alice, bob = self.player(store, "alice", 5_000), self.player(store, "bob", 5_000)
        t1, t2 = self.table(store, "t1"), self.table(store, "t2")
        for table in (t1, t2):
            store.transfer(spec(alice, table, 1_000, TK.TRANSFER_KIND_BUY_IN, f"a:{table}"))
            store.transfer(spec(bob, table, 1_000, TK.TRANSFER_KIND_BUY_IN, f"b:{table}"))
        assert store.table_epoch("t1") == 0
        assert store.settle_hand(hand("t1", 1, 10, alice=90, bob=-100), Fence(0, 7))[1] is False
        assert store.table_epoch("t1") == 7
        before = state(store)
        with pytest.raises(Fenced, match=r"^fenced: table 't1' has a settlement of epoch 7 applied") as err:
            store.settle_hand(hand("t1", 2, 20, alice=-120, bob=100), Fence(0, 5))
        assert err.value.kind is ErrorKind.PRECONDITION
        assert err.value.details == {"table_id": "t1", "epoch": "5", "stored_epoch": "7"}
        assert state(store) == before and positions(store, t1) == {"alice": 1_090, "bob": 900}
        assert store.table_epoch("t1") == 7
        # another table is not fenced by t1's epoch
        assert store.settle_hand(hand("t2", 1, 0, alice=50, bob=-50), Fence(0, 5))[1] is False
        assert store.table_epoch("t2") == 5 and positions(store, t2) == {"alice": 1_050, "bob": 950}
        # epoch 0 is never checked; a hand booked before is a replay whatever its fence
        assert store.settle_hand(hand("t1", 3, 0, alice=10, bob=-10))[1] is False
        assert store.settle_hand(hand("t1", 1, 10, alice=90, bob=-100), Fence(0, 5))[1] is True
        assert store.table_epoch("t1") == 7
        # settlements are fenced per table, not by the partition's claims: a hand the old owner published
        # before it lost the table still applies after the new claim
        store.claim_tables(Fence(0, 20))
        assert store.settle_hand(hand("t1", 4, 0, alice=5, bob=-5), Fence(0, 7))[1] is False
        assert store.settle_hand(hand("t1", 5, 0, alice=5, bob=-5), Fence(0, 21))[1] is False
        assert store.table_epoch("t1") == 21 and store.partition_epoch(0) == 20
        assert positions(store, t1) == {"alice": 1_110, "bob": 880}
        assert_sound(store)

    # ---- errors -------------------------------------------------------------------------------------
    def test_a_closed_store_raises_store_unavailable(self, request: pytest.FixtureRequest, clock: FakeClock) -> None:
        store = self.create_store(request, clock)
        store.close()
        with pytest.raises(StoreUnavailable):
            store.get_account(EXTERNAL_CASH)
        with pytest.raises(StoreError):
            store.transfer(deposit("player_cash:alice:cash", 1, "late"))


class SlowFence:
    """Mixed into an SQL store class: a fenced call that passed its check sets ``checked`` and keeps its
    transaction open for ``HOLD`` seconds (what a slow database or a GC pause could do)."""

    HOLD = 0.5

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.checked = threading.Event()
        super().__init__(*args, **kwargs)

    def _hold_partition(self, cur: Any, fence: Fence, what: str = "call") -> int:
        stored = super()._hold_partition(cur, fence, what)  # type: ignore[misc]
        if what == "call":
            self.checked.set()
            time.sleep(self.HOLD)
        return int(stored)


class DurableStoreContract(LedgerStoreContract):
    """Backends that keep the ledger across a reopen of the same database."""

    @abstractmethod
    def reopen_slow_fence(self, request: pytest.FixtureRequest, clock: FakeClock) -> Any:
        """A second store over the database of the last :meth:`create_store`, of the backend's class with
        :class:`SlowFence` mixed in."""

    @abstractmethod
    def reopen(self, request: pytest.FixtureRequest, clock: FakeClock) -> LedgerStore:
        """A second store over the database of the last :meth:`create_store`."""

    @abstractmethod
    def drop_tables(self, request: pytest.FixtureRequest, tables: tuple[str, ...]) -> None:
        """Turn the (closed) database of the last :meth:`create_store` into one written before the
        store kept what ``tables`` hold: drop them."""

    #: The tables escrow positions added (issue 14 item 7), and fencing (docs/sharding.md).
    POSITION_TABLES = ("escrow_positions", "escrow_hands", "escrow_flags", "reconciliations")
    FENCE_TABLES = ("partition_epochs", "table_epochs")

    def test_positions_and_booked_hands_survive_a_reopen(
        self, request: pytest.FixtureRequest, store: LedgerStore, clock: FakeClock
    ) -> None:
        alice, bob = self.player(store, "alice", 1_000), self.player(store, "bob", 1_000)
        table = self.table(store, "t1")
        store.transfer(spec(alice, table, 1_000, TK.TRANSFER_KIND_BUY_IN, "b1"))
        store.transfer(spec(bob, table, 1_000, TK.TRANSFER_KIND_BUY_IN, "b2"))
        settled = hand("t1", 1, 10, alice=190, bob=-200)
        store.settle_hand(settled)
        store.close()
        again = self.reopen(request, clock)
        try:
            assert positions(again, table) == {"alice": 1_190, "bob": 800}
            assert again.settle_hand(settled)[1] is True
            assert positions(again, table) == {"alice": 1_190, "bob": 800}
        finally:
            again.close()

    def test_an_escrow_older_than_positions_is_flagged_until_it_is_empty(
        self, request: pytest.FixtureRequest, store: LedgerStore, clock: FakeClock
    ) -> None:
        """Migration: positions cannot be rebuilt from the transfers (they do not say who won which
        hand), so an existing escrow holding chips is flagged and never reconciled automatically; an
        empty one is exact at once; a flagged one becomes exact when its balance is back to 0."""
        alice, bob = self.player(store, "alice", 1_000), self.player(store, "bob", 1_000)
        live, idle = self.table(store, "t1"), self.table(store, "t2")
        store.transfer(spec(alice, live, 600, TK.TRANSFER_KIND_BUY_IN, "b1"))
        store.transfer(spec(bob, live, 400, TK.TRANSFER_KIND_BUY_IN, "b2"))
        old_hand = hand("t1", 1, 10, alice=190, bob=-200)
        store.settle_hand(old_hand)
        store.transfer(spec(bob, idle, 100, TK.TRANSFER_KIND_BUY_IN, "b3"))
        store.transfer(spec(idle, bob, 100, TK.TRANSFER_KIND_CASH_OUT, "c3"))
        store.close()
        self.drop_tables(request, self.POSITION_TABLES)
        migrated = self.reopen(request, clock)
        try:
            state_live = migrated.escrow_state(live)
            assert (state_live.balance, state_live.positions, state_live.flag) == (990, {}, PREDATES_POSITIONS)
            assert migrated.escrow_state(idle).flag == ""
            before = state(migrated)
            with pytest.raises(LedgerError, match="cannot be reconciled from its positions") as err:
                migrated.reconcile(reconcile(live, "r1"))
            assert err.value.kind is ErrorKind.PRECONDITION and state(migrated) == before
            # the old hand delivered again is recorded, and moves neither chips nor positions
            assert migrated.settle_hand(old_hand)[1] is True
            assert migrated.escrow_state(live).positions == {} and state(migrated) == before
            # new movements are tracked; the escrow drains to 0, and is exact from then on
            migrated.transfer(spec(live, alice, 790, TK.TRANSFER_KIND_CASH_OUT, "c1"))
            migrated.transfer(spec(live, bob, 200, TK.TRANSFER_KIND_CASH_OUT, "c2"))
            emptied = migrated.escrow_state(live)
            assert (emptied.balance, emptied.positions, emptied.flag) == (0, {}, "")
            migrated.transfer(spec(bob, live, 300, TK.TRANSFER_KIND_BUY_IN, "b4"))
            assert migrated.reconcile(reconcile(live, "r2")).total == 300
            assert_sound(migrated)
        finally:
            migrated.close()

    def test_a_claim_waits_for_the_fenced_transfer_that_passed_its_check(
        self, request: pytest.FixtureRequest, store: LedgerStore, clock: FakeClock
    ) -> None:
        """The check and the movement are one transaction: a claim made after a transfer's check (and
        before its commit) is stored after that transfer, never between its check and its movement."""
        alice = self.player(store, "alice", 1_000)
        table = self.table(store, "t1")
        store.claim_tables(Fence(0, 5))
        slow = self.reopen_slow_fence(request, clock)
        done: list[tuple[Any, bool]] = []
        buy = spec(alice, table, 100, TK.TRANSFER_KIND_BUY_IN, "b1")
        worker = threading.Thread(target=lambda: done.append(slow.transfer(buy, Fence(0, 5))))
        try:
            worker.start()
            assert slow.checked.wait(10), "the fenced transfer never reached its check"
            assert store.claim_tables(Fence(0, 6)) == 6
            assert store.get_account(table).balance == 100  # committed before the claim was
            worker.join(10)
            assert done and not done[0][1]
            with pytest.raises(Fenced):
                store.transfer(spec(alice, table, 100, TK.TRANSFER_KIND_BUY_IN, "b2"), Fence(0, 5))
            assert_sound(store)
        finally:
            worker.join(10)
            slow.close()

    def test_epochs_survive_a_reopen(
        self, request: pytest.FixtureRequest, store: LedgerStore, clock: FakeClock
    ) -> None:
        alice, bob = self.player(store, "alice", 1_000), self.player(store, "bob", 1_000)
        table = self.table(store, "t1")
        store.claim_tables(Fence(4, 8))
        store.transfer(spec(alice, table, 500, TK.TRANSFER_KIND_BUY_IN, "b1"), Fence(4, 8))
        store.transfer(spec(bob, table, 500, TK.TRANSFER_KIND_BUY_IN, "b2"), Fence(4, 8))
        store.settle_hand(hand("t1", 1, 0, alice=50, bob=-50), Fence(4, 8))
        store.close()
        again = self.reopen(request, clock)
        try:
            assert (again.partition_epoch(4), again.table_epoch("t1")) == (8, 8)
            with pytest.raises(Fenced):
                again.transfer(spec(table, alice, 100, TK.TRANSFER_KIND_CASH_OUT, "c1"), Fence(4, 7))
            with pytest.raises(Fenced):
                again.settle_hand(hand("t1", 2, 0, alice=5, bob=-5), Fence(4, 7))
            assert positions(again, table) == {"alice": 550, "bob": 450}
        finally:
            again.close()

    def test_a_database_from_before_fencing_opens_with_every_epoch_at_zero(
        self, request: pytest.FixtureRequest, store: LedgerStore, clock: FakeClock
    ) -> None:
        """Migration: the epoch tables are created, empty; nothing else changes."""
        alice, bob = self.player(store, "alice", 1_000), self.player(store, "bob", 1_000)
        table = self.table(store, "t1")
        store.transfer(spec(alice, table, 500, TK.TRANSFER_KIND_BUY_IN, "b1"))
        store.transfer(spec(bob, table, 500, TK.TRANSFER_KIND_BUY_IN, "b2"))
        store.settle_hand(hand("t1", 1, 10, alice=40, bob=-50))
        store.close()
        self.drop_tables(request, self.FENCE_TABLES)
        migrated = self.reopen(request, clock)
        try:
            assert (migrated.partition_epoch(0), migrated.table_epoch("t1")) == (0, 0)
            assert positions(migrated, table) == {"alice": 540, "bob": 450}
            assert migrated.escrow_state(table).flag == ""
            assert migrated.claim_tables(Fence(0, 1)) == 1
            migrated.transfer(spec(table, alice, 540, TK.TRANSFER_KIND_CASH_OUT, "c1"), Fence(0, 1))
            assert migrated.settle_hand(hand("t1", 2, 0, bob=-10, carol=10), Fence(0, 1))[1] is False
            assert migrated.table_epoch("t1") == 1
            assert_sound(migrated)
        finally:
            migrated.close()

    def test_a_reopened_store_sees_every_committed_transfer_and_pending_event(
        self, request: pytest.FixtureRequest, store: LedgerStore, clock: FakeClock
    ) -> None:
        alice = self.player(store, "alice", 2_500)
        row, _ = store.transfer(spec(alice, ledger.external_account(CASH), 500, TK.TRANSFER_KIND_WITHDRAWAL, "wd"))
        events = store.outbox_batch(100)
        store.close()
        again = self.reopen(request, clock)
        try:
            assert again.get_account(alice).balance == 2_000
            assert again.transfer(row.spec()) == (row, True)
            assert again.outbox_batch(100) == events
            assert again.summary().accounts == len(BUILT_IN) + 1
            assert_sound(again)
        finally:
            again.close()


__all__ = ["DurableStoreContract", "FakeClock", "LedgerStoreContract", "SlowFence"]
