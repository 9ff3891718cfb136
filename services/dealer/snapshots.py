"""Table snapshots: the whole table as one record on the compacted snapshots topic.

A snapshot is the write-ahead log of the table (see :mod:`dealer.restore`): seats and
stacks (or the stacks from before the deal, with ``hand_in_progress``), the escrow, the
pending cash-outs / buy-in / hand settlement and the event sequence. A failed write is
logged, never fatal: the next one carries the same state.
"""

from __future__ import annotations

from typing import Any

from cardroom.runtime.timestamps import timestamp
from cardroom.runtime.transactions import Outgoing
from cardroom.v1 import dealer_pb2
from dealer import metrics, seating_state
from dealer.fanout import FanOut
from dealer.restore import SNAPSHOT_TYPE
from dealer.state import log


def leave_key(hand_id: str, seat: int) -> str:
    """The cash-out key of a player who left during hand ``hand_id``: paid at the hand's end, or by a
    restore that cancelled it (its snapshot owes it), never both."""
    return f"dealer:leave:{hand_id}:{seat}"


class Snapshots(FanOut):
    """Build and write snapshots."""

    def snapshot(
        self, *, hand_in_progress: bool = False, seating_json: str | None = None, stacks: dict[int, int] | None = None
    ) -> dealer_pb2.TableSnapshot:
        # a hand on: the table as its rollback leaves it (the deal undone, seat changes since kept, the
        # players who asked to leave during it gone: their chips as at the deal are cash-outs owed)
        rolled = self.table.rolled_back()
        seating = rolled.seating
        snap = dealer_pb2.TableSnapshot(
            table_id=self.table_id,
            config=self.spec.config,
            hands_dealt=self.table.hand_number,
            closed=self.closed,
            button=seating.last_button or 0,
            seating_json=seating_json if seating_json is not None else seating_state.dump(seating),
            hand_in_progress=hand_in_progress,
            escrow=self.escrow,
            pending_cashouts=self.pending_cashouts,
            event_sequence=self.sequence,
            total_rake=self.table.total_rake,
        )
        for seat, state in sorted(seating.seats.items()):
            chips = stacks.get(seat, state.stack) if stacks is not None else state.stack
            snap.seats.append(
                dealer_pb2.SeatView(seat=seat, player_id=state.player, stack=chips, sitting_out=state.sitting_out)
            )
        for seat, player, chips in rolled.departed:
            if chips > 0:  # the key of the cash-out the hand's end makes: only one of them ever happens
                cashout = dealer_pb2.PendingCashOut(
                    player_id=player, amount=chips, idempotency_key=leave_key(self.hand_id(), seat)
                )
                snap.pending_cashouts.append(cashout)
        if self.pending_buy_in is not None:
            snap.pending_buy_in.CopyFrom(self.pending_buy_in)
        if self.unpublished is not None:
            snap.pending_record.CopyFrom(self.unpublished[0])
            snap.pending_settled.CopyFrom(self.unpublished[1])
        snap.last_settled_hand_id = self.last_settled_hand_id
        snap.buy_ins_done.extend(self.buy_ins_done)
        snap.queued_chips.extend(self.chips_queued[seat] for seat in sorted(self.chips_queued))
        snap.cashed_out_at_close.extend(self.cashed_out_at_close)
        snap.reconcile_owed = bool(self.reconcile_due)
        for seat in seating.seats:  # what each has left now: a rollback does not give back time used
            snap.time_banks[seat] = self.table.time_bank.get(seat, 0.0)
        snap.written_at.CopyFrom(timestamp(self.clock.now()))
        if self.holding():
            fence = self.deps.fences.of(self.table_id)
            if fence is not None:
                snap.fence.CopyFrom(fence)
        return snap

    def _snapshot_record(self, **kwargs: Any) -> Outgoing:
        if self.table.hand is not None and "hand_in_progress" not in kwargs:  # dealt, not yet settled
            kwargs["hand_in_progress"] = True
        snap = self.snapshot(**kwargs)
        return Outgoing(self.deps.topics.snapshots, SNAPSHOT_TYPE, self.table_id, self.sequence, snap)

    async def write_snapshot(self, *, linger: bool = False, **kwargs: Any) -> bool:
        """Persist the table (the compacted snapshots topic); True when the broker took it. A failure
        is logged, not fatal — but no money moves on an intent that is not durable
        (:attr:`intent_durable`, read by the write-ahead before a wallet transfer). ``linger``: the
        snapshot shares the request of the table events fired meanwhile (up to the publisher's
        linger) instead of a request of its own, for a caller no player waits on."""
        if not self.deps.publisher.enabled:
            return True  # KAFKA_BOOTSTRAP=none: local experiments, nothing is durable by choice
        if not self.holding():  # moved to another replica: its owner writes it
            self.intent_durable = False
            return False
        out = self._snapshot_record(**kwargs)
        try:
            await self.deps.publisher.publish(
                out.topic, type=out.type, key=out.key, sequence=out.sequence, payload=out.payload, linger=linger
            )
            metrics.SNAPSHOTS.inc()
            self.intent_durable = True
            return True
        except Exception as exc:
            self.intent_durable = False
            metrics.SNAPSHOT_FAILURES.inc()
            log.error("snapshot not written", extra={"table_id": self.table_id, "error": str(exc)})
            return False

    async def commit_with_snapshot(self, batch_id: str, records: list[Outgoing]) -> bool:
        """``records`` and the table's snapshot as it is now, in one Kafka transaction of the table's
        partition (:mod:`cardroom.runtime.transactions`): all of them are read, or none. A restore
        then finds either the records and the snapshot that no longer holds them pending, or neither
        (and publishes them again): each goes out exactly once. False (logged): nothing went out;
        the caller keeps them pending and retries with the same ``batch_id``."""
        if not self.deps.publisher.enabled:
            return True
        if not self.holding():
            return False
        out = [*records, self._snapshot_record()]
        try:
            if self.deps.writers is None:  # no transactions (the fast tests' fakes): one by one
                for o in out:
                    await self.deps.publisher.publish(
                        o.topic, type=o.type, key=o.key, sequence=o.sequence, payload=o.payload, event_id=o.event_id
                    )
            else:
                await self.deps.writers.commit(self.table_id, batch_id, out)
        except Exception as exc:
            metrics.TRANSACTIONS.labels("failed").inc()
            log.error(
                "records not committed; will retry",
                extra={"table_id": self.table_id, "batch": batch_id, "error": repr(exc)[:300]},
            )
            return False
        metrics.TRANSACTIONS.labels("committed").inc()
        metrics.SNAPSHOTS.inc()
        self.intent_durable = True
        return True
