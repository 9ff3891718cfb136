"""Gateway settings from the environment (on top of the shared ServiceConfig)."""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass

from cardroom.runtime.config import ServiceConfig, env_float, env_int, env_str
from cardroom.runtime.peers import optional_address

log = logging.getLogger("gateway")


@dataclass(frozen=True)
class GatewayConfig:
    """``GATEWAY_SECRET`` (HMAC key of the login tokens; random per process when unset, so
    tokens then die with the process), ``GATEWAY_TOKEN_TTL`` (s, default 43200),
    ``DEALER_ADDR``, ``WALLET_ADDR``, ``CONNECTION_MONITOR_ADDR`` (empty or ``off`` = no heartbeats),
    ``GATEWAY_RATE`` (requests/s per connection, default 50), ``GATEWAY_BURST`` (default 100),
    ``GATEWAY_HEARTBEAT_SECONDS`` (default 2), ``GATEWAY_PLAY_MONEY_GRANT`` (play chips a new
    player's play account gets at first login, default 0), ``GATEWAY_OPERATOR_TOKEN`` (the secret of
    the GatewayOperator API the bots use; unset = that API is off)."""

    service: ServiceConfig
    secret: bytes
    token_ttl: int
    dealer_addr: str
    wallet_addr: str
    monitor_addr: str | None
    rate: float
    burst: float
    heartbeat_seconds: float
    play_money_grant: int
    operator_token: str = ""
    play_money_daily_limit: int = 100_000
    """``GATEWAY_PLAY_MONEY_DAILY_LIMIT``: play money the cashier grants a player per UTC day."""

    @classmethod
    def from_env(cls) -> GatewayConfig:
        secret = env_str("GATEWAY_SECRET", "")
        if not secret:
            log.warning("GATEWAY_SECRET is not set: using a random secret (tokens end with this process)")
            secret = secrets.token_hex(32)
        return cls(
            service=ServiceConfig.from_env("gateway"),
            secret=secret.encode(),
            token_ttl=env_int("GATEWAY_TOKEN_TTL", 12 * 3600),
            dealer_addr=env_str("DEALER_ADDR", "127.0.0.1:50053"),
            wallet_addr=env_str("WALLET_ADDR", "127.0.0.1:50052"),
            monitor_addr=optional_address("CONNECTION_MONITOR_ADDR", "127.0.0.1:50054"),
            rate=env_float("GATEWAY_RATE", 50.0),
            burst=env_float("GATEWAY_BURST", 100.0),
            heartbeat_seconds=env_float("GATEWAY_HEARTBEAT_SECONDS", 2.0),
            play_money_grant=env_int("GATEWAY_PLAY_MONEY_GRANT", 0),
            operator_token=env_str("GATEWAY_OPERATOR_TOKEN", ""),
            play_money_daily_limit=env_int("GATEWAY_PLAY_MONEY_DAILY_LIMIT", 100_000),
        )
