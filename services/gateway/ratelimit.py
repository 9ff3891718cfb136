"""Token buckets keyed by client connection (gRPC peer), by player and by client address, and the
count of open Play streams per player."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(slots=True)
class TokenBucket:
    """``rate`` tokens per second up to ``burst``; each request takes one."""

    rate: float
    burst: float
    tokens: float
    updated: float

    def take(self, now: float) -> bool:
        self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


@dataclass
class RateLimiter:
    """A bucket per key; idle full buckets are forgotten."""

    rate: float
    burst: float
    clock: Callable[[], float] = time.monotonic
    buckets: dict[str, TokenBucket] = field(default_factory=dict)
    _last_prune: float = 0.0

    def allow(self, key: str) -> bool:
        now = self.clock()
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = TokenBucket(self.rate, self.burst, self.burst, now)
        allowed = bucket.take(now)
        if now - self._last_prune > 60:
            self._prune(now)
        return allowed

    def _prune(self, now: float) -> None:
        self._last_prune = now
        full_after = self.burst / self.rate if self.rate > 0 else float("inf")
        for key in [k for k, b in self.buckets.items() if now - b.updated > full_after]:
            del self.buckets[key]


def address_of(peer: str) -> str:
    """The client address of a gRPC peer, without the port: ``"ipv4:1.2.3.4:5678"`` ->
    ``"ipv4:1.2.3.4"``, ``"ipv6:[::1]:5678"`` -> ``"ipv6:[::1]"``; anything else as it is."""
    kind, _, rest = peer.partition(":")
    if kind in ("ipv4", "ipv6") and rest:
        host, sep, port = rest.rpartition(":")
        if sep and port.isdigit():
            return f"{kind}:{host}"
    return peer


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a call was refused: the machine reason and the words for the player."""

    reason: str
    message: str


CONNECTION_LIMITED = "RATE_LIMITED"
PLAYER_LIMITED = "PLAYER_RATE_LIMITED"
ADDRESS_LIMITED = "ADDRESS_RATE_LIMITED"
LOGIN_LIMITED = "LOGIN_LIMITED"
SIGNUP_LIMITED = "SIGNUP_LIMITED"
STREAM_LIMIT = "PLAY_STREAM_LIMIT"


@dataclass
class Limits:
    """Every bucket a call goes through: its connection's, its address's and (once the token is
    known) its player's; plus the password-attempt and sign-up buckets per address."""

    connection: RateLimiter
    address: RateLimiter
    player: RateLimiter
    login: RateLimiter
    signup: RateLimiter

    def check(self, connection: str, address: str, player_id: str = "") -> Refusal | None:
        """Take one token from each bucket of the call (stopping at the first empty one): the
        connection's, the client address's (gateway.caller) and the player's."""
        if not self.connection.allow(connection):
            return Refusal(CONNECTION_LIMITED, f"rate limit: at most {self.connection.rate:g} calls/s per connection")
        if not self.address.allow(address):
            return Refusal(ADDRESS_LIMITED, f"rate limit: at most {self.address.rate:g} calls/s from one address")
        return self.check_player(player_id) if player_id else None

    def check_player(self, player_id: str) -> Refusal | None:
        if not self.player.allow(player_id):
            return Refusal(PLAYER_LIMITED, f"rate limit: at most {self.player.rate:g} calls/s per player")
        return None

    def check_login(self, address: str) -> Refusal | None:
        if not self.login.allow(address):
            return Refusal(
                LOGIN_LIMITED,
                f"too many password attempts from your address: at most {self.login.burst:g}, then one every"
                f" {1 / self.login.rate:g} s"
                if self.login.rate > 0
                else "too many password attempts",
            )
        return None

    def check_signup(self, address: str) -> Refusal | None:
        if not self.signup.allow(address):
            return Refusal(
                SIGNUP_LIMITED,
                f"too many sign-ups from your address: at most {self.signup.burst:g}, then one every"
                f" {1 / self.signup.rate:g} s"
                if self.signup.rate > 0
                else "too many sign-ups from your address",
            )
        return None


@dataclass
class StreamCounter:
    """Open Play streams per player, at most ``cap`` each."""

    cap: int
    open: dict[str, int] = field(default_factory=dict)

    def can_open(self, player_id: str) -> bool:
        return self.open.get(player_id, 0) < self.cap

    def opened(self, player_id: str) -> None:
        self.open[player_id] = self.open.get(player_id, 0) + 1

    def closed(self, player_id: str) -> None:
        left = self.open.get(player_id, 0) - 1
        if left > 0:
            self.open[player_id] = left
        else:
            self.open.pop(player_id, None)
