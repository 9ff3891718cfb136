"""The ConnectionMonitor gRPC servicer: heartbeat streams, silence sweeps, all-in allowance."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable

import grpc

from cardroom.core import ids
from cardroom.runtime import errors
from cardroom.runtime.errors import rpc
from cardroom.runtime.timestamps import timestamp
from cardroom.v1 import connection_monitor_pb2 as pb, connection_monitor_pb2_grpc as pb_grpc
from connection_monitor import metrics
from connection_monitor.allowance import AllowanceBook, NoneLeft, Status
from connection_monitor.archive import PresenceArchive
from connection_monitor.publisher import ConnectionEvents, to_proto
from connection_monitor.tracker import Change, ConnectionTracker, Presence, State

log = logging.getLogger("connection_monitor")

Clock = Callable[[], float]

#: Entries one PresenceBeat may list (a gateway with more players splits its period's beat).
PRESENCE_BEAT_MAX = 5_000
#: How often a sweep also forgets (players disconnected long ago, allowances whose uses all left the
#: window): each pass looks at every record, and nothing is due sooner than a minute makes a difference.
FORGET_EVERY_SECONDS = 60.0


def check_player(player_id: str) -> str:
    """The player id, or :class:`ids.InvalidId` (the one player-id rule of every service)."""
    return ids.verify_player_id(player_id)


def allowance_proto(s: Status) -> pb.AllInAllowance:
    msg = pb.AllInAllowance(
        player_id=s.player_id, left=s.left, per_window=s.per_window, window_seconds=s.window_seconds
    )
    if s.next_restore_at is not None:
        msg.next_restore_at.CopyFrom(timestamp(s.next_restore_at))
    return msg


class ConnectionMonitorService(pb_grpc.ConnectionMonitorServicer):
    """The servicer. With an ``archive``, the sweep forgets the players disconnected for longer than
    the tracker's ``forget_after`` into it (memory, the sweep and ListConnections then grow with the
    players seen lately, not with every player ever seen); without one, nobody is forgotten."""

    def __init__(
        self,
        tracker: ConnectionTracker,
        book: AllowanceBook,
        events: ConnectionEvents,
        clock: Clock = time.time,
        archive: PresenceArchive | None = None,
    ) -> None:
        self.tracker = tracker
        self.book = book
        self.events = events
        self.clock = clock
        self.archive = archive
        self._next_forget = float("-inf")

    def _apply(self, change: Change | None) -> None:
        if change is None:
            return
        if change.state is State.DISCONNECTED:
            metrics.DISCONNECTS.inc()
        elif change.state is State.RECONNECTED:
            metrics.RECONNECTS.inc()
            metrics.RECONNECT_SECONDS.observe(change.offline_seconds)
        metrics.CONNECTED.set(self.tracker.connected_count())
        log.info(
            "player connection",
            extra={
                "player_id": change.player_id,
                "state": change.state.name.lower(),
                "offline_s": round(change.offline_seconds, 3),
            },
        )
        self.events.publish(change)

    def sweep(self) -> None:
        """Disconnect the silent players now; forget what no rule needs any more (at most once
        every :data:`FORGET_EVERY_SECONDS`; a failure there is logged and never stops the sweeps,
        which disconnect the silent players the disconnect rules protect)."""
        now = self.clock()
        for change in self.tracker.sweep(now):
            self._apply(change)
        if now >= self._next_forget:
            self._next_forget = now + FORGET_EVERY_SECONDS
            try:
                self.forget(now)
            except Exception:
                log.exception("forgetting failed; tried again at the next pass")

    def forget(self, now: float) -> None:
        """Spent allowances (a full allowance needs no record) and, with an archive, the players
        disconnected for longer than ``forget_after``: kept on disk first, then dropped here with
        their event sequences (:class:`ConnectionEvents` explains why the next still rises)."""
        self.book.forget(now)
        if self.archive is None:
            return
        gone = self.tracker.forgettable(now)
        self.archive.keep(gone)
        self.tracker.forget(gone)
        self.events.forget(p.player_id for p in gone)

    async def run_sweeper(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            self.sweep()

    def _presence(self, player_id: str) -> Presence | None:
        """The player's record: in memory, or as he was forgotten (None: never seen)."""
        presence = self.tracker.players.get(player_id)
        if presence is None and self.archive is not None:
            presence = self.archive.find(player_id)
        return presence

    def _heartbeat(self, player_id: str, now: float, session_id: str) -> None:
        """A forgotten player's record comes back first: his heartbeat is then a RECONNECTED with his
        real time offline, as for a player never forgotten (a never-seen one's is a CONNECTED)."""
        if player_id not in self.tracker.players and (presence := self._presence(player_id)) is not None:
            self.tracker.restore(presence)
            if self.archive is not None:
                self.archive.drop(player_id)
        self._apply(self.tracker.heartbeat(player_id, now, session_id))

    @staticmethod
    async def _player(context: grpc.aio.ServicerContext, player_id: str) -> str:
        return check_player(player_id)  # InvalidId: INVALID_ARGUMENT through @rpc

    @rpc
    async def Heartbeats(
        self, request_iterator: AsyncIterator[pb.Heartbeat], context: grpc.aio.ServicerContext
    ) -> pb.HeartbeatsSummary:
        received, player = 0, None
        async for beat in request_iterator:
            await self._player(context, beat.player_id)
            if player is None:
                player = beat.player_id
            elif beat.player_id != player:
                raise errors.invalid(
                    f"player_id: one stream carries one player ({player!r}), got {beat.player_id!r}",
                    reason="ONE_PLAYER_PER_STREAM",
                )
            received += 1
            metrics.HEARTBEATS.inc()
            self._heartbeat(player, self.clock(), beat.session_id)
        return pb.HeartbeatsSummary(received=received, players=received)

    @staticmethod
    def _alive(beat: pb.PresenceBeat) -> list[pb.Heartbeat]:
        """The beat's entries, every one checked before any is applied (a bad one refreshes nobody)."""
        if len(beat.alive) > PRESENCE_BEAT_MAX:
            raise errors.invalid(
                f"alive: at most {PRESENCE_BEAT_MAX} entries per message, got {len(beat.alive)};"
                " send the period's players in several messages",
                reason="TOO_MANY_ENTRIES",
            )
        for i, entry in enumerate(beat.alive):
            ids.verify_player_id(entry.player_id, field=f"alive[{i}].player_id")
        return list(beat.alive)

    @rpc
    async def GatewayHeartbeats(
        self, request_iterator: AsyncIterator[pb.PresenceBeat], context: grpc.aio.ServicerContext
    ) -> pb.HeartbeatsSummary:
        """One gateway's stream: every message refreshes each player it lists."""
        received = players = 0
        async for beat in request_iterator:
            alive = self._alive(beat)
            received, players = received + 1, players + len(alive)
            metrics.HEARTBEATS.inc(len(alive))
            now = self.clock()
            for entry in alive:
                self._heartbeat(entry.player_id, now, entry.session_id)
        return pb.HeartbeatsSummary(received=received, players=players)

    @rpc
    async def GetConnection(
        self, request: pb.GetConnectionRequest, context: grpc.aio.ServicerContext
    ) -> pb.PlayerConnection:
        await self._player(context, request.player_id)
        presence = self._presence(request.player_id)
        if presence is None:
            raise errors.not_found(f"player {request.player_id!r} has never sent a heartbeat", reason="NEVER_SEEN")
        return to_proto(presence)

    @rpc
    async def ListConnections(
        self, request: pb.ListConnectionsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListConnectionsResponse:
        """The players in memory: those online and those disconnected within ``forget_after`` (the
        ones forgotten before are still answered one by one by GetConnection)."""
        players = sorted(self.tracker.players.values(), key=lambda p: p.player_id)
        return pb.ListConnectionsResponse(
            connections=[to_proto(p) for p in players], connected=self.tracker.connected_count()
        )

    @rpc
    async def GetAllInAllowance(
        self, request: pb.GetAllInAllowanceRequest, context: grpc.aio.ServicerContext
    ) -> pb.AllInAllowance:
        await self._player(context, request.player_id)
        return allowance_proto(self.book.status(request.player_id, self.clock()))

    @rpc
    async def ConsumeAllIn(
        self, request: pb.ConsumeAllInRequest, context: grpc.aio.ServicerContext
    ) -> pb.ConsumeAllInResponse:
        await self._player(context, request.player_id)
        if not request.key:
            raise errors.invalid("key: required (e.g. '<hand id>:<seat>')")
        try:
            status, replayed = self.book.consume(request.player_id, request.key, self.clock())
        except NoneLeft as err:
            metrics.ALL_INS.labels("none_left").inc()
            raise errors.precondition(str(err), reason="NO_ALL_IN_LEFT") from None
        except ValueError as err:
            raise errors.exists(str(err), reason="KEY_REUSED") from None
        metrics.ALL_INS.labels("replayed" if replayed else "used").inc()
        log.info(
            "artificial all-in",
            extra={"player_id": request.player_id, "key": request.key, "left": status.left, "replayed": replayed},
        )
        return pb.ConsumeAllInResponse(allowance=allowance_proto(status), replayed=replayed)

    @rpc
    async def ResetAllInAllowance(
        self, request: pb.ResetAllInAllowanceRequest, context: grpc.aio.ServicerContext
    ) -> pb.AllInAllowance:
        await self._player(context, request.player_id)
        status = self.book.reset(request.player_id, self.clock())
        log.info("artificial all-in allowance reset", extra={"player_id": request.player_id, "reason": request.reason})
        return allowance_proto(status)
