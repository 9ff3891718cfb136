"""Random legal play, for simulations, fuzzing and benchmarks.

Randomness is explicit: every function takes a ``random.Random``. The agent picks an action
kind uniformly among the legal kinds, then a uniform amount in [min_to, max_to] (fixed
limit: one of the legal amounts), a uniform number of discards and uniform cards to discard.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from cardroom.core.cards import DECK, Card
from cardroom.core.engine.actions import ActionKind
from cardroom.core.engine.events import ForcedBet
from cardroom.core.engine.hand import Hand, SeatIn
from cardroom.core.engine.options import Options
from cardroom.core.engine.spec import Stakes, Structure, Variant, default_stakes

_AMOUNT_KINDS = (ActionKind.BET, ActionKind.RAISE, ActionKind.COMPLETE)


def shuffled_deck(rng: random.Random) -> list[Card]:
    """A uniformly shuffled deck (Fisher-Yates driven by ``rng.random()``)."""
    deck = list(DECK)
    rand = rng.random
    for i in range(51, 0, -1):
        j = int(rand() * (i + 1))
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def random_action(hand: Hand, rng: random.Random) -> None:
    """Play one uniformly random legal action for the player on turn."""
    la = hand.legal_actions()
    assert la is not None
    kinds = la.ordered or la.in_order()
    kind = kinds[int(rng.random() * len(kinds))] if len(kinds) > 1 else kinds[0]
    if kind is ActionKind.DRAW:
        held = hand.hole_cards(la.seat)
        count = rng.randint(0, la.max_discards)
        hand.act(kind, discards=rng.sample(held, count))
    elif kind in _AMOUNT_KINDS:
        if hand.variant.structure is Structure.FIXED_LIMIT:
            amount = la.min_to if la.min_to == la.max_to else rng.choice((la.min_to, la.max_to))
        else:
            lo = la.min_to
            amount = lo + int(rng.random() * (la.max_to - lo + 1))  # uniform in [lo, max_to]
        hand.act(kind, amount)
    else:
        hand.act(kind)


def random_hand(
    variant: Variant,
    players: int,
    rng: random.Random,
    *,
    stakes: Stakes | None = None,
    stacks: Sequence[int] | None = None,
    button: int | None = None,
    options: Options = Options(),
    forced: Sequence[ForcedBet] | None = None,
) -> Hand:
    """Deal and play one hand with random legal actions; seats 1..players, button on the
    last seat unless given (blind games), stacks uniform in 20..200 big blinds' worth unless
    given; ``forced``: explicit forced bets (default: the stakes' own). The deck order and
    the draw reshuffle seed come from ``rng``."""
    st = stakes or default_stakes(variant)
    unit = st.big_blind or st.small_bet or 1
    if stacks is None:
        stacks = [rng.randint(1, 200) * unit for _ in range(players)]
    deck = shuffled_deck(rng)
    seats = [SeatIn(s + 1, f"p{s + 1}", stacks[s]) for s in range(players)]
    if variant.spec.uses_button:
        btn = players if button is None else button
    else:
        btn = None
    hand = Hand(variant, st, seats, btn, deck, forced, options=options, reshuffle_seed=rng.getrandbits(32))
    while not hand.is_over:
        random_action(hand, rng)
    return hand
