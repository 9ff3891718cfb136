"""Every Cardroom service as its own process on fresh Kafka topics: evaluator, wallet, dealer,
connection monitor and gateway (the dealer can be killed with -9 and restarted in place).

Mutual TLS is on by default (``Stack.start(bootstrap, tls=False)`` opts out): every service has its
certificate from the session's PKI, the gateway's public port stays plain, and the harness's own
checks dial the internal services as the ``operator`` identity (:meth:`Stack.channel`).

``Stack.start(bootstrap, tournaments=True)`` adds the tournament service (the gateway's
``TOURNAMENT_ADDR``), paying through the same wallet; its tables are in-process, or on the dealer
with ``tournament_tables="dealer"`` (``TOURNAMENT_TABLES=dealer``: players act there through the
gateway's Play)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

import grpc

from cardroom.v1 import dealer_pb2_grpc, gateway_pb2_grpc, wallet_pb2_grpc
from tests.services.procs import ServiceProcess, aio_channel, create_topic, secure_channel, tls_env, tournament_service

SECRET = "e2e-gateway-secret"
OPERATOR_TOKEN = "e2e-operator-token"
PLAY_GRANT = 10_000


@dataclass
class Stack:
    run: str
    bootstrap: str
    topics: dict[str, str]
    procs: dict[str, ServiceProcess] = field(default_factory=dict)
    dealer_env: dict[str, str] = field(default_factory=dict)
    tls: bool = True
    tournaments: bool = False
    tournament_tables: str = ""

    @classmethod
    def start(cls, bootstrap: str, tls: bool = True, tournaments: bool = False, tournament_tables: str = "") -> Stack:
        run = uuid.uuid4().hex[:8]
        kinds = ("events", "records", "settled", "snapshots", "ledger", "connection", "tournament_tables")
        topics = {kind: f"e2e.{kind}.{run}" for kind in kinds}
        for kind, name in topics.items():
            create_topic(bootstrap, name, partitions=1 if kind == "snapshots" else 3)
        stack = cls(run, bootstrap, topics, tls=tls, tournaments=tournaments, tournament_tables=tournament_tables)
        try:
            stack._start_all()
        except BaseException:
            stack.stop()
            raise
        return stack

    def _proc(self, name: str, env: dict[str, str], **kwargs: Any) -> ServiceProcess:
        return ServiceProcess(name, env, tls=self.tls, **kwargs)

    def _start_all(self) -> None:
        t, kafka = self.topics, {"KAFKA_BOOTSTRAP": self.bootstrap}
        self.procs["evaluator"] = self._proc("evaluator", dict(kafka)).start(timeout=120)
        self.procs["wallet"] = self._proc(
            "wallet",
            {
                **kafka,
                "WALLET_HANDS_TOPIC": t["settled"],
                "WALLET_LEDGER_TOPIC": t["ledger"],
                "WALLET_CONSUMER_GROUP": f"wallet-{self.run}",
                "WALLET_RELAY_INTERVAL": "0.2",
            },
        ).start()
        self.procs["connection_monitor"] = self._proc(
            "connection_monitor",
            {**kafka, "CONNECTION_EVENTS_TOPIC": t["connection"], "CONNECTION_SILENCE_SECONDS": "5"},
        ).start()
        self.dealer_env = {
            **kafka,
            "WALLET_ADDR": self.procs["wallet"].address,
            "EVALUATOR_ADDR": self.procs["evaluator"].address,
            "CONNECTION_MONITOR_ADDR": self.procs["connection_monitor"].address,
            "DEALER_EVENTS_TOPIC": t["events"],
            "DEALER_RECORDS_TOPIC": t["records"],
            "DEALER_SETTLED_TOPIC": t["settled"],
            "DEALER_SNAPSHOTS_TOPIC": t["snapshots"],
            "DEALER_CONNECTION_TOPIC": t["connection"],
            "DEALER_TOURNAMENT_TABLES_TOPIC": t["tournament_tables"],
        }
        self.procs["dealer"] = self._proc("dealer", self.dealer_env).start()
        if self.tournaments:
            on_the_dealer = {
                "TOURNAMENT_TABLES": "dealer",
                "DEALER_ADDR": self.procs["dealer"].address,
                "TOURNAMENT_TABLES_TOPIC": t["tournament_tables"],
            }
            self.procs["tournament"], _ = tournament_service(
                self.bootstrap,
                self.procs["wallet"].address,
                self.run,
                tick_seconds=0.2,
                tls=self.tls,
                env=on_the_dealer if self.tournament_tables == "dealer" else {"TOURNAMENT_TABLES": "inprocess"},
            )
        self.gateway_env = {
            **kafka,
            "TOURNAMENT_ADDR": self.procs["tournament"].address if self.tournaments else "",
            "GATEWAY_SECRET": SECRET,
            "DEALER_ADDR": self.procs["dealer"].address,
            "WALLET_ADDR": self.procs["wallet"].address,
            "CONNECTION_MONITOR_ADDR": self.procs["connection_monitor"].address,
            "GATEWAY_HEARTBEAT_SECONDS": "1",
            "GATEWAY_RATE": "200",
            "GATEWAY_BURST": "400",
            "GATEWAY_DEV_LOGIN": "1",  # the tests' players log in without passwords
            "GATEWAY_ADDRESS_RATE": "100000",  # every test client comes from 127.0.0.1
            "GATEWAY_ADDRESS_BURST": "100000",
            "GATEWAY_PLAY_MONEY_GRANT": str(PLAY_GRANT),
            "GATEWAY_OPERATOR_TOKEN": OPERATOR_TOKEN,
        }
        self.procs["gateway"] = self._proc("gateway", self.gateway_env).start()

    def address(self, name: str) -> str:
        return self.procs[name].address

    def restart_dealer(self) -> None:
        """kill -9 the dealer and start a new one on the same ports, data and topics."""
        old = self.procs["dealer"]
        old.kill()
        self.procs["dealer"] = self._proc(
            "dealer", self.dealer_env, grpc_port=old.grpc_port, metrics_port=old.metrics_port, data_dir=old.data_dir
        ).start()

    def restart_gateway(self) -> None:
        """kill -9 the gateway and start a new one on the same ports and data (its accounts)."""
        old = self.procs["gateway"]
        old.kill()
        self.procs["gateway"] = self._proc(
            "gateway", self.gateway_env, grpc_port=old.grpc_port, metrics_port=old.metrics_port, data_dir=old.data_dir
        ).start()

    def channel(self, name: str, identity: str = "operator") -> grpc.Channel:
        """A blocking channel to service ``name``, as ``identity`` when TLS is on."""
        return secure_channel(self.address(name), identity) if self.tls else grpc.insecure_channel(self.address(name))

    def aio_channel(self, name: str, identity: str = "operator") -> grpc.aio.Channel:
        """An asyncio channel to service ``name``, as ``identity`` when TLS is on."""
        if self.tls:
            return aio_channel(self.address(name), identity)
        return grpc.aio.insecure_channel(self.address(name))

    def tls_env(self, identity: str) -> dict[str, str]:
        """The environment for an extra service process of this stack (``identity``'s certificate)."""
        return tls_env(identity) if self.tls else {}

    def wallet(self, channel_holder: list[grpc.Channel]) -> wallet_pb2_grpc.WalletStub:
        channel = self.channel("wallet")
        channel_holder.append(channel)
        return wallet_pb2_grpc.WalletStub(channel)

    def dealer(self, channel_holder: list[grpc.Channel]) -> dealer_pb2_grpc.DealerStub:
        channel = self.channel("dealer")
        channel_holder.append(channel)
        return dealer_pb2_grpc.DealerStub(channel)

    def gateway(self, channel_holder: list[grpc.Channel]) -> gateway_pb2_grpc.GatewayStub:
        channel = grpc.insecure_channel(self.address("gateway"))
        channel_holder.append(channel)
        return gateway_pb2_grpc.GatewayStub(channel)

    def stop(self) -> dict[str, int]:
        codes = {}
        for name in ("gateway", "tournament", "dealer", "connection_monitor", "wallet", "evaluator"):
            if name in self.procs:
                codes[name] = self.procs[name].stop()
        return codes
