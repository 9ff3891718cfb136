"""Fuzzed request values for the bounded fuzz tests of real service processes (issue 14, "Proof kept
in the suite": "A fuzz test (bounded, a few thousand requests per service, fixed seed) with 0
UNKNOWN/INTERNAL and state unchanged by rejected requests")."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

import grpc

from cardroom.v1 import dealer_pb2 as d
from tests.services.trusted import INT64_MAX

T = TypeVar("T")

FORBIDDEN = frozenset(
    {
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
    }
)
INT64_MIN, INT32_MAX, INT32_MIN = -(2**63), 2**31 - 1, -(2**31)


def text(rng: random.Random, pool: list[str]) -> str:
    roll = rng.random()
    if roll < 0.55:
        return rng.choice(pool)
    if roll < 0.65:
        return rng.choice(["", " ", ":", "::", "\x00", "a\x00b", "\x1b[2J", "\u00b2", "\u0663", "\ufeff", "\u202e"])
    if roll < 0.75:
        return rng.choice(["x", "\u00e9", "\U0001f600", "9", ":"]) * rng.choice([199, 200, 201, 5_000, 20_000])
    if roll < 0.9:
        alphabet = "abcXYZ019_.-:/\\ '\"%{}\u00e9\U0001f600\x01"
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 80)))
    return str(rng.choice(pool)).replace(":", rng.choice([":", ";", "::", ""]), 1)


def integer(rng: random.Random, bounds: list[int]) -> int:
    edges = [
        0,
        1,
        -1,
        2,
        INT64_MAX,
        INT64_MIN,
        INT64_MAX - 1,
        *bounds,
        *(b + 1 for b in bounds),
        *(b - 1 for b in bounds),
    ]
    return rng.choice(edges) if rng.random() < 0.7 else rng.randint(-(10**6), 10**6)


def enum(rng: random.Random, valid: list[int]) -> int:
    return rng.choice(valid) if rng.random() < 0.7 else rng.choice([0, 42, -1, INT32_MAX, INT32_MIN])


def garbage(rng: random.Random, valid: bytes) -> bytes:
    """Bytes that are mostly not a valid message: random, truncated, or with a byte flipped."""
    roll = rng.random()
    if roll < 0.4 or not valid:
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    if roll < 0.7:
        return valid[: rng.randrange(len(valid))] + bytes([rng.randrange(256)])
    flipped = bytearray(valid)
    flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
    return bytes(flipped)


def answer(
    channel: grpc.Channel, method: str, body: bytes, metadata: Sequence[tuple[str, str]] = ()
) -> grpc.StatusCode:
    """The status of calling ``method`` (a full path) with the raw ``body``."""
    call = channel.unary_unary(method, request_serializer=None, response_deserializer=None)
    try:
        call(body, timeout=30, metadata=tuple(metadata))
    except grpc.RpcError as err:
        return err.code()
    return grpc.StatusCode.OK


def settled(read: Callable[[], T], pause: float = 0.3, timeout: float = 20.0) -> T:
    """``read()`` once two reads ``pause`` apart agree (what an accepted request set off has landed)."""
    deadline = time.monotonic() + timeout
    last = read()
    while True:
        time.sleep(pause)
        now = read()
        if now == last:
            return now
        assert time.monotonic() < deadline, "the dealer and the wallet did not settle"
        last = now


def state_key(state: d.TableState) -> bytes:
    """The table state without the clock's deadline (equal states, equal keys)."""
    copy = d.TableState()
    copy.CopyFrom(state)
    copy.to_act.ClearField("deadline")
    return copy.SerializeToString(deterministic=True)
