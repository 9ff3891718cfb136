"""One load-test player for the fast tests: its table and settings given, the rest fixed (a fresh
recorder and hand counter, not stopping, a seeded choice of actions)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator

from cardroom.client.loadtest.player import HandCounter, Player
from cardroom.client.loadtest.recorder import Recorder
from cardroom.client.loadtest.settings import LoadSettings
from cardroom.v1 import dealer_pb2 as d, gateway_pb2 as g


def load_player(player_id: str, table: d.TableInfo, **settings: object) -> Player:
    """``player_id`` at ``table``; ``settings`` are LoadSettings' own (the gateway is never dialled)."""
    recorder = Recorder()
    return Player(
        player_id=player_id,
        table=table,
        settings=LoadSettings(gateway="unused:1", operator_token="x", **settings),  # type: ignore[arg-type]
        recorder=recorder,
        hands=HandCounter(recorder),
        stopping=asyncio.Event(),
        rng=random.Random(1),
    )


class QueuedStream:
    """A Play stream whose events a test queues (``None`` ends it), read as a PlayStream is: event by
    event, or as ``(kind, message)`` items (what the load test's player reads)."""

    def __init__(self) -> None:
        self.events: asyncio.Queue[g.PlayEvent | None] = asyncio.Queue()

    def __aiter__(self) -> QueuedStream:
        return self

    async def __anext__(self) -> g.PlayEvent:
        event = await self.events.get()
        if event is None:
            raise StopAsyncIteration
        return event

    async def items(self) -> AsyncIterator[tuple[str, object]]:
        async for event in self:
            kind = event.WhichOneof("kind")
            assert kind is not None
            yield kind, getattr(event, kind)
