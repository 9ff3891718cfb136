"""Automatic draw on a lost connection (rules/001 'Lost connection')."""

import pytest

from cardroom.core.cards import parse_cards
from cardroom.core.table.autodraw import AutoDrawRule, auto_draw, lowball_auto_draw


@pytest.mark.parametrize(
    "hand,rule,keep",
    [
        ("Ah Ad Kc Ks 2d", AutoDrawRule.TWO_PAIR_OR_BETTER, "Ah Ad Kc Ks"),
        ("7h 7d 7c Ks 2d", AutoDrawRule.TWO_PAIR_OR_BETTER, "7h 7d 7c"),
        ("7h 7d 7c 7s 2d", AutoDrawRule.TWO_PAIR_OR_BETTER, "7h 7d 7c 7s"),
        ("7h 7d 7c 2s 2d", AutoDrawRule.TWO_PAIR_OR_BETTER, "7h 7d 7c 2s 2d"),
        ("9h Td Jc Qs Kd", AutoDrawRule.TWO_PAIR_OR_BETTER, "9h Td Jc Qs Kd"),
        ("Ah 2d 3c 4s 5d", AutoDrawRule.TWO_PAIR_OR_BETTER, "Ah 2d 3c 4s 5d"),
        ("2h 7h 9h Jh Kh", AutoDrawRule.TWO_PAIR_OR_BETTER, "2h 7h 9h Jh Kh"),
        ("Ks Qs Js Ts 2d", AutoDrawRule.OPEN_ROYAL_FLUSH_DRAW, "Ks Qs Js Ts"),
        ("Ks Qs Js Ts Td", AutoDrawRule.OPEN_ROYAL_FLUSH_DRAW, "Ks Qs Js Ts"),
        ("Jh Jd 2h 5h 9h", AutoDrawRule.HIGH_PAIR, "Jh Jd"),
        ("Ah Ad 2h 5h 9h", AutoDrawRule.HIGH_PAIR, "Ah Ad"),
        ("Th Td 2h 5h 9h", AutoDrawRule.FLUSH_DRAW, "Th 2h 5h 9h"),
        ("5h 6h 7h 8h Kd", AutoDrawRule.FLUSH_DRAW, "5h 6h 7h 8h"),
        ("Th Td 2c 5h 9s", AutoDrawRule.LOW_PAIR, "Th Td"),
        ("2h 2d 3c 4s 5d", AutoDrawRule.LOW_PAIR, "2h 2d"),
        ("5h 6d 7c 8s Kd", AutoDrawRule.OPEN_STRAIGHT_DRAW, "5h 6d 7c 8s"),
        ("2h 3d 4c 5s Kd", AutoDrawRule.OPEN_STRAIGHT_DRAW, "2h 3d 4c 5s"),
        ("Th Jd Qc Ks 3d", AutoDrawRule.OPEN_STRAIGHT_DRAW, "Th Jd Qc Ks"),
        ("5h 6d 8c 9s Kd", AutoDrawRule.GUT_STRAIGHT_DRAW, "5h 6d 8c 9s"),
        ("Ah 2d 3c 4s 9d", AutoDrawRule.GUT_STRAIGHT_DRAW, "Ah 2d 3c 4s"),
        ("Jh Qd Kc As 3d", AutoDrawRule.GUT_STRAIGHT_DRAW, "Jh Qd Kc As"),
        ("Ah 3d 7c 9s Qd", AutoDrawRule.HIGH_CARD, "Ah Qd"),
        ("2h 4d 7c 9s Jd", AutoDrawRule.HIGH_CARD, "Jd"),
        ("2h 4d 7c 9s Td", AutoDrawRule.NOTHING, ""),
    ],
)
def test_cards_are_kept_according_to_how_the_hand_matches_the_following_rules(
    hand: str, rule: AutoDrawRule, keep: str
) -> None:
    """rules/001 'Lost connection': the priority list, first match decides."""
    cards = parse_cards(hand)
    result = auto_draw(cards)
    assert result.rule is rule
    assert set(result.keep) == set(parse_cards(keep)) if keep else result.keep == ()
    assert set(result.keep) | set(result.discard) == set(cards)
    assert not set(result.keep) & set(result.discard)


def test_lowball_auto_draw_keeps_unpaired_cards_up_to_eight() -> None:
    """2-7 Triple Draw (documented choice): keep unpaired 2..8, break a straight or flush."""
    assert set(lowball_auto_draw(parse_cards("2h 3d 7c 7s Kd")).keep) == set(parse_cards("2h 3d 7c"))
    assert set(lowball_auto_draw(parse_cards("2h 3d 4c 5s 6d")).keep) == set(parse_cards("2h 3d 4c 5s"))
    assert lowball_auto_draw(parse_cards("2h 3d 4c 5s 7d")).discard == ()
    assert lowball_auto_draw(parse_cards("9h Td Jc Qs Kd")).keep == ()


def test_auto_draw_needs_five_distinct_cards() -> None:
    with pytest.raises(ValueError):
        auto_draw(parse_cards("Ah Ah Kd Qs Jc"))
