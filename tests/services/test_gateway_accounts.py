"""Issue 14 items 2 and 3 against the real gateway process (beside a real wallet; no dealer).

Item 2, "Passwordless login while cash tables are live. Accounts with passwords: sign-up, password
hashed with argon2id, login returning the signed token, password change, lockout and rate limit on
failed logins; tokens short-lived with refresh; the development login only behind an explicit flag".

Item 3, "Rate limits are per connection only: 50 connections got 6,000/6,000 calls through; 600 logins
in 2 s created 1,200 accounts and 60M play chips; one player held 300 Play streams. Add per-player and
per-address limits, a cap on concurrent streams per player, sign-up and play-money grant limits."

Each gateway here runs without GATEWAY_DEV_LOGIN (the production set-up for logins)."""

from __future__ import annotations

import asyncio
import os
import queue
import secrets
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest

from cardroom.runtime.errors import reason_of
from cardroom.v1 import common_pb2, gateway_pb2 as g, gateway_pb2_grpc as g_grpc, wallet_pb2 as w, wallet_pb2_grpc
from gateway.account_store import AccountStore
from gateway.tokens import issue
from tests.fast.gateway.test_accounts import AccountStoreContract
from tests.ports import free_port
from tests.services.conftest import make_wallet_env
from tests.services.procs import ServiceProcess, metric_value

SECRET = "gateway-accounts-test-secret"
GRANT = 1_000
PASSWORD = "correct horse battery"


def _gateway_env(wallet: ServiceProcess, **extra: str) -> dict[str, str]:
    return {
        "GATEWAY_SECRET": SECRET,
        "WALLET_ADDR": wallet.address,
        "DEALER_ADDR": f"127.0.0.1:{free_port()}",  # no dealer: Play streams wait for it
        "CONNECTION_MONITOR_ADDR": "off",
        "GATEWAY_PLAY_MONEY_GRANT": str(GRANT),
        "GATEWAY_ARGON2_MEMORY_KIB": "8192",  # still argon2id; less memory per hash on a shared test box
        "GATEWAY_ADDRESS_RATE": "100000",
        "GATEWAY_ADDRESS_BURST": "100000",
        **extra,
    }


@pytest.fixture(scope="module")
def wallet(request, kafka) -> Iterator[ServiceProcess]:
    proc = ServiceProcess("wallet", make_wallet_env(request, "sqlite", kafka)).start()
    try:
        yield proc
    finally:
        assert proc.stop() == 0


@pytest.fixture(scope="module")
def gateway(wallet: ServiceProcess) -> Iterator[ServiceProcess]:
    """Logins: 3 wrong passwords lock for 3 s, access tokens live 6 s; sign-ups unlimited here."""
    env = _gateway_env(
        wallet,
        GATEWAY_LOGIN_MAX_FAILURES="3",
        GATEWAY_LOCKOUT_SECONDS="3",
        GATEWAY_TOKEN_TTL="6",
        GATEWAY_SIGNUP_BURST="1000",
        GATEWAY_LOGIN_BURST="1000",
        GATEWAY_GRANTS_PER_ADDRESS_DAY="1000",
    )
    proc = ServiceProcess("gateway", env).start()
    try:
        yield proc
    finally:
        assert proc.stop() == 0


def _stub(proc: ServiceProcess) -> tuple[grpc.Channel, g_grpc.GatewayStub]:
    """A stub on its own connection (no subchannel shared with other channels)."""
    channel = grpc.insecure_channel(proc.address, options=[("grpc.use_local_subchannel_pool", 1)])
    return channel, g_grpc.GatewayStub(channel)


