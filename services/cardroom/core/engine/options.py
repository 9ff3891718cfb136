"""Rule settings of a hand where the house rules leave a choice (defaults: casino standard)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Options:
    """Rule settings where the house rules leave a choice (defaults: casino standard).

    ``open_fold``: a player may fold even when he could check (rules/002 'A player always
    has the option to fold'); pokerkit forbids it. ``odd_chip_one_each``: each pot is split
    on its own and, with several odd chips, each goes to one winner from the button's left
    (rules/000); False is pokerkit's way: all odd chips to the first winner, and pots whose
    contenders coincide once losing hands are discarded are merged before splitting.
    ``burn``: burn a card before each later street. ``stud_double_on_open_pair``: fixed-limit
    Stud, 4th street, an open pair allows the double (big) bet (rules/003 'Special rules';
    pokerkit has no such rule). ``describe``: hand descriptions in ``HandShown`` (off in
    benchmarks). ``muck_losers``: at showdown a hand that wins nothing is mucked instead of
    shown (the first hand always shows).

    ``full_big_blind_when_short``: a big blind all-in for less than the full blind does not
    lower the price: calling costs the full big blind and the minimum raise is counted from
    it (the casino rule, rules/000: "it would cost a minimum of $5 [the blind] for the player
    who acts first to call"). False is pokerkit's way: the short blind is the price to call
    and the basis of the minimum raise.
    """

    open_fold: bool = True
    odd_chip_one_each: bool = True
    burn: bool = True
    stud_double_on_open_pair: bool = True
    describe: bool = True
    muck_losers: bool = True
    full_big_blind_when_short: bool = True
    stud_open_pair_big_bet_mandatory: bool = False
    """With ``stud_double_on_open_pair``: the open-pair bet on 4th street *is* the big bet
    (rules/000: "if there is a face up pair then the amount is the big bet") instead of the
    default choice of the small or the big bet (rules/001: "he has the option of betting the
    full amount"; rules/003: "it is possible to bet/raise double the limit")."""
