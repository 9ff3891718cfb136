"""The hand engine: one hand of any game in the house rules, deterministic and pure.

API (for the table layer)::

    from cardroom.core.engine import (Hand, SeatIn, Variant, Game, Structure, Stakes,
                                      ForcedBet, ForcedKind, ActionKind, Options)

    hand = Hand(
        Variant(Game.HOLDEM, Structure.NO_LIMIT),    # or Variant.parse("NT"), "FO/8", "F7S", "F2L3D", "FSK"
        Stakes.blinds(1, 2),                          # Stakes.limit(4): $4-$8, blinds 2/4; Stakes.for_stud(10)
        [SeatIn(seat=1, player="ann", stack=200), SeatIn(4, "bob", 150), ...],
        button=4,                                     # Stud/Soko: None (dealer box before the lowest seat)
                                                      # or the box seat
        deck=deck_order,                              # the 52 Cards in dealing order (index 0 first), or a CardSource
        forced_bets=None,                             # None: standard blinds (and Stakes.ante) from the button
        rake=None,                                    # fn(hand, total_pot) -> chips, or a fixed chip amount
        options=Options(),                            # rule settings (see options.Options)
        reshuffle_seed=0,                             # draw games: seed of the stub reshuffle
        bring_in_seat=None,                           # Stud/Soko replays: the record's own bring-in
    )
    while not hand.is_over:
        la = hand.legal_actions()    # LegalActions(seat, kinds, call_amount, min_to, max_to, max_discards, ordered)
        hand.act(ActionKind.RAISE, 10, seat=la.seat)  # IllegalAction(reason, message) if not legal
        # also: hand.fold(), check(), call(), check_or_call(), bet_or_raise_to(n), draw(cards)
        # and hand.artificial_all_in(seat): a disconnected player treated as all-in (below),
        # hand.muck_at_showdown(seat): he mucks instead of showing (rules/000 "anyone else can fold")
    hand.results()        # {seat: net chips}; hand.stacks (dealing order), hand.stack(seat)
    hand.events           # typed events (events.py), in order
    hand.pots()           # [Pot(amount, members=seats)] (current; hand.pots_awarded at the end)

Queries: ``actor_seat`` (whose turn; None when over), ``street_index``/``street_name``,
``board``, ``hole_cards(seat)``, ``up_cards(seat)``, ``stack(seat)``, ``bet(seat)``,
``is_folded(seat)``, ``is_all_in(seat)``, ``pot_total``, ``flop_dealt``,
``draws_made``, ``set_aside(seat)``, ``artificial_all_in_seats``, ``rake_eligible()`` (no flop,
no drop: a flop in Hold'em/Omaha, a draw in draw games, 4th street in Stud, the 3rd card in Soko),
``rake_taken``, ``showdown_order``.

* Seats need not be contiguous; dealing order starts left of the button (``button`` need
  not be dealt in: dead button). Heads-up the button posts the small blind and acts first
  pre-flop, last afterwards.
* ``forced_bets``: explicit list of ``ForcedBet(seat, kind, amount)`` — SMALL_BLIND,
  BIG_BLIND (live), DEAD_BLIND (dead money: in the main pot, not part of the bet), ANTE
  (every player's, his own contribution), DEAD_ANTE (a big-blind or button ante: dead money
  in the main pot; the defaults post ``Stakes.big_blind_ante`` / ``button_ante`` so),
  STRADDLE (live; pre-flop action starts left of the last straddle). Dead money is
  ``hand.dead`` (per position) and is never paid back to its poster as a pot of his own.
  A big blind all in for less than the blind still makes the full blind the price to call
  and the minimum-raise basis (``Options.full_big_blind_when_short``). The first BIG_BLIND
  listed is the regular big blind: pre-flop action starts left of it; a new player's or a
  returning player's big blind is a second BIG_BLIND (live), a missed small blind a DEAD_BLIND.
  Antes and dead money are posted first; a short stack posts what it has (all-in). Stud's
  bring-in is the first action of the hand (``BRING_IN`` or ``COMPLETE``), not a forced bet.
* Amounts of BET/RAISE/COMPLETE are *to* amounts (the player's total bet in the round), in
  whole ``Stakes.chip``s unless all-in (``Reason.NOT_WHOLE_CHIPS``).
* Rake: ``rake(hand, total_pot)`` is called once before the pots are awarded; the chips are
  taken from the main pot first; ``PotAwarded.rake`` records each pot's part. The engine
  does not decide whether to rake: the table layer's function does (``rake_eligible()``,
  ``StreetStarted``/``DrawMade`` events).
* Artificial all-in (rules/002 'All-Ins' on Internet disconnects, rules/003 'Artificial
  All-In'): ``hand.artificial_all_in(seat)``, legal for the player on turn in a betting
  round (not a draw, not a due bring-in) of a fixed- or spread-limit game when he has put
  chips in the pot this hand (antes and blinds count; ``Reason.NO_MONEY_IN_POT`` otherwise).
  He acts no more and stays in the hand for the pots he contributed to; the rest of the
  betting makes side pots he is not eligible for (an uncalled excess goes back as usual).
  His remaining chips are set aside (``set_aside(seat)``; ``stack(seat)`` is 0 meanwhile)
  and are back in ``stacks`` when the hand ends. Emits :class:`ArtificialAllIn`; the seats
  are in ``artificial_all_in_seats``. The engine does not decide *when* (cash game,
  disconnected, allowance left): the table layer does.
* Errors: :class:`IllegalAction` with ``.reason`` (:class:`Reason`) and ``.message``; the
  state is unchanged.
* PHH export/replay: :mod:`cardroom.core.phh`; random play: :mod:`.simulation`.

Modules: ``spec`` (games, structures, stakes, streets, rule-disagreement settings), ``hand``
(state machine, betting rules), ``options`` (rule settings), ``pots`` (side pots, dead money,
odd-chip split in whole chips), ``showdown`` (the pure settlement ``settle(Contest) ->
Settlement``: order, hi/lo, odd chips, rake, muck), ``dealing`` (card sources, draw
reshuffle), ``events``, ``actions``, ``errors``, ``simulation``.
"""