def _auth(token: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {token}")]


def _refused(call, request, **kw) -> tuple[grpc.StatusCode, str, str]:
    with pytest.raises(grpc.RpcError) as err:
        call(request, timeout=20, **kw)
    return err.value.code(), reason_of(err.value), err.value.details() or ""


def _player() -> str:
    return f"p{uuid.uuid4().hex[:8]}"


def _play_balance(stub: g_grpc.GatewayStub, token: str) -> int:
    balances = stub.MyBalance(g.MyBalanceRequest(), timeout=10, metadata=_auth(token)).balances
    return {b.currency: b.balance for b in balances}[common_pb2.CURRENCY_PLAY]


# ---------------------------------------------------------------------------------------- item 2


def test_sign_up_then_log_in_with_the_password(gateway: ServiceProcess) -> None:
    channel, stub = _stub(gateway)
    player = _player()
    with channel:
        signed = stub.SignUp(g.SignUpRequest(player_id=player, password=PASSWORD), timeout=20)
        assert signed.player_id == player and signed.granted and signed.refresh_token.startswith("crr1.")
        assert _play_balance(stub, signed.token) == GRANT
        login = stub.Login(g.LoginRequest(player_id=player, password=PASSWORD), timeout=20)
        assert login.token != signed.token or login.refresh_token != signed.refresh_token
        assert stub.MyBalance(g.MyBalanceRequest(), timeout=10, metadata=_auth(login.token)).player_id == player
        assert _play_balance(stub, login.token) == GRANT  # logging in again grants nothing

        wrong = _refused(stub.Login, g.LoginRequest(player_id=player, password="not the password"))
        unknown = _refused(stub.Login, g.LoginRequest(player_id=_player(), password=PASSWORD))
        assert wrong[:2] == unknown[:2] == (grpc.StatusCode.UNAUTHENTICATED, "BAD_CREDENTIALS")
        assert wrong[2] == unknown[2]  # no telling which ids exist

        taken = _refused(stub.SignUp, g.SignUpRequest(player_id=player, password="another password"))
        assert taken[:2] == (grpc.StatusCode.ALREADY_EXISTS, "PLAYER_TAKEN")
        weak = _refused(stub.SignUp, g.SignUpRequest(player_id=_player(), password="short"))
        assert weak[:2] == (grpc.StatusCode.INVALID_ARGUMENT, "WEAK_PASSWORD")


def test_the_password_is_stored_as_an_argon2id_hash(gateway: ServiceProcess) -> None:
    channel, stub = _stub(gateway)
    player = _player()
    with channel:
        stub.SignUp(g.SignUpRequest(player_id=player, password=PASSWORD), timeout=20)
    db = sqlite3.connect(gateway.data_dir / "accounts.sqlite3")
    try:
        (stored,) = db.execute("SELECT password_hash FROM accounts WHERE player_id = ?", (player,)).fetchone()
        tokens = db.execute("SELECT token_hash FROM refresh_tokens WHERE player_id = ?", (player,)).fetchall()
    finally:
        db.close()
    assert stored.startswith("$argon2id$") and PASSWORD not in stored
    assert tokens and all(len(t) == 64 and not t.startswith("crr1.") for (t,) in tokens)  # SHA-256, not the token


def test_development_login_is_refused_without_the_flag(gateway: ServiceProcess, wallet: ServiceProcess) -> None:
    """The old passwordless Login: without GATEWAY_DEV_LOGIN it logs no one in and opens nothing."""
    channel, stub = _stub(gateway)
    player = _player()
    with channel:
        code, reason, message = _refused(stub.Login, g.LoginRequest(player_id=player))
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "DEV_LOGIN_OFF") and "password" in message
    with grpc.insecure_channel(wallet.address) as wallet_channel:
        wallet_stub = wallet_pb2_grpc.WalletStub(wallet_channel)
        with pytest.raises(grpc.RpcError) as err:
            wallet_stub.GetBalance(w.GetBalanceRequest(account_id=f"player_play:{player}:play"), timeout=10)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND


def test_wrong_passwords_lock_the_account_then_it_opens_again(gateway: ServiceProcess) -> None:
    channel, stub = _stub(gateway)
    player = _player()
    with channel:
        stub.SignUp(g.SignUpRequest(player_id=player, password=PASSWORD), timeout=20)
        bad = g.LoginRequest(player_id=player, password="guess one")
        assert _refused(stub.Login, bad)[1] == "BAD_CREDENTIALS"
        assert _refused(stub.Login, bad)[1] == "BAD_CREDENTIALS"
        third = _refused(stub.Login, bad)
        assert third[:2] == (grpc.StatusCode.RESOURCE_EXHAUSTED, "ACCOUNT_LOCKED") and "locked" in third[2]
        right = g.LoginRequest(player_id=player, password=PASSWORD)
        assert _refused(stub.Login, right)[:2] == (grpc.StatusCode.RESOURCE_EXHAUSTED, "ACCOUNT_LOCKED")
        time.sleep(3.5)  # GATEWAY_LOCKOUT_SECONDS=3
        assert stub.Login(right, timeout=20).player_id == player
        assert _refused(stub.Login, bad)[1] == "BAD_CREDENTIALS"  # the count starts again


