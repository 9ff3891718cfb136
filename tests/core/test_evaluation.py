"""Per-hand evaluation: the seed examples and rules of issue 3 / rules/001, rules/003."""

from __future__ import annotations

import pytest

from cardroom.core.cards import Card, parse_cards
from cardroom.core.evaluation import (
    Category,
    Ranking,
    bring_in_key,
    evaluate,
    evaluate_deuce7,
    evaluate_high,
    evaluate_low8,
    evaluate_omaha_high,
    evaluate_omaha_low8,
    evaluate_soko,
    high_value,
    high_value7,
    showing_value,
)


def hv(text: str):
    return evaluate_high(parse_cards(text))


@pytest.mark.parametrize(
    "better, worse",
    [
        ("Qc Qd Qh 6s 6c", "Qc Qd Qs 5h 5c"),  # Q-Q-Q-6-6 > Q-Q-Q-5-5
        ("Kh 7h 5h 3h 2h", "Qs Js Ts 8s 6s"),  # K-high flush > Q-high flush
        ("Ac Ad Kh Ts 6c", "Ah As Qc Jd 5h"),  # A-A-K-T-6 > A-A-Q-J-5
        ("Jc Jd Jh Ac Qd", "Js Jd Jh Ad 9c"),  # J-J-J-A-Q > J-J-J-A-9
        ("5c 4d 3h 2s Ah", "Kc Kd Kh 2c 3d"),  # the wheel is a straight, above trips
        ("6c 5d 4h 3s 2h", "5c 4d 3h 2s Ah"),  # six-high straight beats the wheel
    ],
)
def test_seed_examples_issue3_high(better: str, worse: str) -> None:
    assert hv(better).value > hv(worse).value


def test_seed_example_low_75_beats_84_rules001() -> None:
    """rules/001: "7,5,4,2,A will beat 8,4,3,2,A"."""
    a = evaluate_low8(parse_cards("7c 5d 4h 2s Ah"))
    b = evaluate_low8(parse_cards("8c 4d 3h 2s Ac"))
    assert a is not None and b is not None and a.value > b.value
    assert a.describe() == "7-5-4-2-A low" and b.describe() == "8-4-3-2-A low"


def test_descriptions_and_cards() -> None:
    v = hv("Kh Kd 7s 7c 2d 3h 9c")
    assert v.describe() == "Two Pair, Kings and Sevens"
    assert v.category is Category.TWO_PAIR
    assert [str(c) for c in v.cards] == ["Kh", "Kd", "7s", "7c", "9c"]
    assert hv("Ah Kh Qh Jh Th 2c 3d").describe() == "Royal Flush"
    assert hv("Qs Qh Qd 6c 6h").describe() == "Full House, Queens full of Sixes"
    w = hv("5c 4d 3h 2s Ah 9d 9c")
    assert w.category is Category.STRAIGHT and w.describe() == "Straight, Five High"
    assert [str(c) for c in w.cards] == ["5c", "4d", "3h", "2s", "Ah"]


def test_value_range_and_categories() -> None:
    assert hv("Ah Kh Qh Jh Th").value == 7462
    assert hv("7c 5d 4h 3s 2h").value == 1
    assert hv("2c 2d 2h 2s 3c").category is Category.FOUR_OF_A_KIND
    assert hv("2c 3c 4c 5c 7c").category is Category.FLUSH


def test_fast_paths_agree_with_evaluate_high() -> None:
    import random

    rng = random.Random(3)
    for _ in range(3000):
        n = rng.choice((5, 6, 7))
        idx = rng.sample(range(52), n)
        v = evaluate_high([Card(i) for i in idx]).value
        assert high_value(idx) == v
        if n == 7:
            assert high_value7(*idx) == v


