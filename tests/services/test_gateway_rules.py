"""Login tokens and per-connection token buckets, with time as an input (no process)."""

from __future__ import annotations

import pytest

from gateway.ratelimit import RateLimiter
from gateway.tokens import TokenError, issue, verify

SECRET = b"test-secret"


def test_token_round_trip_and_rejections() -> None:
    token = issue(SECRET, "alice", 1000)
    assert verify(SECRET, token, 999).player_id == "alice"
    with pytest.raises(TokenError, match="expired"):
        verify(SECRET, token, 1000)
    with pytest.raises(TokenError, match="signature"):
        verify(b"other-secret", token, 0)
    forged = token.replace("alice", "bobby")
    with pytest.raises(TokenError, match="signature"):
        verify(SECRET, forged, 0)
    longer = token.replace(".1000.", ".9000.")
    with pytest.raises(TokenError, match="signature"):
        verify(SECRET, longer, 0)
    for bad in ("", "x", "cr1.alice.1000", "cr2.alice.1000.sig", "cr1.al ice.1000.sig", "cr1.alice.-5.sig"):
        with pytest.raises(TokenError, match="malformed"):
            verify(SECRET, bad, 0)
    with pytest.raises(ValueError):
        issue(SECRET, "no.dots", 1000)


def test_token_bucket_per_connection() -> None:
    now = [0.0]
    limiter = RateLimiter(rate=2, burst=3, clock=lambda: now[0])
    assert [limiter.allow("a") for _ in range(4)] == [True, True, True, False]
    assert limiter.allow("b")                       # another connection has its own bucket
    now[0] = 0.5                                    # one token back
    assert limiter.allow("a") and not limiter.allow("a")
    now[0] = 100.0                                  # refills to the burst, not beyond
    assert [limiter.allow("a") for _ in range(4)] == [True, True, True, False]