def test_access_tokens_are_short_lived_and_refresh_renews_them(gateway: ServiceProcess) -> None:
    channel, stub = _stub(gateway)
    player = _player()
    with channel:
        first = stub.SignUp(g.SignUpRequest(player_id=player, password=PASSWORD), timeout=20)
        assert first.expires_at.seconds - time.time() <= 6
        time.sleep(6.5)  # GATEWAY_TOKEN_TTL=6
        expired = _refused(stub.MyBalance, g.MyBalanceRequest(), metadata=_auth(first.token))
        assert expired[:2] == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_INVALID") and "expired" in expired[2]

        second = stub.Refresh(g.RefreshRequest(refresh_token=first.refresh_token), timeout=10)
        assert second.player_id == player and second.refresh_token != first.refresh_token
        assert stub.MyBalance(g.MyBalanceRequest(), timeout=10, metadata=_auth(second.token)).player_id == player

        # The used refresh token again (a thief replaying it): refused, and the player's newer one dies too.
        replay = _refused(stub.Refresh, g.RefreshRequest(refresh_token=first.refresh_token))
        assert replay[:2] == (grpc.StatusCode.UNAUTHENTICATED, "REFRESH_INVALID")
        revoked = _refused(stub.Refresh, g.RefreshRequest(refresh_token=second.refresh_token))
        assert revoked[:2] == (grpc.StatusCode.UNAUTHENTICATED, "REFRESH_INVALID")
        forged = _refused(stub.Refresh, g.RefreshRequest(refresh_token="crr1." + secrets.token_urlsafe(32)))
        assert forged[:2] == (grpc.StatusCode.UNAUTHENTICATED, "REFRESH_INVALID")


def test_password_change(gateway: ServiceProcess) -> None:
    channel, stub = _stub(gateway)
    player = _player()
    new = "a much better passphrase"
    with channel:
        first = stub.SignUp(g.SignUpRequest(player_id=player, password=PASSWORD), timeout=20)
        meta = _auth(first.token)
        wrong = _refused(
            stub.ChangePassword, g.ChangePasswordRequest(old_password="nope nope", new_password=new), metadata=meta
        )
        assert wrong[:2] == (grpc.StatusCode.UNAUTHENTICATED, "BAD_CREDENTIALS")
        weak = _refused(
            stub.ChangePassword, g.ChangePasswordRequest(old_password=PASSWORD, new_password="tiny"), metadata=meta
        )
        assert weak[:2] == (grpc.StatusCode.INVALID_ARGUMENT, "WEAK_PASSWORD")
        anonymous = _refused(stub.ChangePassword, g.ChangePasswordRequest(old_password=PASSWORD, new_password=new))
        assert anonymous[0] == grpc.StatusCode.UNAUTHENTICATED

        changed = stub.ChangePassword(
            g.ChangePasswordRequest(old_password=PASSWORD, new_password=new), timeout=20, metadata=meta
        )
        assert changed.player_id == player
        old = _refused(stub.Login, g.LoginRequest(player_id=player, password=PASSWORD))
        assert old[:2] == (grpc.StatusCode.UNAUTHENTICATED, "BAD_CREDENTIALS")
        assert stub.Login(g.LoginRequest(player_id=player, password=new), timeout=20).player_id == player
        # refresh tokens from before the change are revoked; the one the change returned works
        assert _refused(stub.Refresh, g.RefreshRequest(refresh_token=first.refresh_token))[1] == "REFRESH_INVALID"
        assert stub.Refresh(g.RefreshRequest(refresh_token=changed.refresh_token), timeout=10).player_id == player


