"""``cardroom bench engine``: random-action 6-max No-Limit Hold'em hands per second.

Ours (``cardroom.core.engine.Hand``, full validation, events, side pots and showdown) next
to pokerkit's ``NoLimitTexasHoldem`` with the usual automations, measured in this run on one
core. Both play the same kind of hand: 6 players, blinds 1/2, 200-chip stacks, a uniformly
random legal action kind, a uniform amount between the minimum and maximum raise. Issue 4
goal: >= 20x pokerkit. Figures are CPU time (``time.process_time``) of this process, best
of three interleaved runs, so other load on the machine disturbs them little; no
assertions (not a test).
"""

from __future__ import annotations

import argparse
import random
import time


def _ours(hands: int, seed: int) -> float:
    from cardroom.core.engine import Options, Stakes, Variant
    from cardroom.core.engine.simulation import random_hand

    variant = Variant.parse("NT")
    stakes = Stakes.blinds(1, 2)
    options = Options(describe=False)
    rng = random.Random(seed)
    stacks = [200] * 6
    t = time.process_time()
    for _ in range(hands):
        random_hand(variant, 6, rng, stakes=stakes, stacks=stacks, options=options)
    return hands / (time.process_time() - t)


def _pokerkit(hands: int, seed: int) -> float:
    import pokerkit as pk

    automations = (
        pk.Automation.ANTE_POSTING,
        pk.Automation.BET_COLLECTION,
        pk.Automation.BLIND_OR_STRADDLE_POSTING,
        pk.Automation.CARD_BURNING,
        pk.Automation.RUNOUT_COUNT_SELECTION,
        pk.Automation.HOLE_DEALING,
        pk.Automation.BOARD_DEALING,
        pk.Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
        pk.Automation.HAND_KILLING,
        pk.Automation.CHIPS_PUSHING,
        pk.Automation.CHIPS_PULLING,
    )
    game = pk.NoLimitTexasHoldem(automations, False, 0, (1, 2), 2, mode=pk.Mode.CASH_GAME)
    rng = random.Random(seed)
    random.seed(seed)
    t = time.process_time()
    for _ in range(hands):
        state = game([200] * 6, 6)
        while state.status:
            options = []
            if state.checking_or_calling_amount and state.can_fold():
                options.append(0)
            if state.can_check_or_call():
                options.append(1)
            if state.can_complete_bet_or_raise_to():
                options.append(2)
            choice = options[int(rng.random() * len(options))]
            if choice == 0:
                state.fold()
            elif choice == 1:
                state.check_or_call()
            else:
                lo = state.min_completion_betting_or_raising_to_amount
                hi = state.max_completion_betting_or_raising_to_amount
                assert lo is not None and hi is not None  # can_complete_bet_or_raise_to() above
                state.complete_bet_or_raise_to(lo + int(rng.random() * (hi - lo + 1)))
    return hands / (time.process_time() - t)


def run(args: argparse.Namespace) -> None:
    quick = bool(getattr(args, "quick", False))
    n_ours, n_pk = (300, 60) if quick else (5000, 600)
    import cardroom.core.evaluation  # noqa: F401  (table build is not part of the figure)

    _ours(50, 0)
    _pokerkit(10, 0)
    ours = theirs = 0.0
    for seed in (1, 2, 3):  # interleaved, best of three: load changes hit both alike
        ours = max(ours, _ours(n_ours, seed))
        theirs = max(theirs, _pokerkit(n_pk, seed))
    print(
        f"random-action 6-max NLHE, one core: ours {ours:,.0f} hands/s   pokerkit {theirs:,.0f} hands/s"
        f"   ratio {ours / theirs:.1f}x (goal >= 20x)"
    )
