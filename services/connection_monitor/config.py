"""Connection monitor settings from the environment (on top of the shared ServiceConfig)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cardroom.runtime.config import ServiceConfig, env_float, env_int, env_str


@dataclass(frozen=True)
class MonitorConfig:
    """``CONNECTION_SILENCE_SECONDS`` (silence that makes a player disconnected, default 10),
    ``CONNECTION_SWEEP_SECONDS`` (how often silence is checked, default silence/5, at most 1),
    ``CONNECTION_EVENTS_TOPIC`` (default ``cardroom.connection.events``), ``ALL_IN_PER_WINDOW``
    (default 2), ``ALL_IN_WINDOW_SECONDS`` (default 86400), ``ALL_IN_DB_PATH`` (SQLite file,
    default ``$DATA_DIR/allowance.sqlite3``), ``CONNECTION_FORGET_SECONDS`` (a player disconnected
    this long leaves memory for the same SQLite file, default one all-in window: see
    :mod:`connection_monitor.archive`). ``KAFKA_BOOTSTRAP=none`` turns publishing off."""

    service: ServiceConfig
    silence_seconds: float
    sweep_seconds: float
    events_topic: str
    all_in_per_window: int
    all_in_window_seconds: int
    db_path: Path
    forget_seconds: float

    @classmethod
    def from_env(cls) -> MonitorConfig:
        service = ServiceConfig.from_env("connection_monitor")
        silence = env_float("CONNECTION_SILENCE_SECONDS", 10.0)
        if silence <= 0:
            raise SystemExit("CONNECTION_SILENCE_SECONDS must be positive")
        window = env_int("ALL_IN_WINDOW_SECONDS", 24 * 60 * 60)
        forget = env_float("CONNECTION_FORGET_SECONDS", float(window))
        if forget <= 0:
            raise SystemExit("CONNECTION_FORGET_SECONDS must be positive")
        return cls(
            service=service,
            silence_seconds=silence,
            sweep_seconds=env_float("CONNECTION_SWEEP_SECONDS", min(1.0, silence / 5)),
            events_topic=env_str("CONNECTION_EVENTS_TOPIC", "cardroom.connection.events"),
            all_in_per_window=env_int("ALL_IN_PER_WINDOW", 2),
            all_in_window_seconds=window,
            db_path=Path(env_str("ALL_IN_DB_PATH", str(service.data_dir / "allowance.sqlite3"))),
            forget_seconds=forget,
        )

    @property
    def kafka_enabled(self) -> bool:
        return self.service.kafka_bootstrap.lower() not in ("", "none", "off")
