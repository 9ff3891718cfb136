"""Who is calling: the bearer token in the call's metadata, checked against the secret."""

from __future__ import annotations

import time

import grpc

from gateway import metrics
from gateway.tokens import Claims, TokenError, verify


def bearer(context: grpc.aio.ServicerContext) -> str | None:
    for key, value in context.invocation_metadata() or ():
        if key.lower() == "authorization" and isinstance(value, str):
            scheme, _, token = value.strip().partition(" ")
            return token.strip() if scheme.lower() == "bearer" else None
    return None


async def authenticate(context: grpc.aio.ServicerContext, secret: bytes) -> Claims:
    """The caller's claims, or abort UNAUTHENTICATED."""
    token = bearer(context)
    if not token:
        metrics.AUTH_FAILURES.labels("missing").inc()
        await context.abort(grpc.StatusCode.UNAUTHENTICATED,
                            "missing token: send metadata 'authorization: Bearer <token>' from Login")
    try:
        return verify(secret, token, time.time())
    except TokenError as err:
        metrics.AUTH_FAILURES.labels("invalid").inc()
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, str(err))
        raise  # unreachable


def other_player(claims: Claims, requested: str) -> str | None:
    """The PERMISSION_DENIED message when ``requested`` names another player, else None."""
    if requested and requested != claims.player_id:
        return f"this token is for player {claims.player_id!r}; it cannot act for {requested!r}"
    return None
