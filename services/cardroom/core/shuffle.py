"""Provably fair shuffling: a secret seed per hand, a commitment, and seed -> deck.

The dealer draws a 32-byte seed from the OS CSPRNG (:func:`new_seed`), publishes
``commitment(seed)`` (SHA-256, hex) when the hand starts and reveals the seed after it. The
deck order is a pure function of the seed (:func:`deck_from_seed`): a Fisher-Yates shuffle
of :data:`cardroom.core.cards.DECK` whose random indices come from SHA-256 in counter mode
over the seed, with rejection sampling (no modulo bias). Anyone holding the revealed seed can
recompute the deck and check the cards dealt (``cardroom verify-hand``).

A draw game's stub reshuffle (rules/003) uses :func:`reshuffle_seed`, also derived from the
hand's seed, so it is as unpredictable before the reveal and as verifiable after it.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterator

from cardroom.core.cards import DECK, Card

SEED_BYTES = 32


def new_seed() -> bytes:
    """A fresh secret seed from the operating system's CSPRNG."""
    return secrets.token_bytes(SEED_BYTES)


def commitment(seed: bytes) -> str:
    """The public commitment to ``seed``: its SHA-256 digest in hex."""
    return hashlib.sha256(seed).hexdigest()


def _words(seed: bytes) -> Iterator[int]:
    """An endless stream of 64-bit words: SHA-256(b"deck" || seed || counter) blocks."""
    counter = 0
    while True:
        block = hashlib.sha256(b"deck" + seed + counter.to_bytes(8, "big")).digest()
        for i in range(0, 32, 8):
            yield int.from_bytes(block[i : i + 8], "big")
        counter += 1


def _below(words: Iterator[int], n: int) -> int:
    """A uniform integer in ``[0, n)``: reject words at or above the largest multiple of n."""
    limit = (1 << 64) - (1 << 64) % n
    while True:
        w = next(words)
        if w < limit:
            return w % n


def deck_from_seed(seed: bytes) -> tuple[Card, ...]:
    """The 52-card deck order of a hand (index 0 is dealt first)."""
    if len(seed) < 16:
        raise ValueError("a shuffle seed needs at least 16 bytes")
    cards = list(DECK)
    words = _words(seed)
    for i in range(len(cards) - 1, 0, -1):
        j = _below(words, i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return tuple(cards)


def reshuffle_seed(seed: bytes) -> int:
    """The seed of the stub reshuffle in draw games, derived from the hand's seed."""
    return int.from_bytes(hashlib.sha256(b"reshuffle" + seed).digest()[:8], "big")
