"""The players whose Play or WatchMyTable stream is open on this gateway, and the one heartbeat
stream that tells the connection monitor so (``ConnectionMonitor/GatewayHeartbeats``): every period
one message listing all of them, instead of a stream per player. A player is listed while any of
his sessions is open; one newly listed is sent at once rather than at the next period. The stream
is opened again with a growing pause while the monitor is down; a session only adds or removes its
player here, it never waits on the monitor."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Iterable

import grpc

from cardroom.v1 import connection_monitor_pb2 as cm, connection_monitor_pb2_grpc as cm_grpc
from gateway import metrics
from gateway.streams import STREAM_TIMEOUT

log = logging.getLogger("gateway.presence")

#: Players per message: a period with more open players is sent as several messages. The monitor
#: refuses more than 5,000 entries in one (``PresenceBeat``).
BEAT_PLAYERS = 1_000
#: The first pause before the stream is opened again after a failure; it doubles up to the period.
RETRY_FIRST_SECONDS = 0.1


class Presence:
    """The open sessions by player and the task beating them to the connection monitor
    (``monitor`` None: the monitor is off, the sessions are still counted and nothing is sent)."""

    def __init__(self, monitor: cm_grpc.ConnectionMonitorStub | None, period: float) -> None:
        self.monitor = monitor
        self.period = period
        self._open: dict[str, dict[str, None]] = {}
        """Each listed player's open sessions by id, oldest first (his entry carries the latest)."""
        self._fresh: set[str] = set()
        """Players listed since the last message: sent without waiting for the period."""
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stream_messages = 0
        """Messages taken by the current stream (past the first: it got through to the monitor)."""
        self._period_beats: list[cm.PresenceBeat] | None = None
        """The period's messages listing every player, kept until a session opens or ends (at 6,000
        players, 5 ms of the gateway's main thread a period in-process, 5 % of its samples by py-spy
        at 1,000 tables: docs/capacity.md)."""

    # ---------------------------------------------------------------- the sessions

    def enter(self, player_id: str, session_id: str) -> None:
        """A session of ``player_id`` opened: he is listed until his last session leaves."""
        sessions = self._open.setdefault(player_id, {})
        if not sessions:
            self._fresh.add(player_id)
            self._wake.set()
        sessions[session_id] = None
        self._period_beats = None
        metrics.PRESENT_PLAYERS.set(len(self._open))

    def leave(self, player_id: str, session_id: str) -> None:
        """The session ended: its player is no longer listed unless another session of his is open."""
        sessions = self._open.get(player_id)
        if sessions is None:
            return
        sessions.pop(session_id, None)
        self._period_beats = None
        if not sessions:
            del self._open[player_id]
            self._fresh.discard(player_id)
        metrics.PRESENT_PLAYERS.set(len(self._open))

    def alive(self) -> list[cm.Heartbeat]:
        """One entry per listed player, with his latest session's id."""
        return [entry for beat in self.period_beats() for entry in beat.alive]

    def period_beats(self) -> list[cm.PresenceBeat]:
        """Every listed player as the period's messages (:data:`BEAT_PLAYERS` each; one empty message
        when nobody is listed), made again only after a session opened or ended."""
        if self._period_beats is None:
            self._period_beats = self._messages(self._open)
        return self._period_beats

    def _messages(self, players: Iterable[str]) -> list[cm.PresenceBeat]:
        beats = [cm.PresenceBeat()]
        for player in players:
            if len(beats[-1].alive) == BEAT_PLAYERS:
                beats.append(cm.PresenceBeat())
            beats[-1].alive.add(player_id=player, session_id=next(reversed(self._open[player])))
        return beats

    # ---------------------------------------------------------------- the stream

    def start(self) -> None:
        """Begin beating (in the running loop; nothing without a monitor)."""
        if self.monitor is not None and self._task is None:
            self._task = asyncio.create_task(self._run(), name="gateway-presence")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        assert self.monitor is not None
        pause = RETRY_FIRST_SECONDS
        while True:
            self._stream_messages = 0
            try:
                await self.monitor.GatewayHeartbeats(self._beats(), timeout=STREAM_TIMEOUT)
            except grpc.aio.AioRpcError as err:
                metrics.HEARTBEAT_FAILURES.inc()
                log.warning("heartbeat stream failed", extra={"code": err.code().name, "players": len(self._open)})
            except Exception:  # anything else too: this one task keeps every player of the gateway connected
                metrics.HEARTBEAT_FAILURES.inc()
                log.exception("heartbeat stream failed", extra={"players": len(self._open)})
            if self._stream_messages > 1:  # the monitor had the stream: it went away just now
                pause = RETRY_FIRST_SECONDS
            await asyncio.sleep(pause)
            pause = min(self.period, pause * 2)

    async def _beats(self) -> AsyncIterator[cm.PresenceBeat]:
        """Every period every listed player (the stream's first message too); in between, at once,
        the players listed since the last message."""
        loop = asyncio.get_running_loop()
        due = loop.time()
        while True:
            self._wake.clear()
            fresh, self._fresh = self._fresh, set()
            full = loop.time() >= due
            if full:
                due = loop.time() + self.period
            beats = self.period_beats() if full else self._messages(fresh) if fresh else []
            for beat in beats:  # an empty period still beats: a monitor gone is noticed
                self._stream_messages += 1
                yield beat
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(0.0, due - loop.time())):
                    await self._wake.wait()
