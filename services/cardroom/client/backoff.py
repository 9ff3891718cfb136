"""How long a client waits before it tries again: each wait drawn at random around its nominal length
("equal jitter": between half and one and a half times it), so that clients that failed together — a
gateway restart, a network drop of many players — do not come back together and fail together again.

The web client's reconnection (web/src/backoff.ts) follows the same rule."""

from __future__ import annotations

import random

#: Bounds of a wait, as shares of its nominal length (their mean is 1: on average as long as nominal).
LOW, HIGH = 0.5, 1.5


def jittered(seconds: float, rng: random.Random | None = None) -> float:
    """``seconds`` times a share drawn uniformly between :data:`LOW` and :data:`HIGH`."""
    return seconds * (rng or random).uniform(LOW, HIGH)


def reconnect_delay(attempt: int, rng: random.Random | None = None, base: float = 0.5, cap: float = 5.0) -> float:
    """The wait before reconnection ``attempt`` (1 = the first): ``base`` doubled per attempt up to ``cap``,
    jittered."""
    if attempt < 1:
        raise ValueError(f"attempt: {attempt} (the first is 1)")
    return jittered(min(cap, base * 2 ** min(attempt - 1, 16)), rng)
