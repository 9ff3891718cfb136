"""The account store's contract (run against the in-memory and the SQLite store), the login policy
(argon2id, lockout, refresh rotation) and the per-address limits, with time as an input."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from cardroom.core.ids import InvalidId
from cardroom.runtime import errors
from gateway.account_store import Account, AccountStore, MemoryAccountStore, RefreshToken, SqliteAccountStore
from gateway.accounts import Accounts, LoginPolicy, hasher
from gateway.ratelimit import Limits, RateLimiter, Refusal, StreamCounter, address_of


class AccountStoreContract:
    """Every store behaves the same; a subclass provides ``store``."""

    @pytest.fixture
    def store(self) -> Iterator[AccountStore]:
        raise NotImplementedError

    def test_create_get_update(self, store: AccountStore) -> None:
        ann = Account("ann", "$argon2id$x", 10.0)
        assert store.get("ann") is None
        assert store.create(ann) is True
        assert store.create(dataclasses.replace(ann, password_hash="other")) is False  # taken: unchanged
        assert store.get("ann") == ann
        locked = dataclasses.replace(ann, failed_logins=2, locked_until=99.5, password_changed_at=11.0)
        store.update(locked)
        assert store.get("ann") == locked
        with pytest.raises(KeyError):
            store.update(Account("bob", "h", 1.0))

    def test_a_refresh_token_is_used_once(self, store: AccountStore) -> None:
        token = RefreshToken("a" * 64, "ann", 100.0)
        store.add_refresh(token)
        assert store.get_refresh("a" * 64) == token
        assert store.use_refresh("a" * 64) is True
        assert store.use_refresh("a" * 64) is False
        used = store.get_refresh("a" * 64)
        assert used is not None and used.used
        assert store.use_refresh("b" * 64) is False  # unknown

    def test_revoke_forgets_only_that_players_tokens(self, store: AccountStore) -> None:
        for n, player in enumerate(("ann", "ann", "bob")):
            store.add_refresh(RefreshToken(str(n) * 64, player, 100.0))
        assert store.revoke_refresh("ann") == 2
        assert store.get_refresh("0" * 64) is None and store.get_refresh("1" * 64) is None
        assert store.get_refresh("2" * 64) is not None

    def test_purge_forgets_expired_refresh_tokens_only(self, store: AccountStore) -> None:
        store.add_refresh(RefreshToken("1" * 64, "ann", 10.0, used=True))
        store.add_refresh(RefreshToken("2" * 64, "ann", 20.0, used=True))
        store.add_refresh(RefreshToken("3" * 64, "bob", 30.0))
        assert store.purge_refresh(20.0) == 2
        assert store.get_refresh("1" * 64) is None and store.get_refresh("2" * 64) is None
        assert store.get_refresh("3" * 64) == RefreshToken("3" * 64, "bob", 30.0)

    def test_grants_are_counted_per_key_and_day(self, store: AccountStore) -> None:
        assert [store.take_grant("ipv4:1.2.3.4", "2026-12-01", 2) for _ in range(3)] == [True, True, False]
        assert store.take_grant("ipv4:1.2.3.4", "2026-12-02", 2) is True
        assert store.take_grant("ipv4:5.6.7.8", "2026-12-01", 2) is True


class TestMemoryStore(AccountStoreContract):
    @pytest.fixture
    def store(self) -> Iterator[AccountStore]:
        yield MemoryAccountStore()


class TestSqliteStore(AccountStoreContract):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[AccountStore]:
        store = SqliteAccountStore(tmp_path / "accounts.sqlite3")
        yield store
        store.close()

    def test_it_keeps_everything_across_a_reopen(self, tmp_path: Path) -> None:
        path = tmp_path / "accounts.sqlite3"
        first = SqliteAccountStore(path)
        first.create(Account("ann", "h", 1.0))
        first.add_refresh(RefreshToken("f" * 64, "ann", 9.0))
        first.take_grant("k", "d", 1)
        first.close()
        again = SqliteAccountStore(path)
        assert again.get("ann") == Account("ann", "h", 1.0)
        assert again.get_refresh("f" * 64) == RefreshToken("f" * 64, "ann", 9.0)
        assert again.take_grant("k", "d", 1) is False
        again.close()


def accounts(max_failures: int = 3) -> Accounts:
    # small argon2id parameters: these tests check the policy, not the cost
    return Accounts(MemoryAccountStore(), LoginPolicy(max_failures, 60.0, 3600.0), hasher(1, 1024, 1))


def refused(call, *args) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(errors.ServiceError) as err:
        call(*args)
    return err.value.code, err.value.reason


def test_sign_up_hashes_with_argon2id_and_checks_the_password() -> None:
    book = accounts()
    account = book.sign_up("ann", "a good password", 5.0)
    assert account.password_hash.startswith("$argon2id$")
    assert book.verify_login("ann", "a good password", 6.0).player_id == "ann"
    assert refused(book.verify_login, "ann", "a bad password", 6.0) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "BAD_CREDENTIALS",
    )
    assert refused(book.sign_up, "ann", "another password", 7.0) == (grpc.StatusCode.ALREADY_EXISTS, "PLAYER_TAKEN")
    assert refused(book.sign_up, "bob", "short", 7.0) == (grpc.StatusCode.INVALID_ARGUMENT, "WEAK_PASSWORD")
    assert refused(book.sign_up, "carolyn1", "CAROLYN1", 7.0)[1] == "WEAK_PASSWORD"
    with pytest.raises(InvalidId):  # INVALID_ARGUMENT (reason INVALID_ID) at the service
        book.sign_up("bad id!", "a good password", 7.0)


def test_lockout_after_max_failures_until_it_ends() -> None:
    book = accounts(max_failures=3)
    book.sign_up("ann", "a good password", 0.0)
    assert refused(book.verify_login, "ann", "x" * 8, 1.0)[1] == "BAD_CREDENTIALS"
    assert refused(book.verify_login, "ann", "x" * 8, 2.0)[1] == "BAD_CREDENTIALS"
    assert refused(book.verify_login, "ann", "x" * 8, 3.0) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "ACCOUNT_LOCKED")
    assert refused(book.verify_login, "ann", "a good password", 62.9)[1] == "ACCOUNT_LOCKED"
    assert book.verify_login("ann", "a good password", 63.0).player_id == "ann"
    # a success resets the count
    assert refused(book.verify_login, "ann", "x" * 8, 64.0)[1] == "BAD_CREDENTIALS"
    book.verify_login("ann", "a good password", 65.0)
    stored = book.store.get("ann")
    assert stored is not None and stored.failed_logins == 0


def test_refresh_tokens_rotate_and_a_replay_revokes_the_family() -> None:
    book = accounts()
    first, expires = book.issue_refresh("ann", 100.0)
    assert expires == 3700.0
    assert book.redeem_refresh(first, 200.0) == "ann"
    second, _ = book.issue_refresh("ann", 200.0)
    assert refused(book.redeem_refresh, first, 201.0) == (grpc.StatusCode.UNAUTHENTICATED, "REFRESH_INVALID")
    assert refused(book.redeem_refresh, second, 202.0)[1] == "REFRESH_INVALID"  # revoked by the replay
    late, _ = book.issue_refresh("ann", 300.0)
    assert refused(book.redeem_refresh, late, 4000.0)[1] == "REFRESH_INVALID"  # expired
    book.issue_refresh("bob", 3700.0 + 300.0)  # an hour after the last purge: the expired are forgotten
    assert not any(t.player_id == "ann" for t in book.store.refresh.values())  # type: ignore[attr-defined]
    assert refused(book.redeem_refresh, "cr1.ann.1.sig", 300.0)[1] == "REFRESH_INVALID"


def test_password_change_revokes_refresh_tokens() -> None:
    book = accounts()
    book.sign_up("ann", "old password", 0.0)
    token, _ = book.issue_refresh("ann", 0.0)
    assert refused(book.change_password, "ann", "wrong password", "new password", 1.0)[1] == "BAD_CREDENTIALS"
    assert refused(book.change_password, "ann", "old password", "old password", 1.0)[1] == "WEAK_PASSWORD"
    book.change_password("ann", "old password", "new password", 2.0)
    assert refused(book.verify_login, "ann", "old password", 3.0)[1] == "BAD_CREDENTIALS"
    assert book.verify_login("ann", "new password", 3.0).player_id == "ann"
    assert refused(book.redeem_refresh, token, 3.0)[1] == "REFRESH_INVALID"


@pytest.mark.parametrize(
    ("peer", "address"),
    [
        ("ipv4:127.0.0.1:51234", "ipv4:127.0.0.1"),
        ("ipv6:[::1]:51234", "ipv6:[::1]"),
        ("unix:/tmp/socket", "unix:/tmp/socket"),
        ("ipv4:10.0.0.1", "ipv4:10.0.0.1"),
    ],
)
def test_address_of_a_peer_drops_the_port(peer: str, address: str) -> None:
    assert address_of(peer) == address


def test_limits_per_connection_per_address_per_player() -> None:
    now = [0.0]

    def bucket(rate: float, burst: float) -> RateLimiter:
        return RateLimiter(rate, burst, clock=lambda: now[0])

    limits = Limits(bucket(1, 3), bucket(1, 5), bucket(1, 2), bucket(1, 1), bucket(1, 1))

    def check(peer: str, player: str = "") -> Refusal | None:
        return limits.check(peer, address_of(peer), player)

    a, b, c = "ipv4:1.1.1.1:1", "ipv4:1.1.1.1:2", "ipv4:1.1.1.1:3"
    assert [check(a) for _ in range(3)] == [None, None, None]
    refusal = check(a)
    assert refusal is not None and refusal.reason == "RATE_LIMITED"
    assert check(b) is None and check(b) is None  # another connection, same address: 5 in all
    refusal = check(c)
    assert refusal is not None and refusal.reason == "ADDRESS_RATE_LIMITED"
    assert check("ipv4:2.2.2.2:1", "ann") is None
    assert check("ipv4:3.3.3.3:1", "ann") is None
    refusal = check("ipv4:4.4.4.4:1", "ann")  # a third address, the same player
    assert refusal is not None and refusal.reason == "PLAYER_RATE_LIMITED"
    assert limits.check_signup("ipv4:1.1.1.1") is None
    refusal = limits.check_signup("ipv4:1.1.1.1")
    assert refusal is not None and refusal.reason == "SIGNUP_LIMITED" and "from your address" in refusal.message
    now[0] = 1.0
    assert limits.check_signup("ipv4:1.1.1.1") is None  # refilled


def test_stream_counter_caps_open_streams_per_player() -> None:
    streams = StreamCounter(cap=2)
    streams.opened("ann")
    assert streams.can_open("ann")
    streams.opened("ann")
    assert not streams.can_open("ann") and streams.can_open("bob")
    streams.closed("ann")
    assert streams.can_open("ann")
    streams.closed("ann")
    assert streams.open == {}