def test_accounts_survive_a_gateway_kill(wallet: ServiceProcess) -> None:
    """The accounts live in $DATA_DIR/accounts.sqlite3: a kill -9 and a restart forget none."""
    first = ServiceProcess("gateway", _gateway_env(wallet)).start()
    player = _player()
    try:
        channel, stub = _stub(first)
        with channel:
            signed = stub.SignUp(g.SignUpRequest(player_id=player, password=PASSWORD), timeout=20)
    finally:
        first.kill()
    again = ServiceProcess(
        "gateway",
        _gateway_env(wallet),
        grpc_port=first.grpc_port,
        metrics_port=first.metrics_port,
        data_dir=first.data_dir,
    ).start()
    try:
        channel, stub = _stub(again)
        with channel:
            assert stub.Login(g.LoginRequest(player_id=player, password=PASSWORD), timeout=20).player_id == player
            assert stub.Refresh(g.RefreshRequest(refresh_token=signed.refresh_token), timeout=10).player_id == player
            taken = _refused(stub.SignUp, g.SignUpRequest(player_id=player, password="someone else's"))
            assert taken[1] == "PLAYER_TAKEN"
    finally:
        assert again.stop() == 0


def test_production_mode_refuses_the_development_login() -> None:
    env = {
        "CARDROOM_MODE": "production",
        "GATEWAY_SECRET": secrets.token_hex(32),
        "GATEWAY_DEV_LOGIN": "1",
        "DEALER_ADDR": "127.0.0.1:1",
        "WALLET_ADDR": "127.0.0.1:1",
        "CONNECTION_MONITOR_ADDR": "",
    }
    proc = ServiceProcess("gateway", env, tls=True)
    with pytest.raises(RuntimeError, match="exited") as err:
        proc.start(timeout=30)
    assert "GATEWAY_DEV_LOGIN" in str(err.value) and "production" in str(err.value)


# ---------------------------------------------------------------------------------------- item 3


@pytest.fixture(scope="module")
def flood_gateway(wallet: ServiceProcess) -> Iterator[ServiceProcess]:
    """The default per-player limit (20 calls/s, burst 40) and Play stream cap (4); 5 sign-ups and
    3 grants per address; 10 password attempts per address."""
    env = _gateway_env(
        wallet,
        GATEWAY_SIGNUP_BURST="5",
        GATEWAY_SIGNUP_RATE="0.0001",
        GATEWAY_GRANTS_PER_ADDRESS_DAY="3",
        GATEWAY_LOGIN_BURST="10",
        GATEWAY_LOGIN_RATE="0.0001",
        GATEWAY_RATE="1000",
        GATEWAY_BURST="1000",
    )
    proc = ServiceProcess("gateway", env).start()
    try:
        yield proc
    finally:
        assert proc.stop() == 0


def _outcome(call) -> str:
    try:
        call()
        return "OK"
    except grpc.RpcError as err:
        return f"{err.code().name}/{reason_of(err)}"


@pytest.mark.slow
def test_a_sign_up_flood_from_one_address_makes_5_accounts_and_3_grants(flood_gateway: ServiceProcess) -> None:
    """600 sign-ups at once from one address (the attack made 1,200 accounts and 60M play chips)."""
    players = [_player() for _ in range(600)]
    channel, stub = _stub(flood_gateway)
    with channel, ThreadPoolExecutor(20) as pool:
        replies: list[g.LoginResponse | str] = []

        def sign_up(player: str) -> g.LoginResponse | str:
            try:
                return stub.SignUp(g.SignUpRequest(player_id=player, password=PASSWORD), timeout=60)
            except grpc.RpcError as err:
                return f"{err.code().name}/{reason_of(err)}"

        replies = list(pool.map(sign_up, players))
        made = [r for r in replies if isinstance(r, g.LoginResponse)]
        refused = [r for r in replies if isinstance(r, str)]
        assert len(made) == 5
        assert set(refused) == {"RESOURCE_EXHAUSTED/SIGNUP_LIMITED"} and len(refused) == 595
        assert sorted(r.granted for r in made) == [False, False, True, True, True]
        assert sum(_play_balance(stub, r.token) for r in made) == 3 * GRANT
        limited = _refused(stub.SignUp, g.SignUpRequest(player_id=_player(), password=PASSWORD))
        assert "too many sign-ups from your address" in limited[2]


def test_password_guessing_from_one_address_is_limited(flood_gateway: ServiceProcess) -> None:
    """Failed logins are limited per address as well as per account: spreading guesses over many
    accounts (each below its lockout) stops after GATEWAY_LOGIN_BURST attempts."""
    channel, stub = _stub(flood_gateway)
    with channel:
        outcomes = [
            _outcome(lambda: stub.Login(g.LoginRequest(player_id=_player(), password="guess guess"), timeout=20))
            for _ in range(30)
        ]
    assert outcomes[:10] == ["UNAUTHENTICATED/BAD_CREDENTIALS"] * 10
    assert outcomes[10:] == ["RESOURCE_EXHAUSTED/LOGIN_LIMITED"] * 20


