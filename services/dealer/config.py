"""Dealer settings from the environment (on top of the shared ServiceConfig)."""

from __future__ import annotations

import socket
from dataclasses import dataclass

from cardroom.runtime.config import ServiceConfig, env_float, env_int, env_str
from cardroom.runtime.directory import TOPIC as DIRECTORY_TOPIC
from cardroom.runtime.peers import optional_address
from dealer.deps import Topics


@dataclass(frozen=True)
class DealerConfig:
    """``WALLET_ADDR`` (default 127.0.0.1:20052), ``EVALUATOR_ADDR`` (127.0.0.1:20051; empty, ``off`` or ``none``
    turns the showdown cross-check off), ``DEALER_CRASH_POLICY`` (``resume``: restored tables
    play on, the interrupted hand cancelled; ``close``: rules/003 — close them and cash out),
    ``DEALER_EVENTS_TOPIC``, ``DEALER_RECORDS_TOPIC``, ``DEALER_SETTLED_TOPIC``,
    ``DEALER_SNAPSHOTS_TOPIC``, ``DEALER_TOURNAMENT_TABLES_TOPIC`` (cardroom.tournament.tables: tournament
    tables' hands and commands, keyed by tournament id), ``CONNECTION_MONITOR_ADDR`` (127.0.0.1:20054;
    empty, ``off`` or ``none``: count artificial all-ins locally),
    ``DEALER_CONNECTION_TOPIC`` (cardroom.connection.events),
    ``DEALER_PLAYER_HANDS`` (50: each player's recent hands kept in memory for ``PlayerHands``; 0: none),
    ``DEALER_PLAYER_HANDS_PLAYERS`` (2000: the players whose hands are kept, the longest idle forgotten),
    ``DEALER_DRAIN_SECONDS`` (60: on SIGTERM no new hand is dealt and the hands in progress get this
    long to finish before the snapshots are written; a hand still on is cancelled on restore),
    ``DEALER_KAFKA_LINGER_MS`` (50: how long a table event waits on the dealer's event loop for others
    to share its Kafka request, 0-1000; they are handed to the producer together and wake its sender
    thread once. A snapshot after a seat command or before a deal is awaited and sent at once, with
    the events fired before it; the hand's end goes in its own transaction, not here. 50 against 5: a
    fifth less CPU per hand at the dealers and at Kafka under ``cardroom loadtest``, docs/capacity.md).
    ``KAFKA_BOOTSTRAP=none`` runs without Kafka (no events, no snapshots, nothing restored:
    for local experiments only)."""

    service: ServiceConfig
    wallet_addr: str
    evaluator_addr: str | None
    crash_policy: str
    topics: Topics
    monitor_addr: str | None
    connection_topic: str
    player_hands: int = 50
    player_hands_players: int = 2000
    drain_seconds: float = 60.0
    kafka_linger_ms: int = 50
    #: docs/sharding.md: ``DEALER_SHARDS=on`` — this replica deals the partitions of the tables the
    #: consumer group ``DEALER_SHARD_GROUP`` (dealer.tables) gives it, claimed in
    #: ``DEALER_DIRECTORY_TOPIC`` (cardroom.dealer.directory) under the address ``DEALER_ADVERTISE_ADDR``
    #: (default HOST:GRPC_PORT) and the name ``DEALER_REPLICA`` (default: the address);
    #: ``DEALER_SHARD_SESSION_MS`` (10000): how long a silent replica keeps its tables.
    shards: bool = False
    shard_group: str = "dealer.tables"
    directory_topic: str = DIRECTORY_TOPIC
    advertise_addr: str = ""
    replica: str = ""
    shard_session_ms: int = 10_000

    @classmethod
    def from_env(cls) -> DealerConfig:
        service = ServiceConfig.from_env("dealer")
        policy = env_str("DEALER_CRASH_POLICY", "resume").lower()
        if policy not in ("resume", "close"):
            raise SystemExit(f"DEALER_CRASH_POLICY={policy!r}: expected 'resume' or 'close'")
        advertise = advertised(env_str("DEALER_ADVERTISE_ADDR", f"{reachable_host(service.host)}:{service.grpc_port}"))
        return cls(
            service=service,
            wallet_addr=env_str("WALLET_ADDR", "127.0.0.1:20052"),
            evaluator_addr=optional_address("EVALUATOR_ADDR", "127.0.0.1:20051"),
            crash_policy=policy,
            topics=Topics(
                events=env_str("DEALER_EVENTS_TOPIC", "cardroom.table.events"),
                records=env_str("DEALER_RECORDS_TOPIC", "cardroom.hand.records"),
                settled=env_str("DEALER_SETTLED_TOPIC", "cardroom.hand.settled"),
                snapshots=env_str("DEALER_SNAPSHOTS_TOPIC", "cardroom.table.snapshots"),
                tournament_tables=env_str("DEALER_TOURNAMENT_TABLES_TOPIC", "cardroom.tournament.tables"),
            ),
            monitor_addr=optional_address("CONNECTION_MONITOR_ADDR", "127.0.0.1:20054"),
            connection_topic=env_str("DEALER_CONNECTION_TOPIC", "cardroom.connection.events"),
            player_hands=max(0, env_int("DEALER_PLAYER_HANDS", 50)),
            player_hands_players=max(1, env_int("DEALER_PLAYER_HANDS_PLAYERS", 2000)),
            drain_seconds=max(0.0, env_float("DEALER_DRAIN_SECONDS", 60.0)),
            kafka_linger_ms=min(1000, max(0, env_int("DEALER_KAFKA_LINGER_MS", 50))),
            shards=_switch("DEALER_SHARDS"),
            shard_group=env_str("DEALER_SHARD_GROUP", "dealer.tables"),
            directory_topic=env_str("DEALER_DIRECTORY_TOPIC", DIRECTORY_TOPIC),
            advertise_addr=advertise,
            replica=env_str("DEALER_REPLICA", advertise),
            shard_session_ms=max(6000, env_int("DEALER_SHARD_SESSION_MS", 10_000)),
        )

    @property
    def kafka_bootstrap(self) -> str | None:
        value = self.service.kafka_bootstrap
        return None if value.lower() in ("", "none", "off") else value


def _switch(name: str) -> bool:
    value = env_str(name, "off").lower()
    if value not in ("on", "off", "true", "false", "1", "0"):
        raise SystemExit(f"{name}={value!r}: expected 'on' or 'off'")
    return value in ("on", "true", "1")


def advertised(address: str) -> str:
    """``DEALER_ADVERTISE_ADDR`` as a gRPC target: ``host:port``, an IPv6 host in brackets (a pod IP
    put in front of the port by the manifests, ``$(POD_IP):20053``, may be ``fd00::5``)."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise SystemExit(f"DEALER_ADVERTISE_ADDR={address!r}: expected HOST:PORT")
    if ":" in host and not host.startswith("["):
        return f"[{host}]:{port}"
    return address


def reachable_host(host: str) -> str:
    """The host others reach this process at: ``host``, or for a wildcard (``0.0.0.0``, ``::``) the
    address the machine's name resolves to (a container's or pod's own address)."""
    if host not in ("0.0.0.0", "::", ""):
        return host
    return socket.gethostbyname(socket.gethostname())
