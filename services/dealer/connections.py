"""The connection monitor as the dealer sees it: connection events in, all-in allowance out.

* :class:`ConnectionEvents` — the runtime's consumer loop reading ``cardroom.connection.events``
  (``PlayerConnection`` payloads keyed by player id) from the latest offset, handing each
  change to the event loop; the dealer marks the player's seats connected / disconnected
  (the table rules then use the disconnect rules for his clock: artificial all-in,
  auto-check/fold, auto-draw). A cash player never reported is connected (he sat down over his
  connection); a tournament's player is connected once reported or once he joins his table's feed
  or watches it (``Table.connected_when_seated``).
* :class:`MonitoredAllowance` — the table rules ask an :class:`AllInAllowance` synchronously
  at the moment a clock runs out; this one answers from the monitor's last figure for the
  player (fetched when he disconnects) and reports each use to the monitor (``ConsumeAllIn``,
  idempotent by key). Without an answer from the monitor it counts locally; each call that failed for
  good counts in ``dealer_monitor_calls_failed_total``, and the log says so at most once every
  :data:`WARN_EVERY` seconds with how many failed since (a slow monitor fails thousands at once: one
  line each drowned the log).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Coroutine
from typing import Any

import grpc

from cardroom.core.table import AllInAllowance
from cardroom.runtime.consumer import ConsumerLoop, ConsumerSettings, Record
from cardroom.runtime.deadlines import insecure_channel
from cardroom.runtime.events import decode_envelope
from cardroom.v1 import connection_monitor_pb2 as cm, connection_monitor_pb2_grpc as cm_grpc
from dealer import metrics

log = logging.getLogger("dealer.connections")
DOWN = cm.CONNECTION_STATE_DISCONNECTED
#: Calls to the monitor in flight at once. A gateway lost with its players disconnects thousands at once,
#: and one grpc.aio process with more than about 1,100 unary calls in flight ends some of them CANCELLED
#: on its own (docs/capacity.md, "Capacity at the SLO, and the load generator's own CANCELLED"); the rest
#: wait their turn.
MONITOR_CALLS = 100
#: Seconds between two warnings about failed calls to the monitor (the ones between are counted in the next).
WARN_EVERY = 10.0


class MonitoredAllowance(AllInAllowance):
    """See the module docstring."""

    def __init__(self, per_day: int, address: str | None) -> None:
        super().__init__(per_day)
        #: What the monitor last said a player has left, for the players who have used some: a full
        #: allowance changes nothing (``left`` takes the smaller), so it is not kept (every player who
        #: ever disconnected was, in every replica).
        self.remote: dict[str, int] = {}
        self.channel = insecure_channel(address, 2.0) if address else None
        self.stub = cm_grpc.ConnectionMonitorStub(self.channel) if self.channel else None
        self.tasks: set[asyncio.Task[None]] = set()
        self.calls = asyncio.Semaphore(MONITOR_CALLS)
        self._warned_at: float | None = None  # time.monotonic() of the last warning
        self._unwarned = 0  # calls failed since it

    def left(self, player: str, now: float) -> int:
        local = super().left(player, now)
        return min(local, self.remote[player]) if player in self.remote else local

    def use(self, player: str, now: float) -> None:
        super().use(player, now)
        if player in self.remote:
            self.remote[player] = max(0, self.remote[player] - 1)
        key = f"dealer:{player}:{uuid.uuid4().hex}"
        self._spawn(lambda: self._consume(player, key))

    def refresh(self, player: str) -> None:
        """Ask the monitor how many the player has left (on a disconnect)."""
        self._spawn(lambda: self._fetch(player))

    def _spawn(self, call: Callable[[], Coroutine[Any, Any, None]]) -> None:
        if self.stub is None:
            return
        task = asyncio.get_running_loop().create_task(call())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _fetch(self, player: str) -> None:
        assert self.stub is not None
        try:
            async with self.calls:  # at most MONITOR_CALLS at once
                reply = await self.stub.GetAllInAllowance(cm.GetAllInAllowanceRequest(player_id=player))
            self._heard(player, reply.left)
        except grpc.aio.AioRpcError as err:
            self._failed("GetAllInAllowance", err.code().name, player)

    async def _consume(self, player: str, key: str) -> None:
        assert self.stub is not None
        code = ""
        for _ in range(3):
            try:
                async with self.calls:  # a slot per try: none held while waiting to try again
                    reply = await self.stub.ConsumeAllIn(cm.ConsumeAllInRequest(player_id=player, key=key))
                self._heard(player, reply.allowance.left)
                return
            except grpc.aio.AioRpcError as err:
                if err.code() == grpc.StatusCode.FAILED_PRECONDITION:
                    self._heard(player, 0)
                    return
                code = err.code().name
                await asyncio.sleep(0.5)
        self._failed("ConsumeAllIn", code, player)

    def _failed(self, call: str, code: str, player: str) -> None:
        """A call that failed for good: counted; warned about unless a warning went out in the last
        :data:`WARN_EVERY` seconds (the next one says how many failed meanwhile)."""
        metrics.MONITOR_FAILURES.labels(call, code).inc()
        self._unwarned += 1
        now = time.monotonic()
        if self._warned_at is not None and now - self._warned_at < WARN_EVERY:
            return
        log.warning(
            "connection monitor calls failed: all-in allowances counted at the tables",
            extra={"call": call, "code": code, "player_id": player, "failed": self._unwarned},
        )
        self._warned_at, self._unwarned = now, 0

    def _heard(self, player: str, left: int) -> None:
        if left < self.per_day:
            self.remote[player] = left
        else:
            self.remote.pop(player, None)

    async def close(self) -> None:
        if self.channel is not None:
            await self.channel.close()


class ConnectionEvents:
    """Reads connection changes and calls ``on_change(player_id, connected)`` on the loop."""

    def __init__(
        self, bootstrap: str, topic: str, loop: asyncio.AbstractEventLoop, on_change: Callable[[str, bool], None]
    ) -> None:
        self.bootstrap, self.topic, self.loop, self.on_change = bootstrap, topic, loop, on_change
        settings = ConsumerSettings(
            bootstrap, (topic,), client_id="cardroom-dealer-connections", group_id=None, auto_offset_reset="latest"
        )
        self._consumer = ConsumerLoop(
            settings, self._handle, name="connection-events", after_poll=metrics.observe_consumer(topic)
        )

    def start(self) -> None:
        self._consumer.start()

    def stop(self) -> None:
        self._consumer.stop(5)

    def _handle(self, record: Record) -> None:
        try:
            change = cm.PlayerConnection()
            if not decode_envelope(record.value or b"").payload.Unpack(change) or not change.player_id:
                return
        except Exception:
            return
        self.loop.call_soon_threadsafe(self.on_change, change.player_id, change.state != DOWN)
