"""The lobby's figures of a cash table (issue 18: "the lobby (cash tables by game, stakes, seats,
average pot, hands/hour)"): over the hands finished in the last hour, with the clock an input."""

from __future__ import annotations

from dealer.lobby_stats import LobbyStats


def test_no_hands_no_figures() -> None:
    stats = LobbyStats(opened_at=1000.0)
    assert stats.average_pot(5000.0) == 0 and stats.hands_per_hour(5000.0) == 0


def test_average_pot_is_whole_chips_over_the_last_hour() -> None:
    stats = LobbyStats(opened_at=0.0)
    stats.add_hand(100.0, 30)
    stats.add_hand(200.0, 41)
    assert stats.average_pot(300.0) == 35  # 71 / 2, rounded down: chips are integers
    stats.add_hand(3650.0, 100)
    # the hand at 100 s is more than an hour old at 3700 s: (41 + 100) / 2
    assert stats.average_pot(3700.0) == 70
    assert stats.average_pot(7300.0) == 0  # nothing in the last hour


def test_hands_per_hour_is_a_rate_over_the_time_open_in_the_last_hour() -> None:
    stats = LobbyStats(opened_at=0.0)
    for n in range(1, 11):
        stats.add_hand(60.0 * n, 10)  # one a minute for ten minutes
    assert stats.hands_per_hour(600.0) == 60
    # an hour and a minute and a half after opening: the window is the last hour, 9 of the 10 hands in it
    assert stats.hands_per_hour(3600.0 + 90.0) == 9
    # a table a few seconds old counts as a minute old: one quick hand is not 1200 an hour
    young = LobbyStats(opened_at=0.0)
    young.add_hand(3.0, 10)
    assert young.hands_per_hour(3.0) == 60