def test_one_player_over_50_connections_is_limited_per_player(flood_gateway: ServiceProcess) -> None:
    """50 connections x 120 calls with one token: the attack got 6,000 of 6,000 through."""
    token = issue(SECRET.encode(), _player(), int(time.time()) + 600)

    def connection(_: int) -> list[str]:
        channel, stub = _stub(flood_gateway)
        with channel:
            return [
                _outcome(lambda: stub.MyBalance(g.MyBalanceRequest(), timeout=20, metadata=_auth(token)))
                for _ in range(120)
            ]

    with ThreadPoolExecutor(50) as pool:
        outcomes = [o for batch in pool.map(connection, range(50)) for o in batch]
    assert len(outcomes) == 6000
    assert set(outcomes) == {"OK", "RESOURCE_EXHAUSTED/PLAYER_RATE_LIMITED"}
    # burst 40 + 20/s: fewer than half get through unless the 6,000 calls took over two minutes
    assert outcomes.count("RESOURCE_EXHAUSTED/PLAYER_RATE_LIMITED") >= 3000


class _Stream:
    """A Play stream that sends nothing until closed; its end (status or first error event) is kept."""

    def __init__(self, stub: g_grpc.GatewayStub, token: str) -> None:
        self.requests: queue.Queue = queue.Queue()
        self.call = stub.Play(iter(self.requests.get, None), metadata=_auth(token), timeout=120)
        self.events: list[g.PlayEvent] = []
        self.status: grpc.StatusCode | None = None
        self.reason = ""
        self.done = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for event in self.call:
                self.events.append(event)
        except grpc.RpcError as err:
            self.status, self.reason = err.code(), reason_of(err)
        else:
            self.status = grpc.StatusCode.OK
        self.done.set()

    def close(self) -> None:
        self.requests.put(None)
        self.call.cancel()


def test_one_player_cannot_hold_300_play_streams(flood_gateway: ServiceProcess) -> None:
    """300 Play streams of one player at once: never more than the cap (4) open; most are refused at
    once (RESOURCE_EXHAUSTED: the per-player limit, or PLAY_STREAM_LIMIT), the rest are taken over
    by a newer one (SESSION_TAKEN_OVER)."""
    player = _player()
    token = issue(SECRET.encode(), player, int(time.time()) + 600)
    channels = [_stub(flood_gateway) for _ in range(30)]  # 10 streams per connection
    streams: list[_Stream] = []
    gauge = []
    try:
        started = time.monotonic()
        for i in range(300):
            streams.append(_Stream(channels[i % 30][1], token))
            if i % 50 == 49:
                gauge.append(metric_value(flood_gateway.metrics(), "gateway_play_streams"))
        opening = time.monotonic() - started
        deadline = time.monotonic() + 60
        while sum(not s.done.is_set() for s in streams) > 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        gauge.append(metric_value(flood_gateway.metrics(), "gateway_play_streams"))
        assert max(gauge) <= 4
        open_now = [s for s in streams if not s.done.is_set()]
        assert len(open_now) == 1  # the newest session
        ended = [s for s in streams if s.done.is_set()]
        refused = [s for s in ended if s.status == grpc.StatusCode.RESOURCE_EXHAUSTED]
        taken_over = [s for s in ended if s.events and s.events[0].error.reason == "SESSION_TAKEN_OVER"]
        assert len(refused) + len(taken_over) == len(ended) == 299
        assert {s.reason for s in refused} <= {"PLAY_STREAM_LIMIT", "PLAYER_RATE_LIMITED"}
        # the player's bucket (burst 40, 20/s) let through at most 40 + 20/s of the opening time (and
        # what arrived while the last ones were still on the way: one more second); the rest refused
        assert len(refused) >= 300 - (40 + 20 * (opening + 1)), (len(refused), opening)
    finally:
        for s in streams:
            s.close()
        for channel, _ in channels:
            channel.close()


