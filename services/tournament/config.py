"""Tournament service settings from the environment (on top of the shared ServiceConfig)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cardroom.runtime.config import ServiceConfig, env_float, env_str

#: ``TOURNAMENT_RETENTION_SECONDS``'s default: ten minutes over in the house, then forgotten.
DEFAULT_RETENTION_SECONDS = 600.0


@dataclass(frozen=True)
class TournamentServiceConfig:
    """``WALLET_ADDR`` (default 127.0.0.1:20052), ``TOURNAMENT_EVENTS_TOPIC`` (default
    ``cardroom.tournament.events``), ``TOURNAMENT_DB_PATH`` (SQLite, default
    ``$DATA_DIR/tournament.sqlite3``), ``TOURNAMENT_OVERLAY_ACCOUNT`` (the house account a
    guarantee's overlay comes from and what a tournament leaves in its pool goes back to;
    default ``external:house:cash``: house capital entering the room), ``TOURNAMENT_TICK_SECONDS``
    (how often the tables' play runs, default 0.05), ``TOURNAMENT_RELAY_INTERVAL`` (Kafka outbox,
    default 0.2), ``TOURNAMENT_OPERATOR_TOKEN`` (set: CreateTournament and CancelTournament need
    ``authorization: Operator <token>``), ``TOURNAMENT_TABLES`` (``dealer``, the default when
    ``DEALER_ADDR`` is set: the tables are played on the dealer there, hand results from
    ``TOURNAMENT_TABLES_TOPIC``, default ``cardroom.tournament.tables``; ``inprocess``, the default
    without ``DEALER_ADDR``: the service plays its tables itself, bots in every seat),
    ``DEALER_DIRECTORY_TOPIC`` (with dealer shards, e.g. ``cardroom.dealer.directory``: each table's
    commands go to the dealer replica whose claim there holds it; unset or empty, the default: all to
    ``DEALER_ADDR``), ``TOURNAMENT_RETENTION_SECONDS`` (how long a tournament over stays in the house
    before it is forgotten, all its money paid: its lobby answer, results and players' statuses are then
    answered from its record and a restart does not replay it; default 600). ``KAFKA_BOOTSTRAP=none``
    turns publishing (and the directory) off."""

    service: ServiceConfig
    wallet_addr: str
    events_topic: str
    db_path: Path
    overlay_account: str
    tick_seconds: float
    relay_interval: float
    operator_token: str = ""
    tables: str = "inprocess"
    dealer_addr: str = "127.0.0.1:20053"
    tables_topic: str = "cardroom.tournament.tables"
    dealer_directory_topic: str = ""
    retention_seconds: float = DEFAULT_RETENTION_SECONDS

    @classmethod
    def from_env(cls) -> TournamentServiceConfig:
        service = ServiceConfig.from_env("tournament")
        tick = env_float("TOURNAMENT_TICK_SECONDS", 0.05)
        # The dealer's tables wherever a dealer is configured (compose, make run, k8s: DEALER_ADDR);
        # the service's own in-process tables otherwise (a tournament service alone, its tests).
        dealer_addr = env_str("DEALER_ADDR", "")
        tables = env_str("TOURNAMENT_TABLES", "dealer" if dealer_addr else "inprocess").lower()
        if tables not in ("inprocess", "dealer"):
            raise SystemExit(f"TOURNAMENT_TABLES={tables!r}: expected 'inprocess' or 'dealer'")
        if tick <= 0:
            raise SystemExit("TOURNAMENT_TICK_SECONDS must be positive")
        retention = env_float("TOURNAMENT_RETENTION_SECONDS", DEFAULT_RETENTION_SECONDS)
        if retention < 0:
            raise SystemExit("TOURNAMENT_RETENTION_SECONDS must not be negative")
        return cls(
            service=service,
            wallet_addr=env_str("WALLET_ADDR", "127.0.0.1:20052"),
            events_topic=env_str("TOURNAMENT_EVENTS_TOPIC", "cardroom.tournament.events"),
            db_path=Path(env_str("TOURNAMENT_DB_PATH", str(service.data_dir / "tournament.sqlite3"))),
            overlay_account=env_str("TOURNAMENT_OVERLAY_ACCOUNT", "external:house:cash"),
            tick_seconds=tick,
            relay_interval=env_float("TOURNAMENT_RELAY_INTERVAL", 0.2),
            operator_token=env_str("TOURNAMENT_OPERATOR_TOKEN", ""),
            tables=tables,
            dealer_addr=dealer_addr or "127.0.0.1:20053",
            tables_topic=env_str("TOURNAMENT_TABLES_TOPIC", "cardroom.tournament.tables"),
            dealer_directory_topic=env_str("DEALER_DIRECTORY_TOPIC", ""),
            retention_seconds=retention,
        )

    @property
    def kafka_enabled(self) -> bool:
        return self.service.kafka_bootstrap.lower() not in ("", "none", "off")
