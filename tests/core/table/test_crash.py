"""Server crash (rules/003 'Server Crash', rules/000 tournaments)."""

from cardroom.core.table.crash import recover_from_crash
from cardroom.core.table.settings import GameKind

PLAYERS = {1: "ann", 4: "bob", 6: "cy"}
START = {1: 1000, 4: 500, 6: 800}
AT_CRASH = {1: 900, 4: 300, 6: 800}


def test_cash_games_are_cancelled_and_all_the_chips_in_the_pot_returned_to_the_players() -> None:
    """rules/003: 'All games ... cancelled and all the chips in the pot returned to the players
    who participated' and 'money returned to their player accounts'."""
    r = recover_from_crash(GameKind.CASH, PLAYERS, START, AT_CRASH)
    assert r.stacks == START
    assert r.refunds == {1: 100, 4: 200, 6: 0}
    assert r.to_accounts == {"ann": 1000, "bob": 500, "cy": 800}
    assert r.close_table and not r.replay_hand
    assert sum(r.to_accounts.values()) == sum(AT_CRASH.values()) + sum(r.refunds.values())


def test_tournament_hands_in_progress_are_restored_by_rolling_back() -> None:
    """rules/000: 'Each player's chip count will be reset to the amount at the beginning of the hand'."""
    r = recover_from_crash(GameKind.TOURNAMENT, PLAYERS, START, AT_CRASH)
    assert r.stacks == START
    assert r.to_accounts == {}
    assert r.replay_hand and not r.close_table
