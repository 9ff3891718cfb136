"""Escrow write-ahead: every money movement is in a snapshot before it is sent, and redone
(idempotently) until it is acknowledged.

* buy-in / add-chips: snapshot with the pending buy-in -> wallet transfer (key from the
  request id) -> seat / stack -> snapshot, which also names the buy-in done (``buy_ins_done``,
  the last :data:`~dealer.state.BUY_INS_KEPT`), so that a request sent again after a restart or a
  move of the table (the mailbox's answers are not kept across them) is never credited twice: the
  wallet replays a key without moving money again;
* add-chips during a hand (rules/002: queued, added between hands): the queue is in every snapshot
  (``queued_chips``); after the hand, or right after a restore that cancelled it, each seat's queue
  leaves the state as its write-ahead buy-in enters it, and its requests are done from then on;
* stand-up / close: seat freed -> snapshot with the pending cash-out -> wallet transfer ->
  snapshot;
* end of hand: hand record + hand-settled event + the snapshot after them, in one Kafka transaction
  (deterministic event ids); if it fails, a snapshot with them pending, and the transaction again.
* after a restore, once nothing above is pending and no hand is on: the wallet's ReconcileEscrow
  pays back every chip it holds in the escrow for a player the table does not seat (a buy-in whose
  answer the crash lost), after it has applied the table's last settled hand. Retried like the
  rest, given up (and counted) after ``RECONCILE_ATTEMPTS``.

``escrow`` is what the table's escrow account holds once the wallet has applied everything
sent; ``escrow == chips on the table + pending cash-outs`` always (the imbalance metric).
"""

from __future__ import annotations

import hashlib

from cardroom.core.table import TableError
from cardroom.runtime.transactions import Outgoing
from cardroom.v1 import dealer_pb2
from dealer import metrics, views
from dealer.errors import DealerError, precondition, unavailable
from dealer.snapshots import Snapshots
from dealer.state import log

RETRY_SECONDS = 2.0
RECONCILE_ATTEMPTS = 150  # ~5 minutes of RETRY_SECONDS: a wallet that long behind is an operator's case


def buy_in_digest(key: str) -> int:
    """A buy-in's idempotency key as :attr:`TableSnapshot.buy_ins_done` keeps it."""
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")


