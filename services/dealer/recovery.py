"""Crash recovery of one table: load its latest snapshot, then redo what was pending.

Reading the snapshots topic is :mod:`dealer.restore`; here a table takes one snapshot back
(seats, stacks from before an interrupted deal, escrow, write-ahead entries) and, before
its loop runs, reports the cancelled hand and redoes the write-ahead entries.
"""

from __future__ import annotations

import uuid

from cardroom.v1 import dealer_pb2
from dealer import metrics, seating_state
from dealer.commands import Commands
from dealer.state import log

SEQUENCE_GAP = 100_000  # > events of any hand: restored sequences stay increasing


class Recovery(Commands):
    """``restore`` then ``recover``."""

    def restore(self, snap: dealer_pb2.TableSnapshot) -> None:
        """Load the state of ``snap`` (see :mod:`dealer.restore`); call :meth:`recover` next."""
        seating_state.load(self.table.seating, snap.seating_json)
        for seat in self.table.seating.seats:
            self.table.connected[seat] = self.table.connected_when_seated  # a tournament's: once he joins again
            self.table.time_bank[seat] = snap.time_banks.get(seat, self.spec.settings.time_bank_seconds)
        self.table.hand_number = snap.hands_dealt
        self.table.total_rake = snap.total_rake
        self.table.closed = snap.closed
        self.cashed_out_at_close = list(snap.cashed_out_at_close)
        self.escrow = snap.escrow
        self.restored_from = snap.event_sequence
        self.sequence = snap.event_sequence + SEQUENCE_GAP  # events after the snapshot are lost with it
        self.pending_cashouts = list(snap.pending_cashouts)
        if snap.HasField("pending_buy_in"):
            self.pending_buy_in = snap.pending_buy_in
        if snap.HasField("pending_record"):
            self.unpublished = (snap.pending_record, snap.pending_settled)
        self.last_settled_hand_id = snap.last_settled_hand_id
        self.buy_ins_done.extend(snap.buy_ins_done)
        self.chips_queued = {q.seat: q for q in snap.queued_chips}  # added by recover(), the hand cancelled
        self._cancelled = snap.hand_in_progress
        # chips the wallet holds for a player this snapshot does not seat (a buy-in whose answer was
        # lost in the crash) go back to him once everything pending is redone (issue 14 item 7)
        self.reconcile_due = f"dealer:reconcile:{self.table_id}:{uuid.uuid4().hex[:12]}"

    async def recover(self, close: bool) -> None:
        """Mark the gap in the event stream, redo the write-ahead entries, reconcile the escrow,
        report a cancelled hand, and close if asked to."""
        self._emit(
            restored=dealer_pb2.TableRestored(snapshot_sequence=self.restored_from, hand_cancelled=self._cancelled)
        )
        if self._cancelled:
            metrics.CANCELLED.labels(self.variant).inc()
            self._emit(
                hand_finished=dealer_pb2.HandFinished(
                    hand_number=self.table.hand_number, hand_id=self.hand_id(), cancelled=True
                )
            )
            log.warning(
                "hand in progress cancelled by a dealer restart; stacks as before the deal",
                extra={"table_id": self.table_id, "hand_id": self.hand_id()},
            )
        await self._retry_pending()
        await self._add_queued_chips()
        await self.write_snapshot()
        self.next_hand_at = 0.0
        if close and not self.closed:
            self.closing = True
