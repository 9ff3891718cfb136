"""The gateway as a real process beside a real wallet and connection monitor (no dealer):
login and tokens, own-wallet-only balances, per-connection rate limit, Play stream basics
(auth, ping, actions before open or for another player) and heartbeats while it is open."""

from __future__ import annotations

import queue
import threading
import time
import uuid
from collections.abc import Iterator

import grpc
import pytest

from cardroom.v1 import (
    common_pb2,
    connection_monitor_pb2 as cm,
    connection_monitor_pb2_grpc as cm_grpc,
    dealer_pb2 as d,
    gateway_pb2 as g,
    gateway_pb2_grpc as g_grpc,
)
from gateway.tokens import issue
from tests.ports import free_port
from tests.services.conftest import make_wallet_env
from tests.services.procs import ServiceProcess, metric_value

SECRET = "gateway-test-secret"
OPERATOR = "gateway-test-operator-token"
GRANT = 50_000


@pytest.fixture(scope="module")
def stack(request, kafka) -> Iterator[dict]:
    wallet = ServiceProcess("wallet", make_wallet_env(request, "sqlite", kafka)).start()
    monitor = ServiceProcess(
        "connection_monitor", {"KAFKA_BOOTSTRAP": "none", "CONNECTION_SILENCE_SECONDS": "1"}
    ).start()
    gateway = ServiceProcess(
        "gateway",
        {
            "GATEWAY_SECRET": SECRET,
            "WALLET_ADDR": wallet.address,
            "CONNECTION_MONITOR_ADDR": monitor.address,
            "DEALER_ADDR": f"127.0.0.1:{free_port()}",
            "GATEWAY_RATE": "20",
            "GATEWAY_BURST": "20",
            "GATEWAY_HEARTBEAT_SECONDS": "0.2",
            "GATEWAY_PLAY_MONEY_GRANT": str(GRANT),
            "GATEWAY_OPERATOR_TOKEN": OPERATOR,
            "GATEWAY_DEV_LOGIN": "1",
        },
    ).start()
    try:
        yield {"wallet": wallet, "monitor": monitor, "gateway": gateway}
    finally:
        for proc in (gateway, monitor, wallet):
            assert proc.stop() == 0


def _stub(stack) -> tuple[grpc.Channel, g_grpc.GatewayStub]:
    """A stub on its own connection (no subchannel shared with other channels)."""
    channel = grpc.insecure_channel(stack["gateway"].address, options=[("grpc.use_local_subchannel_pool", 1)])
    return channel, g_grpc.GatewayStub(channel)


