"""Watchers and the Kafka fan-out: every table event stamped once, redacted per watcher.

Each event gets the table's next ``sequence`` and the clock's time, goes to every Watch
stream as its viewer may see it (a watcher that falls ``WATCH_BUFFER`` events behind is
dropped), and to the public events topic as an observer sees it (best effort; one record per burst
of events, a ``TableEventBatch``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from cardroom.core.engine import HandShown
from cardroom.runtime.timestamps import timestamp
from cardroom.v1 import dealer_pb2
from dealer import redact, views
from dealer.deps import Watcher
from dealer.state import ActorState, log

WATCH_BUFFER = 5000
#: The envelope type of a record on the events topic: a :class:`TableEventBatch`.
EVENTS_TYPE = "cardroom.dealer.table_events.v1"


class FanOut(ActorState):
    """Events out: watchers and the events topic."""

    def _stamp(self, event: dealer_pb2.TableEvent) -> dealer_pb2.TableEvent:
        self.sequence += 1
        event.table_id = self.table_id
        event.sequence = self.sequence
        event.hand_number = self.table.hand_number
        event.time.CopyFrom(timestamp(self.clock.now()))
        return event

    def holding(self) -> bool:
        """Whether this replica holds the table at the epoch the actor was made under (always, unsharded)."""
        return self.deps.fences.current(self.table_id, self.epoch)

    def verify_holding(self) -> None:
        """Raise UNAVAILABLE unless :meth:`holding`: a wallet call or a settlement of an actor whose hold
        ended goes nowhere, even if its partition is held here again."""
        self.deps.fences.verify_current(self.table_id, self.epoch)

    def _broadcast(self, item: redact.Outgoing) -> None:
        self._stamp(item.event)
        for w in list(self.watchers):
            try:
                w.offer(item, self.table)
            except asyncio.QueueFull:
                log.warning("slow watcher dropped", extra={"table_id": self.table_id, "viewer": w.viewer})
                self.watchers.discard(w)
                w.end("slow")
        if self.deps.publisher.enabled:
            self.public_out.append(redact.for_viewer(item, None))
            if len(self.public_out) == 1:  # the burst's first event: sent once the loop runs again
                try:
                    asyncio.get_running_loop().call_soon(self._publish_public)
                except RuntimeError:  # no loop running (a table being built): sent at once
                    self._publish_public()

    def _publish_public(self) -> None:
        """The public events of one burst (everything emitted before the loop runs again: an action,
        the pots it changed, the next turn) as one Kafka record, keyed by table: one send instead of
        one per event (docs/capacity.md, the dealer's sender thread)."""
        events, self.public_out = self.public_out, []
        if not events or not self.holding():  # a table that moved: its owner publishes it
            return
        self.deps.publisher.fire(
            self.deps.topics.events,
            type=EVENTS_TYPE,
            key=self.table_id,
            sequence=events[-1].sequence,
            payload=dealer_pb2.TableEventBatch(events=events),
            event_id=f"{self.table_id}:{events[0].sequence}",
        )

    def _emit(self, **kwargs: Any) -> None:
        self._broadcast(redact.Outgoing(dealer_pb2.TableEvent(**kwargs)))

    def _emit_hand_events(self, timeout: bool = False, turn_changed: bool = False) -> None:
        """The hand's new events, then the pots if they changed, then the turn (also when only
        the turn's clock changed: ``turn_changed``, the time bank started)."""
        hand = self.table.hand
        if hand is None:
            return
        if self.cursor < len(hand.events):
            players = dict(zip(hand.seats, hand.players, strict=True))
            for ev in hand.events[self.cursor :]:
                if isinstance(ev, HandShown):
                    self.shown.add(ev.seat)
                item = redact.from_engine(ev, players, timeout)
                if item is not None:
                    self._broadcast(item)
            self.cursor = len(hand.events)
            turn_changed = True
            self._emit_pots()
        if turn_changed:
            to_act = views.legal_view(self.table, self.clock.now())
            if to_act is not None:
                self._emit(turn_started=dealer_pb2.TurnStarted(to_act=to_act))

    def _emit_pots(self) -> None:
        """PotsChanged when the pots in the middle are not what was last sent (the rules core's pots)."""
        pots = views.pot_views(self.table)
        key = tuple((p.amount, tuple(p.members)) for p in pots)
        if pots and key != self.pots_sent:
            self.pots_sent = key
            self._emit(pots_changed=dealer_pb2.PotsChanged(pots=pots))

    def _seat_changed(self, seat: int, change: str, player: str = "", stack: int = 0) -> None:
        owner: int | None = None
        if seat in self.table.seating.seats:  # in full for its owner (his cards), redacted for the others
            view = views.seat_view(self.table, seat, seat, self.shown)
            owner = seat if view.cards else None
        else:
            view = dealer_pb2.SeatView(seat=seat, player_id=player, stack=stack)
        self._broadcast(
            redact.Outgoing(dealer_pb2.TableEvent(seat_changed=dealer_pb2.SeatChanged(seat=view, change=change)), owner)
        )

    # ------------------------------------------------------------------ watchers
    def info(self) -> dealer_pb2.TableInfo:
        return dealer_pb2.TableInfo(
            table_id=self.table_id,
            config=self.spec.config,
            seats_taken=len(self.table.seating.seats),
            hands_dealt=self.table.hand_number,
            closed=self.closed,
            min_buy_in=self.spec.buy_in.minimum,
            max_buy_in=self.spec.buy_in.maximum or 0,
        )

    def listing(self) -> dealer_pb2.TableInfo:
        """The table as ListTables lists it: its info with the lobby's figures (time-dependent, so
        only here, never in a table state or a snapshot)."""
        info = self.info()
        info.average_pot = self.lobby_stats.average_pot(self.clock.now())
        info.hands_per_hour = self.lobby_stats.hands_per_hour(self.clock.now())
        return info

    def state(self, viewer: str) -> dealer_pb2.TableState:
        return views.table_state(self.info(), self.table, viewer, self.shown, self.commitment, self.clock.now())

    def subscribe(self, viewer: str) -> tuple[Watcher, dealer_pb2.TableState]:
        """A new watcher and the state it starts from (no event can fall in between)."""
        watcher = Watcher(viewer, asyncio.Queue(WATCH_BUFFER))
        state = self.state(viewer)
        if self.closed:
            watcher.end("closed")
        else:
            self.watchers.add(watcher)
        return watcher, state

    def unsubscribe(self, watcher: Watcher) -> None:
        self.watchers.discard(watcher)
