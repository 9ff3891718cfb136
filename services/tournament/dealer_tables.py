"""The :class:`~tournament.tables.TablePort` on the dealer: ``cardroom.v1.TournamentTables`` over
gRPC (mutual TLS as ``tournament``, the only identity the dealer lets run tournament tables) and the
dealer's events on Kafka ``cardroom.tournament.tables`` (keyed by tournament id) read back as
:class:`~tournament.tables.HandEnded`.

It keeps the in-process port's mirror of who sits where and its contract checks
(:class:`~tournament.inprocess.InProcessTables`: nobody seated twice, no move from an empty seat),
so the runner reads the same ``seated()`` from either. Every command is kept until the step that
made it is committed to the store (:meth:`DealerTables.release`, from ``Runner.flush``), then sent
in order by one task (:meth:`DealerTables.run`), again with the same ``command_id`` until the
dealer answers; how many were answered is stored, so a replay after a restart sends only the rest.
The ids are the tournament's and the command's number in it: a replay makes the same ids, and the
dealer applies each once. An event the dealer sends again after its own restart (the same
sequence) is heard once.

Commands carry ``version`` 0 (no expectation): the tournament service is the tables' only writer,
the ids keep retries and replays harmless. A refusal (the dealer changed nothing) is logged and
counted — a bug of the contract, never retried.

With dealer shards (a :class:`~cardroom.runtime.directory.DealerDirectory`, ``DEALER_DIRECTORY_TOPIC``)
each command goes to the replica that deals its table (a move: the table the player leaves), through
the runtime's :class:`~cardroom.runtime.routing.TableRouter`: a command that finds its table gone
(UNAVAILABLE) is sent again to the new owner the directory names; without a directory,
to ``DEALER_ADDR``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc

from cardroom.core import ids
from cardroom.core.engine import Stakes
from cardroom.runtime.consumer import ConsumerLoop, ConsumerSettings, Record
from cardroom.runtime.deadlines import FROM_ENV, channel
from cardroom.runtime.directory import DealerDirectory
from cardroom.runtime.events import decode_envelope
from cardroom.runtime.routing import TableRouter
from cardroom.runtime.trust import TlsFiles
from cardroom.v1 import tournament_tables_pb2 as tt, tournament_tables_pb2_grpc as tt_grpc
from tournament import metrics
from tournament.inprocess import InProcessTables
from tournament.tables import HandAction, HandEnded

log = logging.getLogger("tournament.dealer_tables")
_RETRYABLE = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.RESOURCE_EXHAUSTED}
)


@dataclass(frozen=True)
class TableShape:
    """What the dealer needs to open a tournament's tables (the tournament's settings)."""

    variant: str
    seat_count: int
    action_seconds: float
    time_bank_seconds: float = 0.0
    time_bank_when_disconnected: bool = False
    deal_on_request: bool = False
    """The tournament clocks the deals (:meth:`DealerTables.deal`), as the core deals its own hands."""


def wire_stakes(stakes: Stakes, level: int = 0) -> tt.TournamentStakes:
    """A level's engine stakes as tournament_tables.proto carries them."""
    return tt.TournamentStakes(
        level=level,
        small_blind=stakes.small_blind,
        big_blind=stakes.big_blind,
        ante=stakes.ante,
        big_blind_ante=stakes.big_blind_ante,
        button_ante=stakes.button_ante,
        small_bet=stakes.small_bet,
        big_bet=stakes.big_bet,
        bring_in=stakes.bring_in,
    )


def hand_ended(event: tt.TournamentHandEnded, sequence: int = 0) -> HandEnded:
    """The port's hand result (the actions are in the event, for a tournament that replays them;
    ``sequence``: the event's at its table)."""
    return HandEnded(
        event.tournament_id,
        event.table,
        int(event.hand_number),
        {s.seat: s.chips for s in event.starting},
        {s.seat: s.chips for s in event.ending},
        tuple(event.busted_seats),
        event.rolled_back,
        tuple(HandAction(a.seat, a.kind, a.amount or None, tuple(a.discards)) for a in event.actions),
        sequence,
        {s.seat: s.time_bank_left for s in event.ending if s.HasField("time_bank_left")},
    )


