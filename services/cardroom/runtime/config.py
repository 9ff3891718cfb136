"""Service configuration from environment variables, with defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

#: Default (gRPC, metrics) ports per service, as ``make run`` and the README use them.
DEFAULT_PORTS: dict[str, tuple[int, int]] = {
    "evaluator": (20051, 9101),
    "wallet": (20052, 9102),
    "dealer": (20053, 9103),
    "connection_monitor": (20054, 9104),
    "gateway": (20055, 9105),
    "tournament": (20056, 9106),
}


#: A dealer replica's ports (docs/sharding.md): replica ``k`` (1, 2, …) listens 1000 above replica ``k-1``.
REPLICA_PORT_STEP = 1000


def replica_ports(name: str, replica: int = 1) -> tuple[int, int]:
    """(gRPC, metrics) default ports of ``name``'s replica number ``replica`` (``make run``)."""
    grpc_port, metrics_port = DEFAULT_PORTS[name]
    step = REPLICA_PORT_STEP * (replica - 1)
    return grpc_port + step, metrics_port + step


def replica_label(name: str, replica: int = 1) -> str:
    """How ``make run`` names a replica in its lines and logs: ``dealer``, ``dealer-2``, …"""
    return name if replica == 1 else f"{name}-{replica}"


def env_str(name: str, default: str) -> str:
    value = os.environ.get(name, "").strip()
    return value if value else default


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise SystemExit(f"environment variable {name}={raw!r} is not an integer") from None


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError:
        raise SystemExit(f"environment variable {name}={raw!r} is not a number") from None


@dataclass(frozen=True)
class ServiceConfig:
    """What every service reads: ``HOST``, ``GRPC_PORT``, ``METRICS_PORT``, ``KAFKA_BOOTSTRAP``,
    ``DATA_DIR``, ``LOG_LEVEL``, ``SHUTDOWN_GRACE`` (s), ``SHUTDOWN_DELAY`` (s of NOT_SERVING
    before the server stops accepting calls)."""

    name: str
    host: str
    grpc_port: int
    metrics_port: int
    kafka_bootstrap: str
    data_dir: Path
    log_level: str
    shutdown_grace: float
    shutdown_delay: float

    @classmethod
    def from_env(cls, name: str) -> ServiceConfig:
        grpc_default, metrics_default = DEFAULT_PORTS.get(name, (0, 0))
        return cls(
            name=name,
            host=env_str("HOST", "127.0.0.1"),
            grpc_port=env_int("GRPC_PORT", grpc_default),
            metrics_port=env_int("METRICS_PORT", metrics_default),
            kafka_bootstrap=env_str("KAFKA_BOOTSTRAP", "127.0.0.1:9092"),
            data_dir=Path(env_str("DATA_DIR", os.path.join("var", name))),
            log_level=env_str("LOG_LEVEL", "INFO").upper(),
            shutdown_grace=env_float("SHUTDOWN_GRACE", 5.0),
            shutdown_delay=env_float("SHUTDOWN_DELAY", 0.5),
        )

    @property
    def grpc_address(self) -> str:
        return f"{self.host}:{self.grpc_port}"
