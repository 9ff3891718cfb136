"""Seat commands a bot sends between hands (add chips, come back), each with its request id, and
sent again with the same id while the room answers UNAVAILABLE or the answer runs out of time.

Why: no hand starts while a seated player is short or sitting out, so a command tried once per hand
is never tried again when it fails at the table's last hand — the table stays idle for good. That
was the chaos test's finding after the wallet's kill -9 (issue 14): a bot busted while the wallet
restarted, its top-up came back UNAVAILABLE, and no hand came to bring a second try. The dealer
takes the same request id again as one command (idempotent), so a retry never buys in twice.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable

from cardroom.v1 import gateway_pb2 as g

#: How long a refused seat command waits before it is sent again.
RETRY_SECONDS = 1.0
#: Codes of a room that is restarting or reconnecting, or whose answer did not come in time (sent
#: again, the same request id: the dealer applies it once); any other answer is final. A deadline:
#: the chaos test's table frozen after the broker's kill -9 — the top-ups of two busted bots waited
#: behind snapshot writes the broker could not take, came back DEADLINE_EXCEEDED and were never sent again.
RETRIED = frozenset({"UNAVAILABLE", "DEADLINE_EXCEEDED"})

_NAMES = {g.SeatCommand.KIND_ADD_CHIPS: "add", g.SeatCommand.KIND_COME_BACK: "back"}


class SeatCommands:
    """The seat commands awaiting their answer, by request id (see the module docstring)."""

    def __init__(
        self, send: Callable[[g.PlayRequest], Awaitable[object]], retry_seconds: float = RETRY_SECONDS
    ) -> None:
        self._send, self.retry_seconds = send, retry_seconds
        self.pending: dict[str, g.PlayRequest] = {}
        self.retries = 0
        self._tasks: set[asyncio.Task[None]] = set()

    def awaiting(self, kind: g.SeatCommand.Kind) -> bool:
        """Is a command of ``kind`` sent and not answered yet (or waiting to be sent again)?"""
        return any(r.seat.kind == kind for r in self.pending.values())

    async def send(self, kind: g.SeatCommand.Kind, amount: int = 0) -> str:
        rid = f"seat-{_NAMES.get(kind, 'cmd')}-{uuid.uuid4().hex[:10]}"
        request = g.PlayRequest(request_id=rid, seat=g.SeatCommand(kind=kind, amount=amount))
        self.pending[rid] = request
        await self._send(request)
        return rid

    def answered(self, event: g.PlayEvent) -> bool:
        """Take a result or error of the Play stream; True when it answers one of these commands.
        An UNAVAILABLE error sends the command again after ``retry_seconds``."""
        kind = event.WhichOneof("kind")
        if kind not in ("result", "error"):
            return False
        rid = getattr(event, kind).request_id
        request = self.pending.pop(rid, None)
        if request is None:
            return False
        if kind == "error" and event.error.code in RETRIED:
            self.pending[rid] = request
            task = asyncio.create_task(self._again(rid))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return True

    async def _again(self, rid: str) -> None:
        await asyncio.sleep(self.retry_seconds)
        request = self.pending.get(rid)
        if request is not None:
            self.retries += 1
            await self._send(request)

    async def resend_all(self) -> None:
        """After a reconnect: the commands whose answer the broken stream took with it, again."""
        for request in list(self.pending.values()):
            await self._send(request)

    def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
