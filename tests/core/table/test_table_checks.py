"""Check-only table commands: ``can_x`` / ``verify_x`` answer "may this player do x now, and
why not" with a :class:`Reason`, agree with what ``x`` itself accepts, and change nothing."""

from __future__ import annotations

import pytest

from cardroom.core.cards import DECK
from cardroom.core.engine import ActionKind, Game, Reason, Stakes, Structure
from cardroom.core.table.buyin import buy_in_limits
from cardroom.core.table.settings import TableSettings
from cardroom.core.table.table import Table, TableError

A = ActionKind


def table(seats: int = 3) -> Table:
    settings = TableSettings(Game.HOLDEM, Structure.NO_LIMIT, seat_count=seats)
    return Table(settings, Stakes.blinds(100, 200), buy_in=buy_in_limits(Structure.NO_LIMIT, 100, 200))


def refusal(check, *args) -> Reason | None:  # type: ignore[no-untyped-def]
    try:
        check(*args)
    except TableError as exc:
        assert exc.reason is not None, exc
        return exc.reason
    return None


def test_sit_down_refusals_name_their_reason() -> None:
    """rules/003 'Buy-in': 'There is a minimum buy-in at each table and on the PL and NL tables
    there is also a maximum buy-in.'"""
    t = table(seats=2)
    t.sit_down(1, "ann", 4000)
    cases = [
        (("ann", 4000, None), Reason.ALREADY_SEATED),
        (("bob", 4000, 3), Reason.SEAT_OUT_OF_RANGE),
        (("bob", 4000, -1), Reason.SEAT_OUT_OF_RANGE),
        (("bob", 4000, 1), Reason.SEAT_TAKEN),
        (("bob", 0, None), Reason.AMOUNT_NOT_POSITIVE),
        (("bob", 1999, None), Reason.BUY_IN_BELOW_MINIMUM),
        (("bob", 20001, 2), Reason.BUY_IN_ABOVE_MAXIMUM),
    ]
    for args, reason in cases:
        assert refusal(t.verify_sit_down, *args) is reason, args
        assert not t.can_sit_down(*args)
    assert t.can_sit_down("bob", 2000) and t.can_sit_down("bob", 2000, 2)
    assert t.free_seat() == 2
    t.sit_down(2, "bob", 2000)
    assert refusal(t.verify_sit_down, "cat", 2000, None) is Reason.TABLE_FULL
    assert t.free_seat() is None
    t.closed = True
    assert refusal(t.verify_sit_down, "cat", 2000, None) is Reason.TABLE_CLOSED


def test_what_verify_accepts_the_command_accepts_and_what_it_refuses_the_command_refuses() -> None:
    for player, chips, seat in (("ann", 4000, 1), ("bob", 100, 2), ("bob", 3000, 5), ("ann", 3000, 2)):
        t = table()
        t.sit_down(1, "ann", 4000) if player != "ann" or seat != 1 else None
        ok = t.can_sit_down(player, chips, seat)
        try:
            t.sit_down(seat, player, chips)
            accepted = True
        except TableError:
            accepted = False
        assert ok == accepted, (player, chips, seat)


def test_chips_are_added_between_hands_only_and_up_to_the_maximum() -> None:
    """rules/002 'Table Stakes': 'You can increase your "table stake" at any time in between
    hands. NEVER DURING A HAND.'"""
    t = table()
    t.sit_down(1, "ann", 4000)
    t.sit_down(2, "bob", 4000)
    t.sit_down(3, "cat", 4000)
    t.sit_out(3)
    assert refusal(t.verify_add_chips, 4, 100) is Reason.SEAT_EMPTY
    assert refusal(t.verify_add_chips, 1, 0) is Reason.AMOUNT_NOT_POSITIVE
    assert refusal(t.verify_add_chips, 1, 16001) is Reason.BUY_IN_ABOVE_MAXIMUM
    assert t.can_add_chips(1, 16000)
    t.start_hand(list(DECK))
    assert refusal(t.verify_add_chips, 1, 100) is Reason.IN_HAND
    with pytest.raises(TableError):
        t.add_chips(1, 100)
    assert t.can_add_chips(3, 100)  # not dealt into this hand: he may
    before = t.stack(1)
    assert not t.can_add_chips(1, 100) and t.stack(1) == before  # a check changes nothing


def test_sit_out_come_back_and_stand_up() -> None:
    """rules/000 'Disconnects': 'Players can choose to sit out on there own'."""
    t = table()
    t.sit_down(1, "ann", 4000)
    t.sit_down(2, "bob", 4000)
    assert refusal(t.verify_sit_out, 3) is Reason.SEAT_EMPTY
    assert refusal(t.verify_stand_up, 3) is Reason.SEAT_EMPTY
    assert refusal(t.verify_come_back, 1) is Reason.NOT_SITTING_OUT
    t.start_hand(list(DECK))
    assert t.can_sit_out(1)
    t.sit_out(1)  # from the end of the hand
    assert t.can_come_back(1)  # queued sit-out: he may change his mind
    t.come_back(1)
    assert refusal(t.verify_come_back, 1) is Reason.NOT_SITTING_OUT
    assert t.can_stand_up(2)
    t.closed = True
    assert refusal(t.verify_sit_out, 1) is Reason.TABLE_CLOSED


def test_act_checks_the_turn_and_the_legal_actions() -> None:
    t = table()
    assert refusal(t.verify_act, 1, A.CALL) is Reason.NO_HAND_IN_PROGRESS
    t.sit_down(1, "ann", 4000)
    t.sit_down(2, "bob", 4000)
    t.start_hand(list(DECK))
    la = t.legal_actions()
    assert la is not None
    other = 1 if la.seat == 2 else 2
    assert refusal(t.verify_act, other, A.CALL) is Reason.OUT_OF_TURN
    assert refusal(t.verify_act, la.seat, A.CHECK) is Reason.NOT_LEGAL_NOW  # facing the big blind
    assert t.can_act(la.seat, A.CALL) and A.CALL in la.kinds
