"""Wallet settings from the environment (on top of the shared ServiceConfig)."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from pathlib import Path

from cardroom.runtime.config import ServiceConfig, env_float, env_int, env_str
from wallet.ledger import DEFAULT_MAX_BALANCE, DEFAULT_MAX_TRANSFER, Limits


@dataclass(frozen=True)
class WalletConfig:
    """Wallet settings:

    * ``WALLET_DB_DSN``: PostgreSQL DSN; empty = SQLite at ``WALLET_DB_PATH``
      (default ``$DATA_DIR/wallet.sqlite3``); ``WALLET_DB_POOL``: connections / worker threads.
    * ``WALLET_HANDS_TOPIC`` (consumed), ``WALLET_LEDGER_TOPIC`` (outbox relayed to),
      ``WALLET_CONSUMER_GROUP``, ``WALLET_CONSUMER_INSTANCE_ID`` (static group membership, so a
      restarted wallet takes its partitions back at once; unique per replica, default
      ``wallet-<hostname>``), ``WALLET_RELAY_INTERVAL`` (seconds between outbox polls),
      ``WALLET_SETTLEMENT_BATCH_MS`` (default 100; 0: each at once): the broker gathers the hand settlements
      of up to this long into one fetch, so the wallet asks Kafka one fetch and one offset commit per batch,
      not per hand; a settlement is applied that much later at most (nothing waits on it: a cash-out is
      booked before its hand if need be, a reconciliation waits for the hand it names).
    * ``KAFKA_BOOTSTRAP=none`` turns the consumer and the relay off (the outbox accumulates).
    * ``WALLET_MAX_TRANSFER`` (default 10^12 minor units): the most one deposit, withdrawal or other
      transfer from or to the external account may move; ``WALLET_MAX_BALANCE`` (default 10^14): the
      balance money from outside may take an account to (:class:`wallet.ledger.Limits`).
    """

    service: ServiceConfig
    db_dsn: str
    db_path: Path
    db_pool: int
    hands_topic: str
    ledger_topic: str
    consumer_group: str
    consumer_instance: str
    relay_interval: float
    settlement_batch_ms: int = 100
    limits: Limits = Limits()

    @classmethod
    def from_env(cls) -> WalletConfig:
        service = ServiceConfig.from_env("wallet")
        return cls(
            service=service,
            db_dsn=env_str("WALLET_DB_DSN", ""),
            db_path=Path(env_str("WALLET_DB_PATH", str(service.data_dir / "wallet.sqlite3"))),
            db_pool=max(2, env_int("WALLET_DB_POOL", 8)),
            hands_topic=env_str("WALLET_HANDS_TOPIC", "cardroom.hand.settled"),
            ledger_topic=env_str("WALLET_LEDGER_TOPIC", "cardroom.wallet.ledger"),
            consumer_group=env_str("WALLET_CONSUMER_GROUP", "wallet"),
            consumer_instance=env_str("WALLET_CONSUMER_INSTANCE_ID", f"wallet-{socket.gethostname()}"),
            relay_interval=env_float("WALLET_RELAY_INTERVAL", 0.2),
            settlement_batch_ms=min(1000, max(0, env_int("WALLET_SETTLEMENT_BATCH_MS", 100))),
            limits=Limits(
                max_transfer=env_int("WALLET_MAX_TRANSFER", DEFAULT_MAX_TRANSFER),
                max_balance=env_int("WALLET_MAX_BALANCE", DEFAULT_MAX_BALANCE),
            ),
        )

    @property
    def kafka_enabled(self) -> bool:
        return self.service.kafka_bootstrap.lower() not in ("", "none", "off")
