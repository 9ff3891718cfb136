"""Who is calling: the bearer token in the call's metadata, checked against the secret; and the
password accounts behind Login."""

from __future__ import annotations

import time

import grpc

from cardroom.runtime import errors
from gateway import metrics
from gateway.account_store import AccountStore, MemoryAccountStore, SqliteAccountStore
from gateway.accounts import Accounts, LoginPolicy, hasher
from gateway.config import GatewayConfig
from gateway.tokens import Claims, TokenError, verify


def login_accounts(config: GatewayConfig) -> Accounts:
    """The accounts of ``config``: in PostgreSQL (a DSN), its SQLite file, or in memory when it names none."""
    store: AccountStore
    if config.accounts_dsn:
        from gateway.account_store_postgresql import PostgresAccountStore

        store = PostgresAccountStore(config.accounts_dsn)
    elif config.accounts_path is not None:
        store = SqliteAccountStore(config.accounts_path)
    else:
        store = MemoryAccountStore()
    policy = LoginPolicy(config.login_max_failures, config.lockout_seconds, config.refresh_ttl)
    return Accounts(store, policy, hasher(config.argon2_time_cost, config.argon2_memory_kib))


def bearer(context: grpc.aio.ServicerContext) -> str | None:
    for key, value in context.invocation_metadata() or ():
        if key.lower() == "authorization" and isinstance(value, str):
            scheme, _, token = value.strip().partition(" ")
            return token.strip() if scheme.lower() == "bearer" else None
    return None


def authenticate(context: grpc.aio.ServicerContext, secret: bytes) -> Claims:
    """The caller's claims, or an UNAUTHENTICATED :class:`errors.ServiceError`."""
    token = bearer(context)
    if not token:
        metrics.AUTH_FAILURES.labels("missing").inc()
        raise errors.unauthenticated(
            "missing token: send metadata 'authorization: Bearer <token>' from Login", reason=errors.TOKEN_MISSING
        )
    try:
        return verify(secret, token, time.time())
    except TokenError as err:
        metrics.AUTH_FAILURES.labels("invalid").inc()
        raise errors.unauthenticated(str(err), reason=errors.TOKEN_INVALID) from None


def other_player(claims: Claims, requested: str) -> errors.ServiceError | None:
    """The PERMISSION_DENIED error when ``requested`` names another player, else None."""
    if requested and requested != claims.player_id:
        return errors.denied(
            f"this token is for player {claims.player_id!r}; it cannot act for {errors.clip(requested, 40)!r}",
            reason=errors.OTHER_PLAYER,
        )
    return None
