"""Dealer test stack: wallet (SQLite) + dealer as real processes on fresh Kafka topics, and
small helpers to drive tables (accounts, a random-legal-action player, Watch collectors)."""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import grpc
import pytest
from google.protobuf.message import Message
from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from cardroom.runtime.events import decode_envelope
from cardroom.v1 import common_pb2, dealer_pb2 as d, dealer_pb2_grpc, wallet_pb2 as w, wallet_pb2_grpc
from tests.kafka_read import records_so_far
from tests.services.procs import ServiceProcess, wait_for_topics

AK = w.AccountKind
TK = w.TransferKind


@dataclass
class DealerStack:
    """The processes and topics of one dealer test module."""

    run: str
    topics: dict[str, str]
    wallet: ServiceProcess
    dealer: ServiceProcess
    dealer_env: dict[str, str]
    kafka_bootstrap: str
    monitor: ServiceProcess
    channels: list[grpc.Channel] = field(default_factory=list)

    def dealer_stub(self) -> dealer_pb2_grpc.DealerStub:
        channel = grpc.insecure_channel(self.dealer.address)
        self.channels.append(channel)
        return dealer_pb2_grpc.DealerStub(channel)

    def wallet_stub(self) -> wallet_pb2_grpc.WalletStub:
        channel = grpc.insecure_channel(self.wallet.address)
        self.channels.append(channel)
        return wallet_pb2_grpc.WalletStub(channel)

    def restart_dealer(self, kill: bool = True) -> None:
        """kill -9 (or SIGTERM) the dealer and start a new process on the same ports and topics."""
        old = self.dealer
        old.kill() if kill else old.stop()
        self.dealer = ServiceProcess(
            "dealer", self.dealer_env, grpc_port=old.grpc_port, metrics_port=old.metrics_port, data_dir=old.data_dir
        ).start()


def create_topics(bootstrap: str, topics: dict[str, str]) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics(
            [
                NewTopic(name, 3, 1, topic_configs={"cleanup.policy": "compact"} if kind == "snapshots" else {})
                for kind, name in topics.items()
            ],
            timeout_ms=30_000,
        )
    finally:
        admin.close()
    wait_for_topics(bootstrap, {name: 3 for name in topics.values()})


@pytest.fixture(scope="module")
def dealer_stack(kafka, evaluator) -> Iterator[DealerStack]:
    run = uuid.uuid4().hex[:8]
    topics = {kind: f"test.{kind}.{run}" for kind in ("events", "records", "settled", "snapshots", "connections")}
    create_topics(kafka.bootstrap, topics)
    wallet = ServiceProcess(
        "wallet",
        {
            "KAFKA_BOOTSTRAP": kafka.bootstrap,
            "WALLET_HANDS_TOPIC": topics["settled"],
            "WALLET_LEDGER_TOPIC": f"test.ledger.{run}",
            "WALLET_CONSUMER_GROUP": f"wallet-{run}",
            "WALLET_RELAY_INTERVAL": "0.2",
        },
    ).start()
    monitor = ServiceProcess(
        "connection_monitor",
        {
            "KAFKA_BOOTSTRAP": kafka.bootstrap,
            "CONNECTION_EVENTS_TOPIC": topics["connections"],
            "CONNECTION_SILENCE_SECONDS": "1.0",
        },
    ).start()
    env = {
        "KAFKA_BOOTSTRAP": kafka.bootstrap,
        "WALLET_ADDR": wallet.address,
        "EVALUATOR_ADDR": evaluator.address,
        "CONNECTION_MONITOR_ADDR": monitor.address,
        "DEALER_CONNECTION_TOPIC": topics["connections"],
        "DEALER_EVENTS_TOPIC": topics["events"],
        "DEALER_RECORDS_TOPIC": topics["records"],
        "DEALER_SETTLED_TOPIC": topics["settled"],
        "DEALER_SNAPSHOTS_TOPIC": topics["snapshots"],
    }
    dealer = ServiceProcess("dealer", env).start()
    stack = DealerStack(run, topics, wallet, dealer, env, kafka.bootstrap, monitor)
    try:
        yield stack
    finally:
        for channel in stack.channels:
            channel.close()
        stack.dealer.stop()
        monitor.stop()
        wallet.stop()


# ---------------------------------------------------------------------- wallet helpers


def player_account(stub: wallet_pb2_grpc.WalletStub, player: str, amount: int) -> str:
    """Open a cash account for ``player`` and deposit ``amount``; returns the account id."""
    account = stub.OpenAccount(
        w.OpenAccountRequest(kind=AK.ACCOUNT_KIND_PLAYER_CASH, owner=player), timeout=10
    ).account.account_id
    if amount:
        stub.Deposit(w.DepositRequest(account_id=account, amount=amount, idempotency_key=f"dep:{player}"), timeout=10)
    return account


def balance(stub: wallet_pb2_grpc.WalletStub, account: str) -> int:
    return stub.GetBalance(w.GetBalanceRequest(account_id=account), timeout=10).balance


