"""The hand engine: one hand of any game in the house rules, deterministic and pure.

API (for the table layer)::

    from cardroom.core.engine import (Hand, SeatIn, Variant, Game, Structure, Stakes,
                                      ForcedBet, ForcedKind, ActionKind, Options)

    hand = Hand(
        Variant(Game.HOLDEM, Structure.NO_LIMIT),    # or Variant.parse("NT")
        Stakes.blinds(1, 2),                          # Stakes.limit(4) → $4-$8, blinds 2/4
        [SeatIn(seat=1, player="ann", stack=200), SeatIn(4, "bob", 150), ...],
        button=4,                                     # None for Stud/Soko
        deck=deck_order,                              # sequence of Cards, or a CardSource
        forced_bets=None,                             # None: standard blinds/antes
        rake=None,                                    # fn(hand, total_pot) -> chips
        options=Options(),                            # rule settings (see hand.Options)
    )
    while not hand.is_over:
        la = hand.legal_actions()   # LegalActions(seat, kinds, call_amount, min_to, max_to, max_discards)
        hand.act(ActionKind.RAISE, 10, seat=la.seat)  # IllegalAction(reason, message) if not legal
    hand.results()        # {seat: net chips}
    hand.events           # typed events (events.py), in order
    hand.pots()           # [Pot(amount, members=seats)]

* Seats need not be contiguous; dealing order starts left of the button (``button`` need
  not be dealt in: dead button). Heads-up the button posts the small blind and acts first
  pre-flop, last afterwards.
* ``forced_bets``: explicit list of ``ForcedBet(seat, kind, amount)`` — SMALL_BLIND,
  BIG_BLIND (live), DEAD_BLIND (dead money: in the pot, not part of the bet), ANTE,
  STRADDLE. The first BIG_BLIND listed is the regular big blind: pre-flop action starts
  left of it. Stud's bring-in is the first action of the hand (``BRING_IN`` or
  ``COMPLETE``), not a forced bet.
* Amounts of BET/RAISE/COMPLETE are *to* amounts (the player's total bet in the round).
* Rake: ``rake(hand, total_pot)`` is called once before the pots are awarded
  (``hand.rake_eligible()`` tells no-flop-no-drop: flop dealt / draw made / 4th street
  in Stud / 3rd card in Soko; ``StreetStarted`` events also mark each street).
* Errors: :class:`IllegalAction` with ``.reason`` (:class:`Reason`) and ``.message``; the
  state is unchanged.

Modules: ``spec`` (games, structures, stakes, streets), ``hand`` (state machine and
betting rules), ``pots`` (side pots, odd-chip split), ``showdown``, ``dealing`` (card
sources, draw reshuffle), ``events``, ``actions``, ``errors``.
"""

from cardroom.core.engine.actions import ActionKind, LegalActions
from cardroom.core.engine.dealing import CardSource, DeckSource, ScriptedSource
from cardroom.core.engine.errors import IllegalAction, Reason
from cardroom.core.engine.events import (
    ActionTaken, BetReturned, BoardDealt, CardsDealt, DrawMade, Event, ForcedBet,
    ForcedBetPosted, ForcedKind, HandEnded, HandMucked, HandShown, PotAwarded, StreetStarted,
    StubReshuffled,
)
from cardroom.core.engine.hand import Hand, Options, SeatIn
from cardroom.core.engine.pots import Pot, build_pots, split
from cardroom.core.engine.spec import (
    SPECS, Game, GameSpec, Opening, Stakes, Street, Structure, Variant, default_stakes,
)

__all__ = [
    "ActionKind", "ActionTaken", "BetReturned", "BoardDealt", "CardSource", "CardsDealt",
    "DeckSource", "DrawMade", "Event", "ForcedBet", "ForcedBetPosted", "ForcedKind", "Game",
    "GameSpec", "Hand", "HandEnded", "HandMucked", "HandShown", "IllegalAction", "LegalActions",
    "Opening", "Options", "Pot", "PotAwarded", "Reason", "SPECS", "ScriptedSource", "SeatIn",
    "Stakes", "Street", "StreetStarted", "Structure", "StubReshuffled", "Variant",
    "build_pots", "default_stakes", "split",
]