def _auth(token: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {token}")]


def _code(call, request, **kw) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as err:
        call(request, timeout=10, **kw)
    return err.value.code()


def _player() -> str:
    return f"p{uuid.uuid4().hex[:8]}"


def test_login_grants_play_money_and_balance_is_own_only(stack) -> None:
    channel, stub = _stub(stack)
    with channel:
        alice, bob = _player(), _player()
        login = stub.Login(g.LoginRequest(player_id=alice), timeout=10)
        assert login.player_id == alice and login.token.startswith(f"cr1.{alice}.")
        assert time.time() < login.expires_at.seconds <= time.time() + 900  # short-lived (GATEWAY_TOKEN_TTL)
        assert login.refresh_token.startswith("crr1.")
        stub.Login(g.LoginRequest(player_id=alice), timeout=10)  # again: no second grant
        stub.Login(g.LoginRequest(player_id=bob), timeout=10)
        mine = stub.MyBalance(g.MyBalanceRequest(), timeout=10, metadata=_auth(login.token))
        assert {b.currency: b.balance for b in mine.balances} == {
            common_pb2.CURRENCY_CASH: 0,
            common_pb2.CURRENCY_PLAY: GRANT,
        }
        assert (
            stub.MyBalance(g.MyBalanceRequest(player_id=alice), timeout=10, metadata=_auth(login.token)).player_id
            == alice
        )
        assert (
            _code(stub.MyBalance, g.MyBalanceRequest(player_id=bob), metadata=_auth(login.token))
            == grpc.StatusCode.PERMISSION_DENIED
        )
        assert (
            _code(stub.Join, g.JoinRequest(table_id="t", buy_in=100, player_id=bob), metadata=_auth(login.token))
            == grpc.StatusCode.PERMISSION_DENIED
        )
        assert (
            _code(stub.Leave, g.LeaveRequest(table_id="t", player_id=bob), metadata=_auth(login.token))
            == grpc.StatusCode.PERMISSION_DENIED
        )


def test_missing_forged_and_expired_tokens_are_unauthenticated(stack) -> None:
    channel, stub = _stub(stack)
    with channel:
        alice = _player()
        assert _code(stub.Login, g.LoginRequest(player_id="bad id!")) == grpc.StatusCode.INVALID_ARGUMENT
        assert _code(stub.MyBalance, g.MyBalanceRequest()) == grpc.StatusCode.UNAUTHENTICATED
        assert (
            _code(stub.Lobby, g.LobbyRequest(), metadata=[("authorization", "Basic abc")])
            == grpc.StatusCode.UNAUTHENTICATED
        )
        forged = issue(b"not-the-secret", alice, int(time.time()) + 60)
        assert _code(stub.MyBalance, g.MyBalanceRequest(), metadata=_auth(forged)) == grpc.StatusCode.UNAUTHENTICATED
        expired = issue(SECRET.encode(), alice, int(time.time()) - 1)
        with pytest.raises(grpc.RpcError) as err:
            stub.MyBalance(g.MyBalanceRequest(), timeout=10, metadata=_auth(expired))
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED and "expired" in err.value.details()
        good = issue(SECRET.encode(), alice, int(time.time()) + 60)  # signed with the server's secret
        assert stub.MyBalance(g.MyBalanceRequest(), timeout=10, metadata=_auth(good)).player_id == alice
        with pytest.raises(grpc.RpcError) as err:
            list(stub.Play(iter([g.PlayRequest(ping=g.Ping())]), timeout=10))
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_dealer_down_is_unavailable(stack) -> None:
    channel, stub = _stub(stack)
    with channel:
        token = stub.Login(g.LoginRequest(player_id=_player()), timeout=10).token
        assert _code(stub.Lobby, g.LobbyRequest(), metadata=_auth(token)) == grpc.StatusCode.UNAVAILABLE


def test_rate_limit_is_per_connection(stack) -> None:
    time.sleep(1.2)  # earlier tests' connections refill
    channel, stub = _stub(stack)
    with channel:
        token = stub.Login(g.LoginRequest(player_id=_player()), timeout=10).token
        # All 40 at once: sent one after the other, on a loaded machine each call took long enough for
        # the bucket (20/s) to refill, and too few were refused.
        calls = [stub.MyBalance.future(g.MyBalanceRequest(), timeout=10, metadata=_auth(token)) for _ in range(40)]
        codes = []
        for call in calls:
            try:
                call.result()
                codes.append(grpc.StatusCode.OK)
            except grpc.RpcError as err:
                codes.append(err.code())
        assert codes.count(grpc.StatusCode.RESOURCE_EXHAUSTED) >= 10
        assert set(codes) == {grpc.StatusCode.OK, grpc.StatusCode.RESOURCE_EXHAUSTED}
        other, other_stub = _stub(stack)  # a new connection has a full bucket
        with other:
            other_stub.MyBalance(g.MyBalanceRequest(), timeout=10, metadata=_auth(token))
    assert metric_value(stack["gateway"].metrics(), "gateway_rate_limited_total") >= 10


class PlayStream:
    """A Play stream driven from a queue; events collected by a thread."""

    def __init__(self, stub: g_grpc.GatewayStub, token: str) -> None:
        self.requests: queue.Queue[g.PlayRequest | None] = queue.Queue()
        self.events: queue.Queue[g.PlayEvent] = queue.Queue()
        self.call = stub.Play(iter(self.requests.get, None), metadata=_auth(token))
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        try:
            for event in self.call:
                self.events.put(event)
        except grpc.RpcError:
            pass

    def send(self, **kind) -> None:
        self.requests.put(g.PlayRequest(request_id=uuid.uuid4().hex[:8], **kind))

    def next(self, timeout: float = 10) -> g.PlayEvent:
        return self.events.get(timeout=timeout)

    def close(self) -> None:
        self.requests.put(None)
        self.thread.join(10)


def test_play_stream_checks_and_heartbeats(stack) -> None:
    channel, stub = _stub(stack)
    player = _player()
    with channel, grpc.insecure_channel(stack["monitor"].address) as mch:
        monitor = cm_grpc.ConnectionMonitorStub(mch)
        token = stub.Login(g.LoginRequest(player_id=player), timeout=10).token
        play = PlayStream(stub, token)
        play.send(ping=g.Ping())
        assert play.next().WhichOneof("kind") == "pong"
        play.send(act=g.PlayAction(action=d.ACTION_TYPE_CHECK))
        err = play.next().error
        assert (err.code, err.message) == ("FAILED_PRECONDITION", "open a table first")
        play.send(act=g.PlayAction(action=d.ACTION_TYPE_CHECK, player_id="someone-else"))
        assert play.next().error.code == "PERMISSION_DENIED"
        play.send()
        assert play.next().error.code == "INVALID_ARGUMENT"
        time.sleep(0.5)
        state = monitor.GetConnection(cm.GetConnectionRequest(player_id=player), timeout=5)
        assert state.state == cm.CONNECTION_STATE_CONNECTED
        play.send(open=g.OpenTable(table_id="no-dealer"))  # the dealer is down: retried, stream stays
        play.send(ping=g.Ping())
        assert play.next().WhichOneof("kind") == "pong"
        play.close()
        deadline = time.monotonic() + 5
        while (
            monitor.GetConnection(cm.GetConnectionRequest(player_id=player), timeout=5).state
            != cm.CONNECTION_STATE_DISCONNECTED
        ):
            assert time.monotonic() < deadline, "closing the Play stream must stop the heartbeats"
            time.sleep(0.1)


def test_play_messages_over_the_rate_get_errors_and_the_stream_stays(stack) -> None:
    time.sleep(1.2)
    channel, stub = _stub(stack)
    with channel:
        token = stub.Login(g.LoginRequest(player_id=_player()), timeout=10).token
        play = PlayStream(stub, token)
        for _ in range(40):
            play.send(ping=g.Ping())
        kinds = [play.next().WhichOneof("kind") for _ in range(40)]
        assert kinds.count("pong") >= 15 and kinds.count("error") >= 10
        time.sleep(1.0)  # the bucket refills: the same stream works again
        play.send(ping=g.Ping())
        while (event := play.next()).WhichOneof("kind") == "error":
            assert event.error.code == "RESOURCE_EXHAUSTED"
        assert event.WhichOneof("kind") == "pong"
        play.close()


def test_errors_carry_the_reason_and_the_field(stack) -> None:
    """Issue 10: one error model — ErrorInfo with the reason, BadRequest with the field; a 20 KB
    id is still INVALID_ARGUMENT (the echoed value is clipped, the trailers stay small)."""
    from cardroom.runtime.errors import reason_of, violations_of

    channel, stub = _stub(stack)
    with channel:
        for bad in ("_alice", "a.b", "x" * 20_000):
            with pytest.raises(grpc.RpcError) as err:
                stub.Login(g.LoginRequest(player_id=bad), timeout=10)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, err.value.details()[:200]
            assert reason_of(err.value) == "INVALID_ID" and [v.field for v in violations_of(err.value)] == ["player_id"]
        with pytest.raises(grpc.RpcError) as err:
            stub.MyBalance(g.MyBalanceRequest(), timeout=10)
        assert reason_of(err.value) == "TOKEN_MISSING"
        token = stub.Login(g.LoginRequest(player_id=_player()), timeout=10).token
        with pytest.raises(grpc.RpcError) as err:
            stub.MyBalance(g.MyBalanceRequest(player_id="someone"), timeout=10, metadata=_auth(token))
        assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED and reason_of(err.value) == "OTHER_PLAYER"
        with pytest.raises(grpc.RpcError) as err:
            stub.Lobby(g.LobbyRequest(), timeout=10, metadata=_auth(token))  # no dealer: UNAVAILABLE passed on
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE


def test_operator_api_needs_the_operator_token_not_a_player_token(stack) -> None:
    """The bots' set-up (fund a player, create a table) goes through the gateway, behind the
    operator token: no token is UNAUTHENTICATED, a player's token PERMISSION_DENIED."""
    from cardroom.runtime.errors import reason_of

    channel = grpc.insecure_channel(stack["gateway"].address)
    with channel:
        operator, stub = g_grpc.GatewayOperatorStub(channel), g_grpc.GatewayStub(channel)
        player = _player()
        fund = g.FundPlayerRequest(
            player_id=player, currency=common_pb2.CURRENCY_CASH, amount=700, idempotency_key="k1"
        )
        token = stub.Login(g.LoginRequest(player_id=player), timeout=10).token
        assert _code(operator.FundPlayer, fund) == grpc.StatusCode.UNAUTHENTICATED
        assert (
            _code(operator.FundPlayer, fund, metadata=[("authorization", "Operator wrong")])
            == grpc.StatusCode.UNAUTHENTICATED
        )
        with pytest.raises(grpc.RpcError) as err:
            operator.FundPlayer(fund, timeout=10, metadata=_auth(token))
        assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED and reason_of(err.value) == "OPERATOR_ONLY"
        ops = [("authorization", f"Operator {OPERATOR}")]
        first = operator.FundPlayer(fund, timeout=10, metadata=ops)
        again = operator.FundPlayer(fund, timeout=10, metadata=ops)
        assert (first.account_id, first.balance, first.replayed) == (f"player_cash:{player}:cash", 700, False)
        assert (again.balance, again.replayed) == (700, True)
        balances = stub.MyBalance(g.MyBalanceRequest(), timeout=10, metadata=_auth(token))
        assert {b.currency: b.balance for b in balances.balances}[common_pb2.CURRENCY_CASH] == 700
        for bad, field in (
            (
                g.FundPlayerRequest(player_id="_x", currency=common_pb2.CURRENCY_PLAY, amount=1, idempotency_key="k"),
                "player_id",
            ),
            (
                g.FundPlayerRequest(player_id=player, currency=common_pb2.CURRENCY_PLAY, amount=0, idempotency_key="k"),
                "amount",
            ),
            (g.FundPlayerRequest(player_id=player, amount=1, idempotency_key="k"), "currency"),
            (g.FundPlayerRequest(player_id=player, currency=common_pb2.CURRENCY_PLAY, amount=1), "idempotency_key"),
        ):
            with pytest.raises(grpc.RpcError) as err:
                operator.FundPlayer(bad, timeout=10, metadata=ops)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and err.value.details().startswith(f"{field}:")
        table = d.CreateTableRequest(table_id="op-t", config=d.TableConfig(variant="NT"))
        assert _code(operator.CreateTable, table, metadata=_auth(token)) == grpc.StatusCode.PERMISSION_DENIED
        assert _code(operator.CreateTable, table, metadata=ops) == grpc.StatusCode.UNAVAILABLE  # no dealer here
