"""Typed events a hand emits, in order; together with the set-up they replay the hand.

Events are slotted dataclasses, not frozen (frozen ones cost 3x to build on the hot path):
treat them as immutable values.

Card visibility: ``CardsDealt.visible_to`` is the seat that may see the cards, or None when
they are face up for everyone. Board cards are always public.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, unique

from cardroom.core.cards import Card
from cardroom.core.engine.actions import ActionKind


@unique
class ForcedKind(Enum):
    """Forced bets. A DEAD_BLIND is dead money: it goes to the pot and does not count
    toward the poster's bet in the round (rules/003 'Missed blinds': "This money is
    considered as 'dead' and goes directly to the pot"). A DEAD_ANTE is an ante one player
    posts for the whole table (big-blind ante, button ante) or an ante under dead-ante
    rules (PHH ``ante_trimming_status = false``): dead money in the main pot too. Dead
    money is nobody's contribution: it is never layered into side pots and never paid back
    to its poster as a pot of his own (:func:`cardroom.core.engine.pots.build_pots`). An
    ANTE posted by every player is each player's own contribution (rules/003 'All-in': "A
    player that is all-in can only win as much chips from every other player that he has
    put into the pot")."""

    SMALL_BLIND = "small_blind"
    BIG_BLIND = "big_blind"
    DEAD_BLIND = "dead_blind"
    ANTE = "ante"
    DEAD_ANTE = "dead_ante"
    BRING_IN = "bring_in"
    STRADDLE = "straddle"


@dataclass(slots=True)
class ForcedBet:
    """A forced bet to post before the cards are dealt (table layer input)."""

    seat: int
    kind: ForcedKind
    amount: int


class Event:
    """Base class of hand events."""

    __slots__ = ()


@dataclass(slots=True)
class ForcedBetPosted(Event):
    seat: int
    kind: ForcedKind
    amount: int
    all_in: bool = False


@dataclass(slots=True)
class StreetStarted(Event):
    """A new street: ``name`` as in the game spec (``flop``, ``fourth``, ``first_draw``...)."""

    index: int
    name: str


@dataclass(slots=True)
class CardsDealt(Event):
    """Hole cards to ``seat``; ``visible_to`` = seat (face down) or None (face up)."""

    seat: int
    cards: tuple[Card, ...]
    visible_to: int | None


@dataclass(slots=True)
class BoardDealt(Event):
    """Community cards (also the Stud shared 7th-street card)."""

    cards: tuple[Card, ...]


@dataclass(slots=True)
class ActionTaken(Event):
    """A player's action; ``to`` is his total bet in the round after it, ``added`` the chips
    moved from his stack."""

    seat: int
    kind: ActionKind
    to: int
    added: int
    all_in: bool = False


@dataclass(slots=True)
class ArtificialAllIn(Event):
    """A player on turn treated as all-in for what he has already put in the pot (rules/002
    'All-Ins', Internet disconnects; rules/003 'Artificial All-In'): he acts no more, can win
    only the pots he contributed to (later bets make side pots without him) and keeps the
    chips he did not put in. ``bet``: his bet in the round; ``committed``: his chips in the
    pot this hand; ``kept``: the chips set aside, back in his stack when the hand ends."""

    seat: int
    bet: int
    committed: int
    kept: int


@dataclass(slots=True)
class DrawMade(Event):
    """A draw: ``discarded`` (visible to ``seat``), ``received`` new cards (visible to seat)."""

    seat: int
    discarded: tuple[Card, ...]
    received: tuple[Card, ...]


@dataclass(slots=True)
class StubReshuffled(Event):
    """The stub ran out in a draw: burned and discarded cards were shuffled back in (rules/003)."""

    cards: int


@dataclass(slots=True)
class BetReturned(Event):
    """An uncalled bet given back."""

    seat: int
    amount: int


@dataclass(slots=True)
class HandShown(Event):
    seat: int
    cards: tuple[Card, ...]
    description: str = ""


@dataclass(slots=True)
class HandMucked(Event):
    """A hand folded at showdown; cards kept for the hand history (rules/000)."""

    seat: int
    cards: tuple[Card, ...]


@dataclass(slots=True)
class PotAwarded(Event):
    """A pot (or half of a hi/lo pot) paid out.

    ``pot_index`` 0 = main pot; ``share`` = "all", "high" or "low"; ``amount`` after rake;
    ``members`` = seats eligible for it; ``winners`` = ((seat, chips), ...).
    """

    pot_index: int
    share: str
    amount: int
    rake: int
    members: tuple[int, ...]
    winners: tuple[tuple[int, int], ...]


@dataclass(slots=True)
class HandEnded(Event):
    """Net result per seat (chips won minus chips put in)."""

    results: tuple[tuple[int, int], ...]
