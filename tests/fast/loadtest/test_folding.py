"""The load test's players fold a share of the times they face a bet (settings.Folding), so that a
6-max table plays a real table's tempo (docs/capacity.md, "A real table's tempo"); the max scenario
keeps the bots' mix."""

from __future__ import annotations

import random

import pytest

from cardroom.client.loadtest.runner import table_tempo
from cardroom.client.loadtest.settings import BOTS_MIX, Folding, LoadSettings, Scenario
from cardroom.client.policy import choose
from cardroom.v1 import dealer_pb2 as d

FACING_A_BET = d.LegalActionsView(
    actions=[d.ACTION_TYPE_FOLD, d.ACTION_TYPE_CALL, d.ACTION_TYPE_RAISE], call_amount=20, min_to=40, max_to=1000
)
CHECK_OR_BET = d.LegalActionsView(
    actions=[d.ACTION_TYPE_FOLD, d.ACTION_TYPE_CHECK, d.ACTION_TYPE_BET], min_to=20, max_to=1000
)


def folds(legal: d.LegalActionsView, share: float | None, n: int = 4000, seed: int = 11) -> float:
    rng = random.Random(seed)
    return sum(choose(legal, rng, [], fold_share=share).action == d.ACTION_TYPE_FOLD for _ in range(n)) / n


def test_facing_a_bet_the_player_folds_the_given_share() -> None:
    assert folds(FACING_A_BET, 0.7) == pytest.approx(0.7, abs=0.03)
    assert folds(FACING_A_BET, 0.0) == 0.0
    assert folds(FACING_A_BET, 1.0) == 1.0


def test_without_a_share_the_bots_mix_folds_by_its_weight() -> None:
    assert folds(FACING_A_BET, None) == pytest.approx(1 / 9, abs=0.02)  # fold 1 : call 6 : raise 2


def test_a_player_who_may_check_never_folds() -> None:
    assert folds(CHECK_OR_BET, 1.0) == 0.0


def test_not_folding_the_player_calls_or_raises_by_the_weights() -> None:
    rng = random.Random(5)
    moves = [choose(FACING_A_BET, rng, [], fold_share=0.5) for _ in range(4000)]
    played = [m for m in moves if m.action != d.ACTION_TYPE_FOLD]
    raises = [m for m in played if m.action == d.ACTION_TYPE_RAISE]
    assert len(raises) / len(played) == pytest.approx(0.25, abs=0.03)  # call 6 : raise 2
    assert all(40 <= m.amount <= 1000 for m in raises)


def test_the_share_depends_on_the_board() -> None:
    folding = Folding(preflop=0.7, later=0.45)
    assert folding.share([]) == 0.7
    assert folding.share(["Ah", "Kd", "2c"]) == 0.45
    assert "70% before the flop, 45% after it" in folding.describe()


@pytest.mark.parametrize("bad", [(-0.1, 0.5), (0.5, 1.5)])
def test_a_share_outside_0_to_1_is_refused(bad: tuple[float, float]) -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        Folding(*bad)


def test_cash_players_fold_and_max_throughput_players_keep_the_bots_mix() -> None:
    cash = LoadSettings(gateway="x", operator_token="t", scenario=Scenario.CASH)
    assert cash.effective_folding() == Folding()
    assert LoadSettings(gateway="x", operator_token="t", scenario=Scenario.MAX).effective_folding() is None
    assert "fold about 1 time in 9" in BOTS_MIX


def test_table_tempo_is_hands_an_hour_per_table_and_actions_a_hand() -> None:
    steady = {"seconds": 60.0, "hands": 50, "actions": 500}
    assert table_tempo(steady, 40) == {"hands_per_hour": 75.0, "actions_per_hand": 10.0}
    assert table_tempo({"seconds": 60.0, "hands": 0, "actions": 0}, 40) == {
        "hands_per_hour": 0.0,
        "actions_per_hand": 0.0,
    }
