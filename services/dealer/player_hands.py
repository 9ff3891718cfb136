"""Each player's recent finished hands, already redacted for him (``Dealer/PlayerHands``).

Issue 12: "a gateway call for a player's own recent hands (their own hole cards only, others'
only where shown at showdown)". At the end of every hand the dealer builds one
:class:`~cardroom.v1.dealer_pb2.RecentHand` per player dealt in, for that player alone, and
keeps the last ``keep`` (default 50, ``DEALER_PLAYER_HANDS``) per player in a ring:

* his own hole cards;
* another player's cards only when that player showed them at the showdown (``HandShown``);
  a hand mucked at the showdown (``HandMucked``) or folded is never shown — the house rule
  (hidden information stays hidden), although rules/000 says "the hole cards of all players who
  stay in to the showdown are included in the hand history, even if they choose to muck";
* the same hand as PokerStars text by the one writer (:func:`cardroom.core.history.hand_text`
  with ``hero`` = the player), in dollars for cash tables (cents) and in chips for play money.

Nothing is redacted at read time: what the ring holds is already what the player may see. The
rings live in memory, serialized (about 2 KB a hand; at most ``players`` players, default 2000 —
``DEALER_PLAYER_HANDS_PLAYERS`` — the longest idle forgotten first): a restarted dealer starts with
empty rings; the full records stay on ``cardroom.hand.records``. Building the records costs about
0.4 ms of CPU per player dealt in at the end of each hand (``DEALER_PLAYER_HANDS=0`` turns it off).
"""

from __future__ import annotations

from collections import OrderedDict, deque
from datetime import UTC, datetime
from typing import Any

from cardroom.core.engine import Hand, HandMucked, HandShown
from cardroom.core.history import Format, hand_text
from cardroom.core.table import HandRecord
from cardroom.runtime.timestamps import timestamp
from cardroom.v1 import common_pb2, dealer_pb2

KEEP = 50
PLAYERS = 2_000


def _format(currency: int, player: str) -> Format:
    if currency == common_pb2.CURRENCY_CASH:  # cash tables count cents
        return Format(unit=100, symbol="$", currency="USD", hero=player)
    return Format(hero=player)


def _meta(record: HandRecord, hand_id: str, finished_at: float) -> dict[str, Any]:
    when = datetime.fromtimestamp(finished_at, UTC)
    return {
        "hand": record.number,
        "table": record.table_name or hand_id.rsplit("-", 1)[0],
        "seat_count": record.seat_count,
        "year": when.year,
        "month": when.month,
        "day": when.day,
        "time": when.strftime("%H:%M:%S"),
        "time_zone_abbreviation": "UTC",
    }


def redacted_for(
    player: str,
    record: HandRecord,
    hand: Hand,
    table_id: str,
    hand_id: str,
    variant: str,
    currency: int,
    finished_at: float,
) -> dealer_pb2.RecentHand:
    """The finished hand as ``player`` may see it afterwards (see the module docstring)."""
    shown = {e.seat for e in hand.events if isinstance(e, HandShown)}
    mucked = {e.seat for e in hand.events if isinstance(e, HandMucked)}
    mine = next(s for s, p in zip(hand.seats, hand.players, strict=True) if p == player)
    out = dealer_pb2.RecentHand(
        hand_id=hand_id,
        table_id=table_id,
        hand_number=record.number,
        variant=variant,
        currency=currency,  # type: ignore[arg-type]  # a Currency value, a plain int at runtime
        player_id=player,
        seat=mine,
        net=record.finishing_stacks[mine] - record.starting_stacks[mine],
        board=[str(c) for c in hand.board],
        rake=record.rake,
    )
    out.finished_at.CopyFrom(timestamp(finished_at))
    for seat, who in sorted(zip(hand.seats, hand.players, strict=True)):
        visible = seat == mine or seat in shown
        out.seats.append(
            dealer_pb2.RecentHandSeat(
                seat=seat,
                player_id=who,
                starting_stack=record.starting_stacks[seat],
                net=record.finishing_stacks[seat] - record.starting_stacks[seat],
                cards=[str(c) for c in hand.hole_cards(seat)] if visible else [],
                shown=seat in shown,
                folded=hand.is_folded(seat),
                mucked=seat in mucked,
            )
        )
    out.pokerstars = hand_text(hand, _format(currency, player), _meta(record, hand_id, finished_at))
    return out


class PlayerHands:
    """Per player, a ring of his last ``keep`` finished hands (newest last), redacted for him."""

    def __init__(self, keep: int = KEEP, players: int = PLAYERS) -> None:
        self.keep = keep
        self.players = players
        self._rings: OrderedDict[str, deque[bytes]] = OrderedDict()  # serialized RecentHand

    def add_hand(
        self, record: HandRecord, hand: Hand, table_id: str, hand_id: str, variant: str, currency: int, now: float
    ) -> None:
        """Keep the finished hand for every player dealt in, each his own redacted record."""
        if self.keep <= 0:
            return
        for player in hand.players:
            ring = self._rings.pop(player, None)
            if ring is None:
                ring = deque(maxlen=self.keep)
            ring.append(
                redacted_for(player, record, hand, table_id, hand_id, variant, currency, now).SerializeToString()
            )
            self._rings[player] = ring  # most recently playing last
        while len(self._rings) > self.players:
            self._rings.popitem(last=False)

    def recent(self, player: str, limit: int = 0) -> list[dealer_pb2.RecentHand]:
        """The player's kept hands, newest first (``limit`` 0: all kept)."""
        ring = self._rings.get(player)
        if not ring:
            return []
        newest = list(reversed(ring))
        return [dealer_pb2.RecentHand.FromString(b) for b in (newest[:limit] if limit > 0 else newest)]