from cardroom.core.engine.actions import ActionKind, LegalActions
from cardroom.core.engine.dealing import CardSource, DeckSource, ScriptedSource
from cardroom.core.engine.errors import IllegalAction, Reason
from cardroom.core.engine.events import (
    ActionTaken,
    ArtificialAllIn,
    BetReturned,
    BoardDealt,
    CardsDealt,
    DrawMade,
    Event,
    ForcedBet,
    ForcedBetPosted,
    ForcedKind,
    HandEnded,
    HandMucked,
    HandShown,
    PotAwarded,
    StreetStarted,
    StubReshuffled,
)
from cardroom.core.engine.hand import Hand, SeatIn
from cardroom.core.engine.options import Options
from cardroom.core.engine.pots import Pot, build_pots, halve, split
from cardroom.core.engine.showdown import Contest, Settlement, settle
from cardroom.core.engine.spec import (
    SPECS,
    Game,
    GameSpec,
    Opening,
    SmallBlindRule,
    Stakes,
    Street,
    Structure,
    Variant,
    default_stakes,
    spread_maxima,
)

__all__ = [
    "ActionKind",
    "ActionTaken",
    "ArtificialAllIn",
    "BetReturned",
    "BoardDealt",
    "CardSource",
    "CardsDealt",
    "Contest",
    "DeckSource",
    "DrawMade",
    "Event",
    "ForcedBet",
    "ForcedBetPosted",
    "ForcedKind",
    "Game",
    "GameSpec",
    "Hand",
    "HandEnded",
    "HandMucked",
    "HandShown",
    "IllegalAction",
    "LegalActions",
    "Opening",
    "Options",
    "Pot",
    "PotAwarded",
    "Reason",
    "SPECS",
    "ScriptedSource",
    "SeatIn",
    "Settlement",
    "SmallBlindRule",
    "Stakes",
    "Street",
    "StreetStarted",
    "Structure",
    "StubReshuffled",
    "Variant",
    "build_pots",
    "default_stakes",
    "halve",
    "settle",
    "split",
    "spread_maxima",
]