def wait_for(predicate, timeout: float = 20.0, interval: float = 0.1, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(interval)


# ---------------------------------------------------------------------- table helpers


def nl_config(name: str = "test", **kw) -> d.TableConfig:
    config = d.TableConfig(
        name=name,
        variant="NT",
        currency=common_pb2.CURRENCY_CASH,
        seats=6,
        stakes=d.Stakes(small_blind=5, big_blind=10),
        min_buy_in=200,
        max_buy_in=2000,
        rake=d.RakeSettings(kind=d.RakeSettings.KIND_PERCENT, basis_points=500, cap=30, step=1),
        clock=d.ClockSettings(action_seconds=10),
        hand_pause_seconds=0.05,
    )
    for key, value in kw.items():
        if isinstance(value, Message):
            getattr(config, key).CopyFrom(value)
        else:
            setattr(config, key, value)
    return config


def play_until(
    stub: dealer_pb2_grpc.DealerStub,
    table_id: str,
    hands: int,
    rng: random.Random,
    timeout: float = 60.0,
    stop_mid_hand: int | None = None,
) -> d.TableState:
    """Act for whoever is on turn with random legal actions until ``hands`` hands are dealt
    (and the last is over), or — with ``stop_mid_hand`` — return in the middle of that hand
    after at least one voluntary action."""
    deadline = time.monotonic() + timeout
    acted_in: dict[int, int] = {}
    while time.monotonic() < deadline:
        state = stub.GetTable(d.GetTableRequest(table_id=table_id), timeout=5)
        if (
            stop_mid_hand is not None
            and state.in_hand
            and state.hand_number == stop_mid_hand
            and acted_in.get(stop_mid_hand, 0) >= 1
            and state.HasField("to_act")
        ):
            return state
        if not state.in_hand and state.info.hands_dealt >= hands and stop_mid_hand is None:
            return state
        if not state.in_hand or not state.HasField("to_act"):
            time.sleep(0.01)
            continue
        to_act = state.to_act
        request = random_action(to_act, rng, state, table_id)
        try:
            stub.Act(request, timeout=5)
            acted_in[state.hand_number] = acted_in.get(state.hand_number, 0) + 1
        except grpc.RpcError as err:  # the clock or a racing state change: look again
            if err.code() != grpc.StatusCode.FAILED_PRECONDITION:
                raise
    raise AssertionError(f"table {table_id} did not reach hand {hands} in {timeout}s")


def pause_table(
    stub: dealer_pb2_grpc.DealerStub, table_id: str, players: list[str], rng: random.Random
) -> d.TableState:
    """Sit everyone out and play the hand in progress to its end: the table stands still."""
    for p in players:
        stub.SitOut(d.SeatCommandRequest(table_id=table_id, player_id=p), timeout=5)
    return play_until(stub, table_id, 0, rng)


def random_action(to_act: d.LegalActionsView, rng: random.Random, state: d.TableState, table_id: str) -> d.ActRequest:
    actions = list(to_act.actions)
    weights = {
        d.ACTION_TYPE_FOLD: 1,
        d.ACTION_TYPE_CHECK: 4,
        d.ACTION_TYPE_CALL: 4,
        d.ACTION_TYPE_BET: 2,
        d.ACTION_TYPE_RAISE: 1,
        d.ACTION_TYPE_BRING_IN: 2,
        d.ACTION_TYPE_COMPLETE: 1,
        d.ACTION_TYPE_DRAW: 1,
    }
    action = rng.choices(actions, [weights[a] for a in actions])[0]
    request = d.ActRequest(
        table_id=table_id,
        player_id=to_act.player_id,
        action=action,
        hand_number=state.hand_number,
        request_id=uuid.uuid4().hex,
    )
    if action in (d.ACTION_TYPE_BET, d.ACTION_TYPE_RAISE, d.ACTION_TYPE_COMPLETE):
        request.amount = rng.randint(to_act.min_to, min(to_act.max_to, to_act.min_to * 3))
    return request


class Watch:
    """A Watch stream read by a background thread into ``events``."""

    def __init__(self, address: str, table_id: str, viewer: str = "") -> None:
        self.channel = grpc.insecure_channel(address)
        self.stub = dealer_pb2_grpc.DealerStub(self.channel)
        self.viewer = viewer
        self.events: list[d.TableEvent] = []
        self.error: grpc.RpcError | None = None
        self.call = self.stub.Watch(d.WatchRequest(table_id=table_id, viewer_player_id=viewer))
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            for event in self.call:
                self.events.append(event)
        except grpc.RpcError as err:
            if err.code() != grpc.StatusCode.CANCELLED:
                self.error = err

    def close(self) -> None:
        self.call.cancel()
        self.thread.join(5)
        self.channel.close()


def read_topic(bootstrap: str, topic: str, message_type, linger_ms: int = 3000) -> list:
    """Every (envelope, payload) on ``topic`` from the beginning, then until ``linger_ms`` pass without one.
    Table events come in batches (a ``TableEventBatch`` per record): each event is its own pair."""
    out = []
    for record in records_so_far(bootstrap, topic, linger=linger_ms / 1000):
        envelope = decode_envelope(record.value)
        if message_type is d.TableEvent:
            batch = d.TableEventBatch()
            if envelope.payload.Unpack(batch):
                out.extend((envelope, event) for event in batch.events)
            continue
        payload = message_type()
        if envelope.payload.Unpack(payload):
            out.append((envelope, payload))
    return out