@pytest.fixture(scope="module")
def address_gateway(wallet: ServiceProcess) -> Iterator[ServiceProcess]:
    env = _gateway_env(wallet, GATEWAY_ADDRESS_RATE="5", GATEWAY_ADDRESS_BURST="100")
    proc = ServiceProcess("gateway", env).start()
    try:
        yield proc
    finally:
        assert proc.stop() == 0


def test_many_players_from_one_address_are_limited_per_address(address_gateway: ServiceProcess) -> None:
    """50 players, each on his own connection and within his own limits (30 calls), from one address."""

    def player(_: int) -> list[str]:
        token = issue(SECRET.encode(), _player(), int(time.time()) + 600)
        channel, stub = _stub(address_gateway)
        with channel:
            return [
                _outcome(lambda: stub.MyBalance(g.MyBalanceRequest(), timeout=20, metadata=_auth(token)))
                for _ in range(30)
            ]

    started = time.monotonic()
    with ThreadPoolExecutor(50) as pool:
        outcomes = [o for batch in pool.map(player, range(50)) for o in batch]
    took = time.monotonic() - started
    assert set(outcomes) == {"OK", "RESOURCE_EXHAUSTED/ADDRESS_RATE_LIMITED"}
    # the address's bucket (burst 100, 5/s) let through at most 100 + 5/s of the time the calls took
    assert outcomes.count("OK") <= 100 + 5 * (took + 1), (outcomes.count("OK"), took)
    # sign-ups from that address draw on the same bucket: 30 at once (one at a time, the bucket's
    # 5/s refill kept up with them on a loaded machine)
    channel, stub = _stub(address_gateway)
    with channel:
        calls = [
            stub.SignUp.future(g.SignUpRequest(player_id=_player(), password=PASSWORD), timeout=20) for _ in range(30)
        ]
        messages = []
        for call in calls:
            try:
                call.result()
            except grpc.RpcError as err:
                messages.append(err.details() or "")
    assert any("from one address" in m for m in messages), messages[:3]


# ---------------------------------------------------------------------------------------- the client


def test_the_client_keeps_its_access_token_fresh(gateway: ServiceProcess) -> None:
    """GatewayClient refreshes the 6-second access token in the background: calls keep working."""
    from cardroom.client.connection import GatewayClient

    async def main() -> None:
        client = GatewayClient(gateway.address)
        try:
            await client.sign_up(_player(), PASSWORD)
            first = client.token
            await asyncio.sleep(8)  # longer than GATEWAY_TOKEN_TTL=6
            assert client.token != first
            assert (await client.balances()).player_id == client.player_id
        finally:
            await client.close()

    asyncio.run(main())


def _cardroom_play(gateway: ServiceProcess, *args: str, password: str | None = None) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k != "CARDROOM_PASSWORD"}
    if password is not None:
        env["CARDROOM_PASSWORD"] = password
    done = subprocess.run(
        [sys.executable, "-m", "cardroom.cli.main", "play", "--gateway", gateway.address, *args],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    return done.returncode, done.stdout + done.stderr


@pytest.mark.slow
def test_cardroom_play_signs_up_and_logs_in_with_a_password(gateway: ServiceProcess) -> None:
    player = _player()
    # no dealer behind this gateway: the lobby is unavailable, after the login
    code, out = _cardroom_play(gateway, "--player", player, "--signup", password=PASSWORD)
    assert f"signed up as {player} (play-money grant deposited)" in out and f"logged in as {player}" in out
    code, out = _cardroom_play(gateway, "--player", player, "--password", PASSWORD)
    assert f"logged in as {player}" in out and "signed up" not in out
    code, out = _cardroom_play(gateway, "--player", player, "--password", "not my password")
    assert code == 1 and "wrong player id or password" in out and "logged in" not in out
    code, out = _cardroom_play(gateway, "--player", _player())
    assert code == 1 and "development login is off" in out


# ---------------------------------------------------------------------------------------- PostgreSQL


class TestPostgresAccountStore(AccountStoreContract):
    """The store contract of the fast tier, on a real PostgreSQL (what replicated gateways share)."""

    @pytest.fixture
    def store(self, postgres) -> Iterator[AccountStore]:
        from gateway.account_store_postgresql import PostgresAccountStore

        store = PostgresAccountStore(postgres.create_database(f"gateway_{uuid.uuid4().hex[:8]}"))
        yield store
        store.close()
