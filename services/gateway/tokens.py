"""Login tokens: "cr1.<player>.<expiry>.<sig>", sig = base64url(HMAC-SHA256(secret, "cr1.<player>.<expiry>"))."""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass

from cardroom.core.ids import is_player_id, verify_player_id

VERSION = "cr1"


class TokenError(Exception):
    """The token is missing, malformed, forged or expired (the message says which)."""


@dataclass(frozen=True, slots=True)
class Claims:
    player_id: str
    expires_at: int


def _signature(secret: bytes, body: str) -> str:
    digest = hmac.new(secret, body.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def issue(secret: bytes, player_id: str, expires_at: int) -> str:
    verify_player_id(player_id)  # no '.', which separates the token's parts
    body = f"{VERSION}.{player_id}.{expires_at}"
    return f"{body}.{_signature(secret, body)}"


def verify(secret: bytes, token: str, now: float) -> Claims:
    parts = token.split(".")
    if len(parts) != 4 or parts[0] != VERSION:
        raise TokenError("malformed token")
    _, player_id, expiry, signature = parts
    if not is_player_id(player_id) or not expiry.isdigit():
        raise TokenError("malformed token")
    if not hmac.compare_digest(signature, _signature(secret, f"{VERSION}.{player_id}.{expiry}")):
        raise TokenError("bad token signature")
    if int(expiry) <= now:
        raise TokenError("token expired; log in again")
    return Claims(player_id, int(expiry))
