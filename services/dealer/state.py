"""The state one table actor holds, shared by the concern modules that make up the actor.

:class:`TableActor` (:mod:`dealer.actor`) is assembled from one class per concern, each
building on the ones before it: :mod:`dealer.fanout` (watchers and Kafka fan-out) ->
:mod:`dealer.snapshots` -> :mod:`dealer.writeahead` (escrow write-ahead) ->
:mod:`dealer.hand_cycle` -> :mod:`dealer.commands` (command validation) ->
:mod:`dealer.recovery` (crash recovery); the mailbox and idempotency are the runtime's
:class:`~cardroom.runtime.mailbox.Mailbox`. Time comes from the injected clock
(``deps.clock``), never from :mod:`time`.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque

from cardroom.core import ids
from cardroom.core.table import Table
from cardroom.runtime.clock import Clock
from cardroom.v1 import dealer_pb2, events_pb2
from dealer.deps import Deps, Watcher
from dealer.lobby_stats import LobbyStats
from dealer.tablespec import TableSpec

log = logging.getLogger("dealer.table")
#: The buy-ins a table's snapshots name done (8 bytes each, :mod:`dealer.writeahead`): many hours of a
#: table's sit-downs and add-chips, far longer than any client retries a request.
BUY_INS_KEPT = 64


class ActorState:
    """Everything a table actor knows; the concern classes add behaviour, no state."""

    def __init__(self, table_id: str, spec: TableSpec, deps: Deps) -> None:
        self.table_id = table_id
        self.spec = spec
        self.deps = deps
        #: The epoch of this replica's hold on the table's partition when the actor was made (0 unsharded):
        #: the actor writes and moves money only while that hold lasts (:meth:`Fences.current`).
        self.epoch = deps.fences.epoch(table_id)
        self.clock: Clock = deps.clock
        self.variant = spec.variant.code
        self.table: Table = spec.new_table(deps.allowance(spec.settings.all_in_allowance), table_id)
        self.escrow = 0
        self.pending_cashouts: list[dealer_pb2.PendingCashOut] = []
        self.pending_buy_in: dealer_pb2.PendingBuyIn | None = None
        #: The digests of the buy-ins carried out, the most recent last (:data:`BUY_INS_KEPT`).
        self.buy_ins_done: deque[int] = deque(maxlen=BUY_INS_KEPT)
        #: Chips asked for by players dealt in the hand in progress, by seat (rules/002: added between
        #: hands): in every snapshot, added after the hand or right after a restore (:meth:`_add_queued_chips`).
        self.chips_queued: dict[int, dealer_pb2.QueuedChips] = {}
        self.unpublished: tuple[dealer_pb2.HandRecordPublished, events_pb2.HandSettled] | None = None
        self.sequence = 0
        self.watchers: set[Watcher] = set()
        self.public_out: list[dealer_pb2.TableEvent] = []  # this burst's events for the events topic
        self.shown: set[int] = set()
        self.pots_sent: tuple[tuple[int, tuple[int, ...]], ...] = ()  # the pots last sent (PotsChanged)
        self.cursor = 0
        self.seed = b""
        self.commitment = ""
        self.hand_started = 0.0
        self.next_hand_at = 0.0
        self.closing = False
        self.intent_durable = True  # the last snapshot (with the write-ahead entries) was written
        self.draining = False  # SIGTERM: no new hand; the one in progress plays to its end
        self.close_waiters: list[asyncio.Future[list[dealer_pb2.SeatView]]] = []
        self.cashed_out_at_close: list[dealer_pb2.SeatView] = []
        self._retry_at = 0.0
        self._cancelled = False
        self.restored_from = 0  # restore(): the last event sequence its snapshot had seen
        self.last_settled_hand_id = ""  # the hand of the last settlement made (snapshots keep it)
        self.reconcile_due = ""  # after a restore: the escrow reconciliation to make (its request id base)
        self.reconcile_attempts = 0
        self.lobby_stats = LobbyStats(opened_at=self.clock.now())  # average pot, hands per hour

    @property
    def closed(self) -> bool:
        return self.table.closed

    @property
    def currency(self) -> int:
        return self.spec.currency

    def hand_id(self, number: int | None = None) -> str:
        return str(ids.HandId(self.table_id, self.table.hand_number if number is None else number))
