"""Action clock, extra time, timeouts and the artificial all-in (rules/000, 002, 003)."""

import pytest

from cardroom.core.engine.spec import Structure
from cardroom.core.table.clock import TimeoutContext, TimeoutDecision, TurnClock, timeout_decision
from cardroom.core.table.disconnect import DAY_SECONDS, AllInAllowance
from cardroom.core.table.settings import GameKind

CASH, TOURNEY = GameKind.CASH, GameKind.TOURNAMENT
FL, SL, PL, NL = Structure.FIXED_LIMIT, Structure.SPREAD_LIMIT, Structure.POT_LIMIT, Structure.NO_LIMIT


def ctx(**kw: object) -> TimeoutContext:
    base: dict[str, object] = dict(kind=CASH, structure=FL, connected=True, money_in_pot=False, can_check=False)
    base.update(kw)
    return TimeoutContext(**base)  # type: ignore[arg-type]


def test_if_a_player_times_out_his_hand_will_be_folded_unless_the_check_option_is_available() -> None:
    """rules/000 'Disconnects': auto check if possible, otherwise fold."""
    assert timeout_decision(ctx(can_check=True)) is TimeoutDecision.CHECK
    assert timeout_decision(ctx(can_check=False)) is TimeoutDecision.FOLD
    assert timeout_decision(ctx(kind=TOURNEY, connected=False, can_check=True)) is TimeoutDecision.CHECK


def test_if_he_fails_to_draw_in_time_he_will_stand_pat() -> None:
    """rules/003 5-Card Draw / 2-7: 'he will stand pat (draw 0 cards)'."""
    assert timeout_decision(ctx(is_draw=True)) is TimeoutDecision.STAND_PAT


def test_if_a_player_loses_his_connection_during_the_drawing_the_draw_is_handled_automatically() -> None:
    """rules/001 'Lost connection'."""
    assert timeout_decision(ctx(is_draw=True, connected=False)) is TimeoutDecision.AUTO_DRAW


def test_a_disconnected_player_who_has_put_money_in_the_pot_is_treated_as_all_in() -> None:
    """rules/003 'Artificial All-In' (Fixed and Spread Limit cash games, allowance left)."""
    for structure in (FL, SL):
        assert (
            timeout_decision(ctx(structure=structure, connected=False, money_in_pot=True, all_ins_left=1))
            is TimeoutDecision.ARTIFICIAL_ALL_IN
        )


def test_a_disconnected_player_who_can_check_checks_and_keeps_his_all_in() -> None:
    """rules/000 'the player will auto check'; the artificial all-in is for facing a bet."""
    assert (
        timeout_decision(ctx(connected=False, money_in_pot=True, all_ins_left=2, can_check=True))
        is TimeoutDecision.CHECK
    )


def test_the_bring_in_is_posted_for_a_player_who_does_not_act() -> None:
    """rules/003 Stud 'Bring-in': a forced bet."""
    assert timeout_decision(ctx(bring_in_due=True, connected=False)) is TimeoutDecision.BRING_IN


def test_if_not_put_money_into_the_pot_his_hand_will_be_folded() -> None:
    """rules/003 'Artificial All-In': '(if not his hand will be folded)'."""
    assert timeout_decision(ctx(connected=False, money_in_pot=False, all_ins_left=2)) is TimeoutDecision.FOLD


@pytest.mark.parametrize("structure", [PL, NL, Structure.HALF_POT_LIMIT])
def test_artificial_all_in_is_not_possible_in_pl_half_pl_and_nl_games(structure: Structure) -> None:
    """rules/003: 'only possible ... in Fixed Limit and Spread Limit games, not in PL, 1/2PL and NL'."""
    assert (
        timeout_decision(ctx(structure=structure, connected=False, money_in_pot=True, all_ins_left=2))
        is TimeoutDecision.FOLD
    )


def test_artificial_all_in_only_in_cash_games() -> None:
    """rules/003: '... and only in cash games'."""
    assert (
        timeout_decision(ctx(kind=TOURNEY, connected=False, money_in_pot=True, all_ins_left=2)) is TimeoutDecision.FOLD
    )


def test_when_all_ins_have_been_used_your_hand_may_be_folded_during_a_disconnect() -> None:
    """rules/002 'All-Ins': with no allowance left the hand is folded."""
    assert timeout_decision(ctx(connected=False, money_in_pot=True, all_ins_left=0)) is TimeoutDecision.FOLD


def test_if_we_determine_that_you_are_connected_your_hand_will_be_folded() -> None:
    """rules/002: a connected player who does not act is not made all-in."""
    assert timeout_decision(ctx(connected=True, money_in_pot=True, all_ins_left=2)) is TimeoutDecision.FOLD


def test_extra_time_is_activated_if_connected_with_money_in_the_pot_and_not_acting_in_time() -> None:
    """rules/000 'Extra time'."""
    assert timeout_decision(ctx(kind=TOURNEY, money_in_pot=True, time_bank_left=30.0)) is TimeoutDecision.USE_TIME_BANK
    assert timeout_decision(ctx(kind=TOURNEY, money_in_pot=False, time_bank_left=30.0)) is TimeoutDecision.FOLD
    assert (
        timeout_decision(ctx(kind=TOURNEY, connected=False, money_in_pot=True, time_bank_left=30.0))
        is TimeoutDecision.FOLD
    )


def test_turn_clock_deadline_and_extra_time() -> None:
    """rules/003 'Each player have 30 seconds to draw cards' (a clock per turn)."""
    clock = TurnClock(seat=3, started=100.0, seconds=30.0)
    assert not clock.expired(129.9)
    assert clock.expired(130.0)
    extended = clock.with_time_bank(20.0)
    assert not extended.expired(149.0) and extended.expired(150.0)


def test_two_all_ins_allowed_in_a_24_hour_period() -> None:
    """rules/002: 'TWO (2) all ins allowed in a 24 hour period' (rolling 24 hours)."""
    allowance = AllInAllowance()
    assert allowance.left("ann", 0.0) == 2
    allowance.use("ann", 0.0)
    allowance.use("ann", 3600.0)
    assert allowance.left("ann", 3601.0) == 0
    with pytest.raises(ValueError):
        allowance.use("ann", 3602.0)
    assert allowance.left("ann", DAY_SECONDS) == 1  # the first use expired
    assert allowance.left("ann", DAY_SECONDS + 3600.0) == 2
    assert allowance.left("bob", 0.0) == 2
    # asked at every turn: a player without a use in the window is not kept (it grew by one per player seen)
    assert allowance.uses == {}


def test_you_can_ask_to_have_this_account_reset() -> None:
    """rules/002: an operator resets the all-in allowance."""
    allowance = AllInAllowance(per_day=1)
    allowance.use("ann", 10.0)
    assert allowance.left("ann", 20.0) == 0
    allowance.reset("ann")
    assert allowance.left("ann", 20.0) == 1