def command_table(method: str, request: Any) -> str:
    """The dealer's id of the table a command is about (a move: the table he leaves), routed by;
    empty when the command names no valid table (any replica refuses it, INVALID_ARGUMENT)."""
    table = request.from_table if method == "MoveTournamentPlayer" else request.table
    try:
        return ids.tournament_table_id(request.tournament_id, table)
    except ids.InvalidId:
        return ""


class DealerTables(InProcessTables):
    """The tables of every tournament of this service, on the dealer (module docstring)."""

    def __init__(
        self,
        address: str,
        *,
        bootstrap: str | None,
        topic: str = "cardroom.tournament.tables",
        group: str | None = None,
        tls: TlsFiles | None | str = FROM_ENV,
        retry_seconds: float = 0.5,
        directory: DealerDirectory | None = None,
    ) -> None:
        """``address``: the dealer (``DEALER_ADDR``); ``directory`` (started, stopped by :meth:`close`):
        the dealer replicas' claims, each table's commands go to its owner (None: all to ``address``)."""
        super().__init__()
        self.channel = channel(address, tls=tls)
        self.stub = tt_grpc.TournamentTablesStub(self.channel)
        self.directory = directory
        self.router = TableRouter(
            self.stub,
            tt_grpc.TournamentTablesStub,
            directory,
            fallback_address=address,
            connect=lambda target: channel(target, tls=tls, server_name="dealer"),
        )
        self.shapes: dict[str, TableShape] = {}
        self.retry_seconds = retry_seconds
        self.sent = 0
        self.refused = 0
        self._numbers: dict[str, int] = {}
        self._pending: dict[str, list[tuple[str, Any, int]]] = {}
        self._queue: asyncio.Queue[tuple[str, Any, int]] = asyncio.Queue()
        self.skip: dict[str, int] = {}
        """tournament id -> the commands answered before a restart (not sent again by the replay)."""
        self._answered: dict[str, int] = {}  # tournament id -> commands the dealer answered (in order)
        self._placing: dict[tuple[str, str], int] = {}
        self._stood_up: set[tuple[str, int, int]] = set()
        """(tournament, table, seat) of players who busted there and may re-buy: the dealer's table
        stood them up at the end of the hand, so a re-buy seats them again."""
        """(tournament, player) -> the command that seats him where the mirror has him (open, seat, move)."""
        self.on_acked: Callable[[str, int], None] | None = None
        """Called with (tournament id, command number) once the dealer answered it (the store keeps it)."""
        self._lock = threading.Condition()
        self._heard: list[HandEnded] = []
        self._unapplied = 0  # hands heard whose step is not stored yet (the consumer commits after)
        self._taken = 0  # of those, handed to the house by hands_ended()
        self.apply_timeout = 30.0
        self._last: dict[tuple[str, int], int] = {}  # (tournament, table) -> last event sequence heard
        self._consumer: ConsumerLoop | None = None
        if bootstrap:
            settings = ConsumerSettings(
                bootstrap,
                (topic,),
                client_id="cardroom-tournament-tables",
                # committed offsets: a restart reads on from what its store holds, not the whole topic
                group_id=group or f"tournament.{topic}",
                auto_offset_reset="earliest",
            )
            self._consumer = ConsumerLoop(
                settings, self._handle, name="tournament-tables", before_commit=self._await_applied
            )

    # ------------------------------------------------------------------ lifecycle
    def configure(self, tournament_id: str, shape: TableShape) -> None:
        """The table settings of ``tournament_id`` (before its first table opens)."""
        self.shapes[tournament_id] = shape

    def start(self) -> None:
        if self._consumer is not None:
            self._consumer.start()

    async def close(self) -> None:
        if self._consumer is not None:
            await asyncio.get_running_loop().run_in_executor(None, self._consumer.stop)
        if self.directory is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.directory.stop)
        await self.router.close()
        await self.channel.close()

    async def flush(self) -> None:
        """Wait until every queued command has been answered (tests, shutdown)."""
        await self._queue.join()

    def release(self, tournament_id: str) -> None:
        """The step that made the commands is committed (the store can replay it): send them, but
        those the dealer answered before a restart."""
        for method, request, number in self._pending.pop(tournament_id, []):
            if number > self.skip.get(tournament_id, 0):
                self._queue.put_nowait((method, request, number))

    async def run(self) -> None:
        """Send the released commands in order (each until the dealer answers)."""
        while True:
            method, request, number = await self._queue.get()
            try:
                await self._send(method, request)
                self._answered[request.tournament_id] = number
                if self.on_acked is not None:
                    self.on_acked(request.tournament_id, number)
            finally:
                self._queue.task_done()

    async def _send(self, method: str, request: Any) -> None:
        def call(stub: tt_grpc.TournamentTablesStub) -> Awaitable[tt.TournamentTableState]:
            send: Callable[..., Awaitable[tt.TournamentTableState]] = getattr(stub, method)
            return send(request, timeout=10)

        table_id = command_table(method, request)
        while True:
            try:
                await self.router.call(table_id, call)
                self.sent += 1
                return
            except grpc.aio.AioRpcError as err:
                if err.code() in _RETRYABLE:
                    log.warning(
                        "dealer unavailable; the table command waits",
                        extra={"method": method, "command_id": request.command_id, "code": err.code().name},
                    )
                    await asyncio.sleep(self.retry_seconds)
                    continue
                self.refused += 1
                metrics.DEALER_DISAGREES.labels("refused").inc()
                log.error(
                    "table command refused by the dealer",
                    extra={"method": method, "command_id": request.command_id, "error": err.details()},
                )
                return

    def placed(self, tournament_id: str, player: str) -> bool:
        """Is ``player`` at the dealer's table where the tournament has him? Not until the dealer
        answered the command that seats him there (opening the table, seating, moving him): a
        client sent to his table before that would find no table, or not find himself at it."""
        number = self._placing.get((tournament_id, player))
        if number is None:
            return True
        return max(self._answered.get(tournament_id, 0), self.skip.get(tournament_id, 0)) >= number

    def settled(self, tournament_id: str) -> bool:
        """Every table command of ``tournament_id`` is released and answered (or was before a
        restart): none is waiting for its step or for the dealer."""
        if self._pending.get(tournament_id):
            return False
        done = max(self._answered.get(tournament_id, 0), self.skip.get(tournament_id, 0))
        return done >= self._numbers.get(tournament_id, 0)

    def forget(self, tournament_id: str) -> None:
        """``tournament_id`` is over and left the house (:meth:`settled` first): every map keyed by it
        lets it go. A hand result the dealer sends again later is heard, then skipped by the house
        (no such tournament in play)."""
        super().forget(tournament_id)
        self.shapes.pop(tournament_id, None)
        self._pending.pop(tournament_id, None)
        for count in (self._numbers, self.skip, self._answered):
            count.pop(tournament_id, None)
        for placing in [k for k in self._placing if k[0] == tournament_id]:
            del self._placing[placing]
        self._stood_up = {k for k in self._stood_up if k[0] != tournament_id}
        with self._lock:
            for heard in [k for k in self._last if k[0] == tournament_id]:
                del self._last[heard]

    def _command_id(self, tournament_id: str) -> str:
        number = self._numbers.get(tournament_id, 0) + 1
        self._numbers[tournament_id] = number
        return f"{tournament_id}:{number}"

    def _queue_call(self, method: str, request: Any) -> None:
        """Kept until :meth:`release`: a command is sent only once the step that made it is stored."""
        number = self._numbers[request.tournament_id]
        self._pending.setdefault(request.tournament_id, []).append((method, request, number))

    # ------------------------------------------------------------------ the port's commands
    def open_table(
        self,
        tournament_id: str,
        table: int,
        seats: dict[int, tuple[str, int]],
        stakes: Stakes,
        seat_count: int = 0,
        time_banks: dict[int, float] | None = None,
    ) -> None:
        super().open_table(tournament_id, table, seats, stakes, seat_count, time_banks)
        shape = self.shapes.get(tournament_id)
        if shape is None:
            raise ValueError(f"{tournament_id}: no table settings (DealerTables.configure)")
        command_id = self._command_id(tournament_id)
        for player, _ in seats.values():
            self._placing[(tournament_id, player)] = self._numbers[tournament_id]
        self._queue_call(
            "OpenTournamentTable",
            tt.OpenTournamentTableRequest(
                command_id=command_id,
                tournament_id=tournament_id,
                table=table,
                variant=shape.variant,
                seat_count=seat_count or shape.seat_count,  # a shoot-out's tables have their own size
                stakes=wire_stakes(stakes),
                seats=[
                    tt.TournamentSeat(seat=s, player_id=p, chips=c, time_bank_left=(time_banks or {}).get(s))
                    for s, (p, c) in sorted(seats.items())
                ],
                action_seconds=shape.action_seconds,
                time_bank_seconds=shape.time_bank_seconds,
                time_bank_when_disconnected=shape.time_bank_when_disconnected,
                deal_on_request=shape.deal_on_request,
            ),
        )

    def deal(
        self,
        tournament_id: str,
        table: int,
        hand_number: int,
        deck: list[str],
        stakes: Stakes | None = None,
        level: int = 0,
    ) -> None:
        """A table that waits for the tournament (``deal_on_request``): deal its hand ``hand_number``
        with ``deck`` at ``stakes`` (level ``level``): the core's own deal of the same hand, whose
        result comes back with the actions."""
        self._table(tournament_id, table)
        request = tt.DealTournamentHandRequest(
            command_id=self._command_id(tournament_id),
            tournament_id=tournament_id,
            table=table,
            hand_number=hand_number,
            deck=deck,
        )
        if stakes is not None:
            request.stakes.CopyFrom(wire_stakes(stakes, level))
        self._queue_call("DealTournamentHand", request)

    def set_level(self, tournament_id: str, table: int, stakes: Stakes) -> None:
        super().set_level(tournament_id, table, stakes)
        self._queue_call(
            "SetTournamentLevel",
            tt.SetTournamentLevelRequest(
                command_id=self._command_id(tournament_id),
                tournament_id=tournament_id,
                table=table,
                stakes=wire_stakes(stakes),
            ),
        )

    def seat_player(self, tournament_id: str, table: int, seat: int, player: str, chips: int) -> None:
        super().seat_player(tournament_id, table, seat, player, chips)
        self._seat(tournament_id, table, seat, player, chips)

    def _seat(self, tournament_id: str, table: int, seat: int, player: str, chips: int) -> None:
        command_id = self._command_id(tournament_id)
        self._placing[(tournament_id, player)] = self._numbers[tournament_id]
        self._queue_call(
            "SeatTournamentPlayer",
            tt.SeatTournamentPlayerRequest(
                command_id=command_id,
                tournament_id=tournament_id,
                table=table,
                seat=tt.TournamentSeat(seat=seat, player_id=player, chips=chips),
            ),
        )

    def move_player(
        self, tournament_id: str, from_table: int, from_seat: int, to_table: int, to_seat: int, reason: str
    ) -> None:
        super().move_player(tournament_id, from_table, from_seat, to_table, to_seat, reason)
        command_id = self._command_id(tournament_id)
        self._placing[(tournament_id, self.tables[(tournament_id, to_table)].seats[to_seat])] = self._numbers[
            tournament_id
        ]
        self._queue_call(
            "MoveTournamentPlayer",
            tt.MoveTournamentPlayerRequest(
                command_id=command_id,
                tournament_id=tournament_id,
                from_table=from_table,
                from_seat=from_seat,
                to_table=to_table,
                to_seat=to_seat,
                reason=reason,
            ),
        )

    def remove_player(self, tournament_id: str, table: int, seat: int) -> None:
        super().remove_player(tournament_id, table, seat)
        self._stood_up.discard((tournament_id, table, seat))
        self._queue_call(
            "RemoveTournamentPlayer",
            tt.RemoveTournamentPlayerRequest(
                command_id=self._command_id(tournament_id), tournament_id=tournament_id, table=table, seat=seat
            ),
        )

    def kept_for_rebuy(self, tournament_id: str, table: int, seat: int) -> None:
        super().kept_for_rebuy(tournament_id, table, seat)
        self._stood_up.add((tournament_id, table, seat))

    def add_chips(self, tournament_id: str, table: int, seat: int, chips: int) -> None:
        if (tournament_id, table, seat) in self._stood_up:  # a re-buy after his bust: seated again
            self._stood_up.discard((tournament_id, table, seat))
            InProcessTables.add_chips(self, tournament_id, table, seat, chips)
            self._seat(tournament_id, table, seat, self.tables[(tournament_id, table)].seats[seat], chips)
            return
        super().add_chips(tournament_id, table, seat, chips)
        self._queue_call(
            "AddTournamentChips",
            tt.AddTournamentChipsRequest(
                command_id=self._command_id(tournament_id),
                tournament_id=tournament_id,
                table=table,
                seat=seat,
                chips=chips,
            ),
        )

    def _pause(self, method: str, tournament_id: str, table: int, reason: str) -> None:
        self._queue_call(
            method,
            tt.PauseTournamentTableRequest(
                command_id=self._command_id(tournament_id), tournament_id=tournament_id, table=table, reason=reason
            ),
        )

    def pause(self, tournament_id: str, table: int, reason: str) -> None:
        super().pause(tournament_id, table, reason)
        self._pause("PauseTournamentTable", tournament_id, table, reason)

    def resume(self, tournament_id: str, table: int, reason: str) -> None:
        super().resume(tournament_id, table, reason)
        self._pause("ResumeTournamentTable", tournament_id, table, reason)

    def close_table(self, tournament_id: str, table: int) -> None:
        super().close_table(tournament_id, table)
        self._close(tournament_id, table)

    def _close(self, tournament_id: str, table: int) -> None:
        self._queue_call(
            "CloseTournamentTable",
            tt.CloseTournamentTableRequest(
                command_id=self._command_id(tournament_id), tournament_id=tournament_id, table=table
            ),
        )

    def close_all(self, tournament_id: str) -> None:
        open_tables = sorted(n for (t, n), m in self.tables.items() if t == tournament_id and not m.closed)
        super().close_all(tournament_id)
        for table in open_tables:
            self._close(tournament_id, table)

    # ------------------------------------------------------------------ hand results (Kafka)
    def _handle(self, record: Record) -> None:
        try:
            event = tt.TournamentTableEvent()
            envelope = decode_envelope(record.value or b"")
            if envelope.source != "dealer" or not envelope.payload.Unpack(event):
                return
        except Exception:  # noqa: BLE001 - a record that is not the dealer's event is skipped
            return
        key = (event.tournament_id, event.table)
        with self._lock:
            if event.sequence <= self._last.get(key, 0):
                return  # sent again after a dealer restart (same sequence): heard already
            self._last[key] = event.sequence
            if event.WhichOneof("event") == "hand_ended":
                self._heard.append(hand_ended(event.hand_ended, event.sequence))
                self._unapplied += 1

    def _await_applied(self) -> None:
        """Before the consumer commits a batch: every hand it brought is in a stored step (a
        restart would otherwise start after hands its tournament never applied)."""
        with self._lock:
            if not self._lock.wait_for(lambda: self._unapplied <= 0, self.apply_timeout):
                raise TimeoutError(f"{self._unapplied} dealer hands heard but not applied yet: read again")

    def hands_ended(self) -> list[HandEnded]:
        """The dealer's hand results heard since the last call (and the in-process reports); call
        :meth:`applied` with their number once the steps that applied them are stored."""
        with self._lock:
            heard, self._heard = self._heard, []
            self._taken += len(heard)
        return super().hands_ended() + heard

    def applied(self) -> None:
        """The hands :meth:`hands_ended` gave are applied and their steps stored: the consumer may
        commit their offsets."""
        with self._lock:
            self._unapplied = max(0, self._unapplied - self._taken)
            self._taken = 0
            self._lock.notify_all()


__all__ = ["DealerTables", "TableShape", "command_table", "hand_ended", "wire_stakes"]
