"""Gateway settings from the environment (on top of the shared ServiceConfig)."""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from pathlib import Path

from cardroom.runtime.config import ServiceConfig, env_float, env_int, env_str
from cardroom.runtime.peers import optional_address
from cardroom.runtime.production import MODE_VARIABLE, is_production
from gateway.caller import Network, parse_networks

log = logging.getLogger("gateway")


@dataclass(frozen=True)
class GatewayConfig:
    """``GATEWAY_SECRET`` (HMAC key of the login tokens; random per process when unset, so
    tokens then die with the process), ``GATEWAY_TOKEN_TTL`` (s of an access token, default 900),
    ``DEALER_ADDR`` (the dealer, or with ``DEALER_DIRECTORY_TOPIC`` where calls go that no dealer
    replica's claim routes), ``WALLET_ADDR``, ``CONNECTION_MONITOR_ADDR`` (empty or ``off`` = no heartbeats),
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
    dev_login: bool = False
    """``GATEWAY_DEV_LOGIN=1``: Login without a password for ids without a password account (make
    run's bots, the tests). Refused in production mode."""
    accounts_path: Path | None = None
    """``GATEWAY_ACCOUNTS_DB`` (default ``$DATA_DIR/accounts.sqlite3``); None: in memory (fast tests)."""
    accounts_dsn: str = ""
    """``GATEWAY_ACCOUNTS_DSN``: the accounts in PostgreSQL instead (what replicated gateways share)."""
    refresh_ttl: int = 30 * 24 * 3600
    """``GATEWAY_REFRESH_TTL`` (s of a refresh token)."""
    login_max_failures: int = 5
    """``GATEWAY_LOGIN_MAX_FAILURES``: wrong passwords in a row that lock an account."""
    lockout_seconds: float = 900.0
    """``GATEWAY_LOCKOUT_SECONDS``."""
    argon2_memory_kib: int = 65536
    """``GATEWAY_ARGON2_MEMORY_KIB`` (argon2id memory cost; time cost ``GATEWAY_ARGON2_TIME_COST``, 3)."""
    argon2_time_cost: int = 3
    player_rate: float = 20.0
    """``GATEWAY_PLAYER_RATE`` / ``GATEWAY_PLAYER_BURST`` (40): calls and Play messages/s per player, over
    all his connections."""
    player_burst: float = 40.0
    address_rate: float = 200.0
    """``GATEWAY_ADDRESS_RATE`` / ``GATEWAY_ADDRESS_BURST`` (400): calls and Play messages/s per client
    address (IP), over all its connections and players."""
    address_burst: float = 400.0
    login_rate: float = 0.2
    """``GATEWAY_LOGIN_RATE`` / ``GATEWAY_LOGIN_BURST`` (10): password attempts (Login, ChangePassword)
    per second per address."""
    login_burst: float = 10.0
    signup_rate: float = 1 / 600
    """``GATEWAY_SIGNUP_RATE`` / ``GATEWAY_SIGNUP_BURST`` (3): sign-ups per second per address (one per
    10 minutes after a burst of 3)."""
    signup_burst: float = 3.0
    grants_per_address_day: int = 3
    """``GATEWAY_GRANTS_PER_ADDRESS_DAY``: play-money sign-up grants per address and UTC day."""
    trusted_proxies: tuple[Network, ...] = ()
    """``GATEWAY_TRUSTED_PROXIES``: comma-separated addresses or networks of the proxies in front of the
    gateway (the web edge's Envoy) whose ``x-forwarded-for`` names the client the limits apply to
    (gateway.caller); empty (default): every caller is its own gRPC peer, x-forwarded-for ignored."""
    max_play_streams: int = 4
    """``GATEWAY_MAX_PLAY_STREAMS``: open Play streams per player (a new one beyond is refused)."""
    tournament_addr: str | None = None
    """``TOURNAMENT_ADDR``: the tournament service, an optional peer (unset, empty or ``off``: tournaments
    are off here and the tournament calls answer FAILED_PRECONDITION, reason TOURNAMENTS_OFF)."""
    dealer_directory_topic: str = ""
    """``DEALER_DIRECTORY_TOPIC`` (e.g. ``cardroom.dealer.directory``, with dealer shards on): the dealer
    replicas' claims, read from ``KAFKA_BOOTSTRAP`` as the gateway's Kafka user (docs/sharding.md); a
    table's calls go to its replica, the lobby and a player's hands are asked of every replica. Unset or
    empty (the default): no directory, every dealer call goes to ``DEALER_ADDR``."""
    table_feeds: bool = True
    """``GATEWAY_TABLE_FEEDS`` (default on; ``0``/``off``: off): the sessions at a table follow it through
    one dealer WatchTableFeed instead of a Watch each (docs/capacity.md, "One feed per table")."""

    @classmethod
    def from_env(cls) -> GatewayConfig:
        secret = env_str("GATEWAY_SECRET", "")
        if not secret:
            log.warning("GATEWAY_SECRET is not set: using a random secret (tokens end with this process)")
            secret = secrets.token_hex(32)
        dev_login = env_str("GATEWAY_DEV_LOGIN", "").strip().lower() in ("1", "true", "yes", "on")
        if dev_login and is_production():
            raise SystemExit(
                f"gateway: refusing to start: GATEWAY_DEV_LOGIN (login without a password) is for development;"
                f" it is not allowed with {MODE_VARIABLE}=production"
            )
        if dev_login:
            log.warning("GATEWAY_DEV_LOGIN is on: any id without a password account logs in without a password")
        service = ServiceConfig.from_env("gateway")
        accounts_db = env_str("GATEWAY_ACCOUNTS_DB", str(service.data_dir / "accounts.sqlite3"))
        return cls(
            service=service,
            secret=secret.encode(),
            token_ttl=env_int("GATEWAY_TOKEN_TTL", 900),
            dealer_addr=env_str("DEALER_ADDR", "127.0.0.1:20053"),
            wallet_addr=env_str("WALLET_ADDR", "127.0.0.1:20052"),
            monitor_addr=optional_address("CONNECTION_MONITOR_ADDR", "127.0.0.1:20054"),
            rate=env_float("GATEWAY_RATE", 50.0),
            burst=env_float("GATEWAY_BURST", 100.0),
            heartbeat_seconds=env_float("GATEWAY_HEARTBEAT_SECONDS", 2.0),
            play_money_grant=env_int("GATEWAY_PLAY_MONEY_GRANT", 0),
            operator_token=env_str("GATEWAY_OPERATOR_TOKEN", ""),
            play_money_daily_limit=env_int("GATEWAY_PLAY_MONEY_DAILY_LIMIT", 100_000),
            dev_login=dev_login,
            accounts_path=Path(accounts_db),
            accounts_dsn=env_str("GATEWAY_ACCOUNTS_DSN", ""),
            refresh_ttl=env_int("GATEWAY_REFRESH_TTL", 30 * 24 * 3600),
            login_max_failures=env_int("GATEWAY_LOGIN_MAX_FAILURES", 5),
            lockout_seconds=env_float("GATEWAY_LOCKOUT_SECONDS", 900.0),
            argon2_memory_kib=env_int("GATEWAY_ARGON2_MEMORY_KIB", 65536),
            argon2_time_cost=env_int("GATEWAY_ARGON2_TIME_COST", 3),
            player_rate=env_float("GATEWAY_PLAYER_RATE", 20.0),
            player_burst=env_float("GATEWAY_PLAYER_BURST", 40.0),
            address_rate=env_float("GATEWAY_ADDRESS_RATE", 200.0),
            address_burst=env_float("GATEWAY_ADDRESS_BURST", 400.0),
            login_rate=env_float("GATEWAY_LOGIN_RATE", 0.2),
            login_burst=env_float("GATEWAY_LOGIN_BURST", 10.0),
            signup_rate=env_float("GATEWAY_SIGNUP_RATE", 1 / 600),
            signup_burst=env_float("GATEWAY_SIGNUP_BURST", 3.0),
            grants_per_address_day=env_int("GATEWAY_GRANTS_PER_ADDRESS_DAY", 3),
            trusted_proxies=_trusted_proxies(),
            max_play_streams=env_int("GATEWAY_MAX_PLAY_STREAMS", 4),
            tournament_addr=optional_address("TOURNAMENT_ADDR", ""),
            dealer_directory_topic=env_str("DEALER_DIRECTORY_TOPIC", ""),
            table_feeds=env_str("GATEWAY_TABLE_FEEDS", "on").strip().lower() not in ("0", "false", "no", "off"),
        )


def _trusted_proxies() -> tuple[Network, ...]:
    try:
        return parse_networks(env_str("GATEWAY_TRUSTED_PROXIES", ""))
    except ValueError as exc:
        raise SystemExit(f"gateway: {exc}") from None