@pytest.mark.parametrize(
    "cards, problem", [("Ah Kh Qh Jh", "count"), ("Ah Kh Qh Jh Th 9h 8h 7h", "count"), ("Ah Ah Qh Jh Th", "duplicate")]
)
def test_bad_input_raises_value_error(cards: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        evaluate_high(parse_cards(cards))


def test_fast_path_bad_index() -> None:
    with pytest.raises(ValueError, match="outside 0..51"):
        high_value([0, 1, 2, 3, 52])
    with pytest.raises(ValueError, match="duplicate"):
        high_value([0, 1, 2, 3, 3])


def test_omaha_two_plus_three_four_flush_on_board_one_suited_hole_is_not_flush_rules003() -> None:
    """rules/003 Omaha: "must use exactly 2 of their 4 hole cards and 3 community cards"."""
    v = evaluate_omaha_high(parse_cards("Ah Kc Qd Js"), parse_cards("2h 5h 8h 9h Tc"))
    assert v.category is not Category.FLUSH
    assert v.category is Category.STRAIGHT  # Q-J + 8-9-T
    w = evaluate_omaha_high(parse_cards("Ah 3h Qd Js"), parse_cards("2h 5h 8h 9h Tc"))
    assert w.category is Category.FLUSH and w.describe() == "Flush, Ace High"
    # board quads cannot play: only three board cards
    q = evaluate_omaha_high(parse_cards("2c 3d 4h 6s"), parse_cards("Ac Ad Ah As Kc"))
    assert q.category is Category.THREE_OF_A_KIND


def test_omaha_low_uses_two_hole_cards_rules003() -> None:
    assert evaluate_omaha_low8(parse_cards("Ac Kd Qh Js"), parse_cards("2c 3d 4h 5s 6c")) is None
    v = evaluate_omaha_low8(parse_cards("Ac 2d Qh Js"), parse_cards("3c 4d 8h Ks 6c"))
    assert v is not None and v.describe() == "6-4-3-2-A low"


def test_low8_qualifier_and_best_worst_rules000() -> None:
    """rules/000: "The straight ace to five is the best ... four to eight being the worse"."""
    best = evaluate_low8(parse_cards("5c 4c 3c 2c Ac"))
    worst = evaluate_low8(parse_cards("8c 7d 6h 5s 4c"))
    assert best is not None and worst is not None and best.value > worst.value > 0
    assert evaluate_low8(parse_cards("9c 7d 6h 5s 4c")) is None
    assert evaluate_low8(parse_cards("Ac Ad 2c 3d 4h 5s Kd")).describe() == "5-4-3-2-A low"


def test_deuce7_rules003() -> None:
    """rules/003: "The best hand is 2-3-4-5-7 ... 2-3-4-5-A is not considered a straight"."""
    best = evaluate_deuce7(parse_cards("7c 5d 4h 3s 2h"))
    wheel = evaluate_deuce7(parse_cards("Ac 5d 4h 3s 2h"))
    six = evaluate_deuce7(parse_cards("6c 5d 4h 3s 2h"))
    flush = evaluate_deuce7(parse_cards("7h 5h 4h 3h 2h"))
    assert wheel.category is Category.HIGH_CARD
    assert six.category is Category.STRAIGHT
    assert best.value > wheel.value > six.value
    assert best.value > flush.value
    assert evaluate_deuce7(parse_cards("8c 5d 4h 3s 2h")).value > evaluate_deuce7(parse_cards("Kc Qd Jh 9s 7h")).value
    assert evaluate_deuce7(parse_cards("Kc Qd Jh 9s 7h")).value > evaluate_deuce7(parse_cards("2c 2d 3h 4s 5h")).value


def test_soko_order_rules003() -> None:
    """rules/003 Soko: two pair > 4-flush > 4-straight > one pair, kickers count."""
    s = lambda t: evaluate_soko(parse_cards(t))  # noqa: E731
    two_pair = s("3c 3d 2h 2s 4c")
    ff = s("2c 5c 9c Jc Kd")
    fs = s("9c Td Jh Qs 2c")
    pair = s("Ac Ad Kh Qs 9c")
    assert two_pair.value > ff.value > fs.value > pair.value
    assert ff.category is Category.FOUR_FLUSH and fs.category is Category.FOUR_STRAIGHT
    assert s("2c 5c 9c Jc Kd").value > s("2c 5c 9c Jc Qd").value  # kicker counts
    assert s("Ac 2d 3h 4s 9c").category is Category.FOUR_STRAIGHT
    assert s("2c 3c 4c 5c 7d").category is Category.FOUR_FLUSH  # 4-flush above 4-straight


def test_stud_showing_and_bring_in_rules003() -> None:
    P = parse_cards
    assert showing_value(P("2c 2d")) > showing_value(P("As Kd"))
    assert showing_value(P("9c 9d 3s")) > showing_value(P("9h 9s 2d"))
    assert showing_value(P("4c 4d 3s 3h")) > showing_value(P("Ac Ad Ks Qh"))
    assert showing_value(P("Ac")) > showing_value(P("Kc"))
    ups = P("2s 2c 3d Ah")
    lowest = max(ups, key=bring_in_key)
    highest = max(ups, key=lambda c: bring_in_key(c, highest=True))
    assert str(lowest) == "2c" and str(highest) == "Ah"
    assert bring_in_key(Card.parse("Ks"), highest=True) > bring_in_key(Card.parse("Kh"), highest=True)


def test_dispatcher() -> None:
    P = parse_cards
    assert evaluate(Ranking.HIGH, P("Ah Kh"), P("Qh Jh Th 2c 3d")).value == 7462
    assert evaluate(Ranking.OMAHA_LOW8, P("Ac 2d Qh Js"), P("3c 4d 8h Ks 6c")) is not None
    assert evaluate(Ranking.LOW8, P("Kc Kd Qh Js Tc")) is None


def test_evaluate_high_matches_card_level_reference() -> None:
    """The table value and the chosen cards agree with the readable reference ``best_high``."""
    import random

    from cardroom.core.evaluation.hands import best_high
    from cardroom.core.evaluation.tables import dense_high

    rng = random.Random(33)
    for _ in range(4000):
        cs = [Card(i) for i in rng.sample(range(52), rng.choice((5, 6, 7)))]
        code, used = best_high(cs)
        v = evaluate_high(cs)
        assert v.value == dense_high(code)
        assert v.cards == tuple(used)
        assert v.category == code >> 20
