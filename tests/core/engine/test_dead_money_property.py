"""Generated hands with big-blind antes, dead blinds and short blinds (issue 12 acceptance).

Every chip is accounted for, and dead money — rules/003 'Missed blinds': "This money is
considered as "dead" and goes directly to the pot" — is never paid back to its poster as a
pot of his own: it sits in the main pot, which every live player contests.
"""

from __future__ import annotations

import random

import pytest

from cardroom.core.engine import ForcedBet, ForcedKind, Hand, Stakes, Variant, default_stakes
from cardroom.core.engine.simulation import random_hand

BLIND_GAMES = ["NT", "FT", "PO", "FO/8", "N5CD", "F2L3D", "ST", "HT"]
STUD_GAMES = ["F7S", "F7S/8", "FSK", "S7S"]


def _forced(variant: Variant, stakes: Stakes, n: int, rng: random.Random) -> list[ForcedBet] | None:
    seats = list(range(1, n + 1))  # button on seat n: dealing order 1..n
    forced: list[ForcedBet] = []
    if not variant.spec.uses_button:
        forced = [ForcedBet(s, ForcedKind.ANTE, stakes.ante) for s in seats]
        if rng.random() < 0.5:  # one player's ante for the table
            forced.append(ForcedBet(rng.choice(seats), ForcedKind.DEAD_ANTE, max(1, stakes.ante) * 2))
        return forced
    sb, bb = (seats[1], seats[0]) if n == 2 else (seats[0], seats[1])
    forced = [
        ForcedBet(sb, ForcedKind.SMALL_BLIND, stakes.small_blind),
        ForcedBet(bb, ForcedKind.BIG_BLIND, stakes.big_blind),
    ]
    if rng.random() < 0.5:
        forced.append(ForcedBet(bb, ForcedKind.DEAD_ANTE, stakes.big_blind))  # big-blind ante
    if rng.random() < 0.2:
        forced.append(ForcedBet(seats[-1], ForcedKind.DEAD_ANTE, stakes.small_blind))  # button ante
    others = [s for s in seats if s not in (sb, bb)]
    if others and rng.random() < 0.5:  # a returning player: live big blind + dead small blind
        back = rng.choice(others)
        forced += [
            ForcedBet(back, ForcedKind.BIG_BLIND, stakes.big_blind),
            ForcedBet(back, ForcedKind.DEAD_BLIND, stakes.small_blind),
        ]
    return forced


def _check(hand: Hand) -> None:
    start, end = sum(hand.starting_stacks), sum(hand.stacks)
    assert end + hand.rake_taken == start, "chips created or lost"
    assert sum(p.amount for p in hand.pots_awarded) == sum(hand.committed)
    live = [i for i in range(hand.n) if not hand.folded[i]]
    own = [c - d for c, d in zip(hand.committed, hand.dead, strict=True)]
    dead = sum(hand.dead)
    if dead:
        main = hand.pots_awarded[0]
        assert set(main.members) == set(live), "dead money is in the main pot every live player contests"
        assert main.amount >= dead
        # side pots (one-player pots included) hold players' own chips only, never dead money
        assert sum(p.amount for p in hand.pots_awarded[1:]) <= sum(own) - min(own[i] for i in live)
    # a folded player wins only chips above every live player's (the last to fold of those who
    # folded to an all-in player with nothing to call): players' own chips, never dead money
    top_live = max(own[i] for i in live)
    above = sum(max(0, c - top_live) for c in own)
    for i in range(hand.n):
        if hand.folded[i]:
            assert hand.winnings[i] <= above, "a folded player got dead money back"
            if hand.dead[i]:  # his dead money is gone: whatever he won came from others' own chips
                net = hand.stacks[i] - hand.starting_stacks[i]
                assert net == hand.winnings[i] - own[i] - hand.dead[i]


def _sweep(code: str, hands: int, seed: int) -> None:
    variant = Variant.parse(code)
    stakes = default_stakes(variant)
    unit = stakes.big_blind or stakes.small_bet
    rng = random.Random(seed)
    for _ in range(hands):
        n = rng.randint(2, min(6, variant.spec.max_players))
        stacks = [rng.randint(1, 40 * unit) for _ in range(n)]
        if variant.spec.uses_button and rng.random() < 0.5:
            stacks[0 if n == 2 else 1] = rng.randint(1, stakes.big_blind)  # a short big blind
        hand = random_hand(variant, n, rng, stakes=stakes, stacks=stacks, forced=_forced(variant, stakes, n, rng))
        _check(hand)


@pytest.mark.parametrize("code", BLIND_GAMES + STUD_GAMES)
def test_dead_money_and_chip_conservation_fast(code: str) -> None:
    _sweep(code, 150, 12)


@pytest.mark.slow
@pytest.mark.parametrize("code", BLIND_GAMES + STUD_GAMES)
def test_dead_money_and_chip_conservation_thousands_of_hands(code: str) -> None:
    _sweep(code, 3000, 1212)
