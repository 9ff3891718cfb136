"""The one exception the engine raises for illegal input, with a machine-readable reason."""

from __future__ import annotations

from enum import Enum, unique


@unique
class Reason(Enum):
    """Why an action (or a hand set-up) was rejected."""

    HAND_OVER = "hand_over"
    OUT_OF_TURN = "out_of_turn"
    NOT_LEGAL_NOW = "not_legal_now"  # e.g. check facing a bet, bet when there is a bet
    AMOUNT_REQUIRED = "amount_required"
    AMOUNT_BELOW_MINIMUM = "amount_below_minimum"
    AMOUNT_ABOVE_MAXIMUM = "amount_above_maximum"
    WRONG_LIMIT_AMOUNT = "wrong_limit_amount"  # fixed limit: only one amount is legal
    CAPPED = "capped"  # raise after the cap
    RAISE_NOT_REOPENED = "raise_not_reopened"  # short all-in did not reopen the betting
    TOO_MANY_DISCARDS = "too_many_discards"
    CARD_NOT_HELD = "card_not_held"
    DUPLICATE_CARD = "duplicate_card"
    NO_MONEY_IN_POT = "no_money_in_pot"  # artificial all-in of a player with nothing in the pot
    NOT_WHOLE_CHIPS = "not_whole_chips"  # a bet that is not a whole number of the table's chips
    BAD_SETUP = "bad_setup"  # constructor arguments make no hand
    # table commands (cardroom.core.table.Table.verify_*): may this player do X now?
    TABLE_CLOSED = "table_closed"
    SEAT_OUT_OF_RANGE = "seat_out_of_range"  # no such seat at this table
    SEAT_TAKEN = "seat_taken"
    SEAT_EMPTY = "seat_empty"  # nobody sits there
    ALREADY_SEATED = "already_seated"  # one seat per player per table
    TABLE_FULL = "table_full"
    AMOUNT_NOT_POSITIVE = "amount_not_positive"  # a buy-in / chips added must be positive
    BUY_IN_BELOW_MINIMUM = "buy_in_below_minimum"
    BUY_IN_ABOVE_MAXIMUM = "buy_in_above_maximum"  # also a stack after adding chips
    IN_HAND = "in_hand"  # only between hands (rules/002 'NEVER DURING A HAND')
    NOT_SITTING_OUT = "not_sitting_out"
    NO_HAND_IN_PROGRESS = "no_hand_in_progress"


class IllegalAction(Exception):
    """An action or set-up the rules forbid; the hand's state is left unchanged."""

    def __init__(self, reason: Reason, message: str) -> None:
        super().__init__(f"{reason.value}: {message}")
        self.reason = reason
        self.message = message
