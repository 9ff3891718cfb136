"""How a service authenticates to Kafka: SASL/SCRAM-SHA-512 as its own user, from the environment.

``KAFKA_USERNAME`` and ``KAFKA_PASSWORD`` (or ``KAFKA_PASSWORD_FILE``, e.g. a mounted Secret or
``deploy/kafka/kafka.sh``'s ``STATE/credentials/NAME``); ``KAFKA_SECURITY_PROTOCOL`` defaults to
``SASL_PLAINTEXT`` (``SASL_SSL`` behind a TLS listener). Without a user the client connects in
plaintext, as before. Every producer and consumer of the runtime passes :func:`client_settings` to
kafka-python; which topics a user may read or write is the broker's ACL table (deploy/kafka/acls.yaml).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MECHANISM = "SCRAM-SHA-512"


@dataclass(frozen=True)
class KafkaCredentials:
    username: str
    password: str
    security_protocol: str = "SASL_PLAINTEXT"

    def settings(self) -> dict[str, Any]:
        """kafka-python keyword arguments (producer, consumer and admin client alike)."""
        return {
            "security_protocol": self.security_protocol,
            "sasl_mechanism": MECHANISM,
            "sasl_plain_username": self.username,
            "sasl_plain_password": self.password,
        }


def credentials_from_env() -> KafkaCredentials | None:
    username = os.environ.get("KAFKA_USERNAME", "").strip()
    if not username:
        return None
    password = os.environ.get("KAFKA_PASSWORD", "")
    password_file = os.environ.get("KAFKA_PASSWORD_FILE", "").strip()
    if not password and password_file:
        try:
            password = Path(password_file).read_text().strip()
        except OSError as exc:
            raise SystemExit(f"KAFKA_PASSWORD_FILE={password_file}: {exc}") from None
    if not password:
        raise SystemExit(f"KAFKA_USERNAME={username} needs KAFKA_PASSWORD or KAFKA_PASSWORD_FILE")
    return KafkaCredentials(
        username, password, os.environ.get("KAFKA_SECURITY_PROTOCOL", "").strip() or "SASL_PLAINTEXT"
    )


#: Reconnect back-off of every Kafka client of the card room. kafka-python's default grows to 30 s while
#: the broker is away, so a consumer took up to ~30 s to come back after the broker did: the gateway's
#: dealer directory stayed stale that long after a broker restart (the chaos test: players' Leave calls
#: sent to a replica that no longer dealt their table), the wallet applied no settlement for ~20 s. A
#: broker on the same cluster is tried again from 50 ms up to every 2 s, as the gRPC channels do.
RECONNECT_SETTINGS: dict[str, Any] = {"reconnect_backoff_ms": 50, "reconnect_backoff_max_ms": 2000}


def client_settings(credentials: KafkaCredentials | None = None) -> dict[str, Any]:
    """The connection keyword arguments for a kafka-python client (producer, consumer and admin client
    alike): the reconnect back-off and the security settings of ``credentials`` or the environment's
    (none: plaintext, no authentication)."""
    chosen = credentials if credentials is not None else credentials_from_env()
    return {**RECONNECT_SETTINGS, **(chosen.settings() if chosen is not None else {})}
