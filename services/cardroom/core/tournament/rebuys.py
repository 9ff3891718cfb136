"""Re-buys and the add-on (rules/000 'Re-buy & Add-on Tournament', glossary 'Add-on', 'Re-buy').

* 'These tournaments have a predetermined Re-buy period but generally it is during the first
  hour of play up until the end of the first break' (:func:`rebuy_period_end`).
* 'A Re-buy is permitted during the Re-buy period only when a player's chip count is equal to
  or less than the amount of chips the player had at the start of the tournament'; 'a fixed
  number or unlimited number of Re-buys'; a double re-buy 'will only be offered to a player
  when their chip count is zero' (:func:`rebuy_refusal`).
* 'An Add-on will be available during the first five minute break ... All players that are
  still active ... regardless of how many chips they have' (:func:`add_on_window`,
  :func:`add_on_refusal`; one per player).
* 'There is no additional fee paid by the player when Re-buys and Add-ons are purchased ...
  all Re-buys and Add-ons are added to the tournament prize pool.'
* Chips are added between the player's hands (the table refuses them during his hand).
"""

from __future__ import annotations

from cardroom.core.tournament.config import AddOnRules, RebuyRules
from cardroom.core.tournament.structure import BreakSchedule

HOUR = 3600.0


def rebuy_period_end(rules: RebuyRules | None, breaks: BreakSchedule) -> float:
    """Seconds after the start when the re-buy period closes."""
    if rules is not None and rules.period_seconds is not None:
        return rules.period_seconds
    return breaks.first_break()[1] if breaks.enabled else HOUR


def add_on_window(rules: AddOnRules | None, breaks: BreakSchedule) -> tuple[float, float]:
    """(from, until) seconds after the start: the first break (minute 55 to 60 without breaks)."""
    start, end = breaks.first_break() if breaks.enabled else (HOUR - 300.0, HOUR)
    if rules is not None:
        start = start if rules.from_seconds is None else rules.from_seconds
        end = end if rules.until_seconds is None else rules.until_seconds
    return start, end


def rebuys_left(rules: RebuyRules | None, period_open: bool, used: int, count: int) -> bool:
    if rules is None or not period_open:
        return False
    return rules.max_rebuys is None or used + count <= rules.max_rebuys


def rebuy_refusal(
    rules: RebuyRules | None,
    *,
    period_open: bool,
    in_tournament: bool,
    used: int,
    double: bool,
    chips: int,
    starting_stack: int,
    in_hand: bool,
) -> str | None:
    if rules is None:
        return "this tournament has no re-buys"
    if not period_open:
        return "the re-buy period is over"
    if not in_tournament:
        return "not in the tournament"
    if not rebuys_left(rules, period_open, used, 2 if double else 1):
        return "no re-buys left"
    if chips > starting_stack:
        return f"a re-buy needs {starting_stack} chips or fewer"
    if double and (not rules.double or chips != 0):
        return "a double re-buy is offered only at zero chips"
    if in_hand:
        return "chips are added between hands"
    return None


def add_on_refusal(
    rules: AddOnRules | None, *, window_open: bool, active: bool, used: int, in_hand: bool
) -> str | None:
    if rules is None:
        return "this tournament has no add-on"
    if not window_open:
        return "the add-on is not available now"
    if not active:
        return "not active in the tournament"
    if used:
        return "one add-on per player"
    if in_hand:
        return "chips are added between hands"
    return None


__all__ = ["add_on_refusal", "add_on_window", "rebuy_period_end", "rebuy_refusal", "rebuys_left"]