class WriteAhead(Snapshots):
    """Pending buy-ins, cash-outs and hand settlements, and the escrow they move."""

    #: The table's chips are money held in a wallet escrow (``dealer_table_chips``); not a tournament's.
    holds_money = True

    def chips(self) -> int:
        return self.table.chips_on_table()

    def imbalance(self, chips: int | None = None) -> int:
        """The escrow less the chips on the table and the cash-outs owed (0: every chip accounted
        for); ``chips``: :meth:`chips`, when the caller has just counted them."""
        if self.table.hand is not None and not self.table.in_hand:
            return 0  # pots awarded, settlement under way
        pending = sum(c.amount for c in self.pending_cashouts)
        return self.escrow - (self.table.chips_on_table() if chips is None else chips) - pending

    def _update_imbalance(self) -> None:
        off = self.imbalance()
        if off:
            log.error(
                "escrow does not match the chips on the table", extra={"table_id": self.table_id, "imbalance": off}
            )

    @property
    def has_pending(self) -> bool:
        return (
            bool(self.pending_cashouts)
            or self.pending_buy_in is not None
            or self.unpublished is not None
            or bool(self.reconcile_due)
        )

    async def _retry_pending(self) -> None:
        if self.unpublished is not None:
            await self._publish_settlement()
        if self.pending_buy_in is not None:
            await self._resolve_buy_in()
        if self.pending_cashouts:
            await self._flush_cashouts()
        if self.reconcile_due:
            await self._reconcile_escrow()

    async def _reconcile_escrow(self) -> None:
        """Ask the wallet to pay back what it holds for players not seated here (see the module doc)."""
        busy = self.pending_cashouts or self.pending_buy_in is not None or self.unpublished is not None
        if busy or self.table.hand is not None:
            return  # the positions are not final yet: the next retry
        seated = sorted(s.player for s in self.table.seating.seats.values())
        self.reconcile_attempts += 1
        request_id = f"{self.reconcile_due}:{self.reconcile_attempts}"
        try:
            self.verify_holding()
            reply = await self.deps.wallet.reconcile_escrow(
                self.table_id, self.currency, seated, request_id, self.last_settled_hand_id
            )
        except DealerError as err:
            if self.reconcile_attempts < RECONCILE_ATTEMPTS:
                log.info("escrow reconciliation waits", extra={"table_id": self.table_id, "error": err.message})
                return
            log.error("escrow reconciliation given up", extra={"table_id": self.table_id, "error": err.message})
            metrics.RECONCILED.labels("given_up").inc()
            self.reconcile_due = ""
            return
        self.reconcile_due = ""
        metrics.RECONCILED.labels("paid_back" if reply.transfers else "exact").inc()
        if reply.total_returned:
            metrics.RECONCILED_CHIPS.inc(reply.total_returned)
            log.warning(
                "escrow reconciled: chips held for players without a seat paid back",
                extra={"table_id": self.table_id, "returned": reply.total_returned, "players": len(reply.transfers)},
            )

    async def _flush_cashouts(self) -> None:
        """Pay the pending cash-outs — only once the snapshot holding them is durable (issue 14 item
        7: no money moves without its durable intent); otherwise they wait for the retry."""
        if self.pending_cashouts and not self.intent_durable and not await self.write_snapshot():
            log.warning("cash-outs wait for a durable snapshot", extra={"table_id": self.table_id})
            return
        changed = False
        for c in list(self.pending_cashouts):
            try:
                self.verify_holding()
                await self.deps.wallet.cash_out(self.table_id, c.player_id, self.currency, c.amount, c.idempotency_key)
            except DealerError as err:
                log.warning(
                    "cash-out pending",
                    extra={"table_id": self.table_id, "player_id": c.player_id, "error": err.message},
                )
                continue
            self.pending_cashouts.remove(c)
            self.escrow -= c.amount
            changed = True
        if changed:
            await self.write_snapshot()

    def buy_in_done(self, key: str) -> bool:
        """Whether the table has carried out the buy-in of idempotency key ``key`` (its chips added, or
        the money given back): a repeat of its request must not move or credit anything again."""
        return buy_in_digest(key) in self.buy_ins_done

    def _mark_buy_in_done(self, key: str) -> None:
        self.buy_ins_done.append(buy_in_digest(key))  # at most BUY_INS_KEPT kept: the oldest goes

    def _queued_already(self, seat: int, key: str) -> bool:
        """Whether the add-chips request of idempotency key ``key`` is queued for ``seat`` (sent again)."""
        queued = self.chips_queued.get(seat)
        return queued is not None and buy_in_digest(key) in queued.requests

    def _queue_chips(self, seat: int, player: str, amount: int, key: str) -> None:
        """Queue ``amount`` for the player dealt in at ``seat`` (:meth:`Table.queue_chips` checks the rules):
        summed with what he queued earlier in the hand, added with one wallet transfer after it."""
        self.table.queue_chips(seat, amount)
        queued = self.chips_queued.get(seat)
        if queued is None:
            queued = self.chips_queued[seat] = dealer_pb2.QueuedChips(
                seat=seat, player_id=player, idempotency_key=f"dealer:addchips:{self.hand_id()}:{seat}"
            )
        queued.amount += amount
        queued.requests.append(buy_in_digest(key))

    async def _resolve_buy_in(self) -> None:
        """Redo a buy-in whose outcome is unknown (restore, or the wallet was unreachable)."""
        p = self.pending_buy_in
        assert p is not None
        try:
            self.verify_holding()
            await self.deps.wallet.buy_in(self.table_id, p.player_id, self.currency, p.amount, p.idempotency_key)
        except DealerError as err:
            if err.code.name == "UNAVAILABLE":
                return
            self.pending_buy_in = None  # it did not happen
            await self.write_snapshot()
            return
        self.pending_buy_in = None
        self.escrow += p.amount
        self._mark_buy_in_done(p.idempotency_key)
        seat = views.seat_of(self.table, p.player_id)
        try:
            if seat == p.seat and not self.table.dealt_in(seat):
                self.table.seating.set_stack(seat, self.table.seating.seats[seat].stack + p.amount)
            elif seat is None and p.seat not in self.table.seating.seats:
                self.table.sit_down(p.seat, p.player_id, p.amount, post_now=p.post_now)
            else:
                raise TableError("the seat is no longer available")
        except TableError:
            self.pending_cashouts.append(
                dealer_pb2.PendingCashOut(
                    player_id=p.player_id, amount=p.amount, idempotency_key=p.idempotency_key + ":refund"
                )
            )
        await self.write_snapshot()

    async def _move_in(self, player: str, seat: int, amount: int, post_now: bool, key: str) -> None:
        """Write-ahead, then the wallet buy-in; on a wallet refusal nothing is left pending. A buy-in the
        table carried out already (:meth:`buy_in_done`) is refused: the wallet would replay its key
        without moving money, and the chips would be credited twice."""
        if self.buy_in_done(key):
            raise precondition(
                f"table {self.table_id}: this request's buy-in was already carried out (its chips were added,"
                " or the money given back); send a new request id to buy in again"
            )
        self.pending_buy_in = dealer_pb2.PendingBuyIn(
            player_id=player, seat=seat, amount=amount, idempotency_key=key, post_now=post_now
        )
        if not await self.write_snapshot():  # no durable intent: the money does not move (issue 14 item 7)
            self.pending_buy_in = None
            raise unavailable("the table cannot record a buy-in right now; nothing was moved, try again shortly")
        try:
            self.verify_holding()
            await self.deps.wallet.buy_in(self.table_id, player, self.currency, amount, key)
        except DealerError:
            self.pending_buy_in = None
            await self.write_snapshot()
            raise
        self.pending_buy_in = None
        self.escrow += amount
        self._mark_buy_in_done(key)

    def _queue_cashout(self, player: str, amount: int, key: str) -> None:
        if amount > 0:
            self.pending_cashouts.append(
                dealer_pb2.PendingCashOut(player_id=player, amount=amount, idempotency_key=key)
            )

    async def _publish_settlement(self) -> None:
        """Hand record, hand-settled and the snapshot that no longer holds them pending, in one Kafka
        transaction (:meth:`commit_with_snapshot`): published exactly once, and never by a replica
        that lost the table (its transactional id was taken over: docs/sharding.md). Event ids are
        fixed by the hand all the same. The settlement carries the replica's fence: the wallet also
        ignores one with a lower epoch than one it applied for the table."""
        if self.unpublished is None:
            return
        published, settled = self.unpublished
        self.verify_holding()
        fence = self.deps.fences.of(self.table_id)
        if fence is not None:
            settled.fence.CopyFrom(fence)
        topics = self.deps.topics
        records = [
            Outgoing(
                topics.records,
                "cardroom.dealer.hand_record.v1",
                self.table_id,
                published.hand_number,
                published,
                f"{published.hand_id}:record",
            ),
            Outgoing(
                topics.settled,
                "cardroom.dealer.hand_settled.v1",
                self.table_id,
                published.hand_number,
                settled,
                f"{published.hand_id}:settled",
            ),
        ]
        self.unpublished = None  # the snapshot of the transaction: published
        if not await self.commit_with_snapshot(published.hand_id, records):
            self.unpublished = (published, settled)
            # Not out: kept pending in a snapshot, so a crash before the retry loses no settled hand.
            # (Not written before the first try: the transaction holds the same snapshot, and a crash
            # before it commits restores the hand-start snapshot — the hand cancelled, nothing paid.)
            await self.write_snapshot()
